// The agents-by-human index kept in the store with the block it is valid at, on a real anvil of this file's own (it
// reorganises its chain), a real sqlite file and a real redis-server: a restart resumes from the stored checkpoint
// and reads only newer logs; a checkpoint whose block left the chain is not trusted; two instances on one Redis share
// the index with one writer at a time, and a writer paused past its lease cannot overwrite its successor's checkpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { type Address, numberToHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { REORG_WINDOW } from '../../src/chain/registry-events.js';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';
import type { Metrics } from '../../src/metrics.js';
import { bucketEntries, encodeBucket, type IndexBucket } from '../../src/services/human-agent-index.js';
import type { StoredCheckpoint } from '../../src/services/stored-agent-index.js';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { reorgFrom } from '../support/chain-changes.js';
import { deregisterByProof, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import type { TestNetworks } from '../support/registration-flow.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';

const TESTNET = 11142220;

let chain: DevChain;
let system: TestSystem;
let networks: TestNetworks;
const dir = mkdtempSync(join(tmpdir(), 'stored-index-'));
const apps: QueryTestApp[] = [];
const stores: KeyValueStore[] = [];

beforeAll(async () => {
  chain = await startDevChain({ chainId: TESTNET });
  const [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet', chain.rpcUrl)]);
  system = testnet;
  networks = { mainnet, testnet, chains: new ChainGateway({ mainnet: mainnet.gateway, testnet: testnet.gateway }) };
  await setMaxAgentsPerHuman(system, 0n); // a human with several agents
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.stop();
  for (const store of stores) await store.close();
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A service instance over `store`, its followers polling only when told to (syncNow), started unless told not to. */
async function instance(store: KeyValueStore, options: { instanceId?: string; indexLeaseMs?: number; start?: boolean } = {}): Promise<QueryTestApp> {
  const app = await queryTestApp(networks, { store, eventPollIntervalMs: 3_600_000, maxLogRange: 2n, ...options });
  apps.push(app);
  return app;
}

/** `store` with its `name` method replaced by `replacement` (which gets the real one); the rest is the store's own. */
function intercepted<K extends keyof KeyValueStore>(
  store: KeyValueStore,
  name: K,
  replacement: (real: KeyValueStore[K]) => KeyValueStore[K],
): KeyValueStore {
  const real = (store[name] as (...args: unknown[]) => unknown).bind(store) as KeyValueStore[K];
  const replaced = replacement(real);
  return new Proxy(store, {
    get: (target, property) => {
      if (property === name) return replaced;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const checkpointKey = () => `agent-index:testnet:${TESTNET}:${system.deployment.contracts.registry.toLowerCase()}:checkpoint`;
const leaseKey = () => checkpointKey().replace(/checkpoint$/, 'lease');

/** eth_getLogs calls made on the test network so far. */
async function getLogsCalls(metrics: Metrics): Promise<number> {
  const { values } = await metrics.rpcRequests.get();
  return values.find((v) => v.labels.network === 'testnet' && v.labels.method === 'eth_getLogs')?.value ?? 0;
}

async function agentsOf(app: QueryTestApp, human: Address): Promise<number[]> {
  const res = await request(app.app).get(`/api/agent/agents/${TESTNET}/${human}`);
  expect(res.status).toBe(200);
  return res.body.agents;
}

/** Polls to the head and waits for the stored index's write. */
async function synced(app: QueryTestApp): Promise<void> {
  await app.services.queries.syncNow();
  await app.services.queries.storedIndex('testnet')?.idle();
}

describe('on sqlite', () => {
  const file = join(dir, 'service.sqlite');
  const agents: RegisteredAgent[] = [];

  it('a restart resumes from the stored checkpoint: the index as it was, and only newer blocks read', async () => {
    const first = await instance(stores[stores.push(new SqliteStore(file)) - 1]!);
    agents.push(await registerLinked(system), await registerLinked(system));
    const human = agents[0]!.human;
    agents.push(await registerLinked(system, { human }));
    await synced(first);
    // live, the index leaves the process's memory for a temporary database, and answers from there
    await expect.poll(() => first.services.queries.indexStorage().testnet).toBe('disk');
    const fullStart = await getLogsCalls(first.metrics);
    expect(await agentsOf(first, human)).toEqual([Number(agents[0]!.agentId), Number(agents[2]!.agentId)]);
    await first.stop();
    await stores.pop()?.close();

    // while the service is down: one more agent, and one deregistered
    agents.push(await registerLinked(system, { human }));
    await deregisterByProof(system, { human, agent: agents[0]!.agent.address });

    const store = new SqliteStore(file);
    stores.push(store);
    const stored = await store.get<StoredCheckpoint>(checkpointKey());
    expect(stored?.buckets.length).toBeGreaterThan(0);
    const restarted = await instance(store);
    expect(await restarted.services.queries.resumedFromStore('testnet')).toBe(true);
    expect(await agentsOf(restarted, human)).toEqual([Number(agents[2]!.agentId), Number(agents[3]!.agentId)]);
    expect(await agentsOf(restarted, agents[1]!.human)).toEqual([Number(agents[1]!.agentId)]);
    // a window or two of 2 blocks since the checkpoint, against every window since the deploy block at the first start
    const resumed = await getLogsCalls(restarted.metrics);
    expect(resumed).toBeLessThan(fullStart / 2);

    // the index it resumed equals a fresh rebuild from the deploy block
    const fresh = await instance(new SqliteStore(join(dir, 'fresh.sqlite')));
    for (const agent of agents) expect(await agentsOf(restarted, agent.human)).toEqual(await agentsOf(fresh, agent.human));
    await synced(restarted);
    await restarted.stop();
    await fresh.stop();
  });

  it('a checkpoint whose block a reorganisation replaced is not trusted: the changes of the dropped blocks are undone', async () => {
    const store = stores.at(-1)!;
    const before = await store.get<StoredCheckpoint>(checkpointKey());
    const dropped = await registerLinked(system);
    const app = await instance(store);
    await synced(app);
    expect(await agentsOf(app, dropped.human)).toEqual([Number(dropped.agentId)]);
    await app.stop();
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: dropped.txHash });
    expect(blockNumber).toBeGreaterThan(BigInt(before!.checkpoints.at(-1)![0]));
    // the stored checkpoint's block and the registration's are replaced by empty ones
    await reorgFrom(system, blockNumber);

    const resumed = await instance(store);
    expect(await resumed.services.queries.resumedFromStore('testnet')).toBe(true);
    expect(await agentsOf(resumed, dropped.human)).toEqual([]);
    // undone back to an older stored checkpoint still on the chain, not read again from the deploy block
    expect(await getLogsCalls(resumed.metrics)).toBeLessThanOrEqual(3);
    expect(await agentsOf(resumed, agents[2]!.human)).toEqual([Number(agents[2]!.agentId), Number(agents[3]!.agentId)]);
    await synced(resumed);
    await resumed.stop();
  });

  it('each poll stores the journal entries it made as a segment of its own, and deletes those a reorganisation can no longer reach', async () => {
    const store = stores.at(-1)!;
    const app = await instance(store);
    await synced(app);
    const segmentKey = (segment: string) => checkpointKey().replace(/checkpoint$/, `journal:${segment}`);
    const before = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    await registerLinked(system);
    await synced(app);
    const after = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    // the segments stored before stay as they were; one more holds the registration's changes, and only those
    expect(after.journal.slice(0, before.journal.length)).toEqual(before.journal);
    expect(after.journal).toHaveLength(before.journal.length + 1);
    const [segment] = after.journal.at(-1)!;
    const added = (await store.get<[string, string, string, string | null][]>(segmentKey(segment)))!;
    expect(added.length).toBeGreaterThan(0);
    for (const [block] of added) expect(BigInt(block)).toBeGreaterThan(BigInt(before.checkpoints.at(-1)![0]));

    // REORG_WINDOW blocks later every block of them is older than the oldest checkpoint kept: deleted
    for (let i = 0; i < 2; i++)
      await system.client.request({ method: 'anvil_mine' as never, params: [numberToHex(REORG_WINDOW / 2n + 1n)] as never });
    await synced(app);
    const later = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    expect(later.journal).toEqual([]);
    for (const [old] of after.journal) expect(await store.get(segmentKey(old))).toBeUndefined();
    await app.stop();

    // and a restart resumes from it as from any other checkpoint
    const resumed = await instance(store);
    expect(await resumed.services.queries.resumedFromStore('testnet')).toBe(true);
    expect(await agentsOf(resumed, agents[2]!.human)).toEqual([Number(agents[2]!.agentId), Number(agents[3]!.agentId)]);
    await synced(resumed);
    await resumed.stop();
  });

  it('with no stored checkpoint left on the chain (a chain restarted from an older state), the index is rebuilt from the deploy block', async () => {
    const store = stores.at(-1)!;
    // every stored checkpoint names a hash the chain never had at its block, and a bucket claims an agent that is not
    const stored = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    const forged = `0x${'ab'.repeat(32)}` as const;
    const ghost = '0x000000000000000000000000000000000000dEaD' as Address;
    const [bucket] = stored.buckets;
    const bucketKey = checkpointKey().replace(/checkpoint$/, `bucket:${bucket}`);
    const entries = bucketEntries((await store.get<IndexBucket>(bucketKey))!);
    await store.set(bucketKey, encodeBucket([...entries, [1000, ghost, null, null]]));
    await store.set(checkpointKey(), { ...stored, checkpoints: stored.checkpoints.map(([number]) => [number, forged]) });

    const app = await instance(store);
    expect(await app.services.queries.resumedFromStore('testnet')).toBe(true);
    expect(await agentsOf(app, ghost)).toEqual([]);
    expect(await getLogsCalls(app.metrics)).toBeGreaterThan(4); // every window from the deploy block
    expect(await agentsOf(app, agents[2]!.human)).toEqual([Number(agents[2]!.agentId), Number(agents[3]!.agentId)]);
    await synced(app);
    // what is stored again is the rebuilt index: the forged entry is gone
    const rewritten = bucketEntries((await store.get<IndexBucket>(bucketKey))!);
    expect(rewritten.map(([agentId]) => agentId)).toEqual(entries.map(([agentId]) => agentId));
    expect((await store.get<StoredCheckpoint>(checkpointKey()))?.checkpoints.at(-1)?.[1]).not.toBe(forged);
    await app.stop();
  });

  it('a stored bucket that does not decode is not trusted: the index is rebuilt from the deploy block and stored again', async () => {
    const store = stores.at(-1)!;
    const stored = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    const bucketKey = checkpointKey().replace(/checkpoint$/, `bucket:${stored.buckets[0]}`);
    const entries = bucketEntries((await store.get<IndexBucket>(bucketKey))!);
    await store.set(bucketKey, 'AAAA'); // three bytes: less than one record's head

    const app = await instance(store);
    expect(await app.services.queries.resumedFromStore('testnet')).toBe(false);
    expect(await agentsOf(app, agents[2]!.human)).toEqual([Number(agents[2]!.agentId), Number(agents[3]!.agentId)]);
    expect(await getLogsCalls(app.metrics)).toBeGreaterThan(4); // every window from the deploy block
    await synced(app);
    expect(bucketEntries((await store.get<IndexBucket>(bucketKey))!)).toEqual(entries);
    await app.stop();
  });
});

describe('on sqlite, while the store does not answer', () => {
  it('the writes that fail are made good by one write with the whole journal, not a list that grows for the outage', async () => {
    const store = new SqliteStore(join(dir, 'outage.sqlite'));
    stores.push(store);
    let failing = false;
    const flaky = intercepted(store, 'updateWith', (real) => (key, fn) => {
      if (failing) return Promise.reject(new Error('SQLITE_BUSY: database is locked'));
      return real(key, fn);
    });
    const app = await instance(flaky);
    await synced(app);
    await registerLinked(system);
    await synced(app);
    const before = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    expect(before.journal.length).toBeGreaterThan(0);

    failing = true;
    const during = [await registerLinked(system), await registerLinked(system)];
    await synced(app);
    await synced(app);
    expect(await store.get<StoredCheckpoint>(checkpointKey())).toEqual(before);
    failing = false;
    const after = await registerLinked(system);
    await synced(app);
    const stored = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    // the segments before the outage were replaced by one holding the whole journal
    expect(stored.journal).toHaveLength(1);
    expect(stored.journal[0]?.[0]).not.toBe(before.journal.at(-1)?.[0]);
    await app.stop();

    // what is stored is the index: a restart from it answers as a fresh rebuild
    const resumed = await instance(store);
    expect(await resumed.services.queries.resumedFromStore('testnet')).toBe(true);
    const fresh = await instance(new SqliteStore(join(dir, 'outage-fresh.sqlite')));
    for (const agent of [...during, after]) {
      expect(await agentsOf(resumed, agent.human)).toEqual([Number(agent.agentId)]);
      expect(await agentsOf(fresh, agent.human)).toEqual([Number(agent.agentId)]);
    }
    await resumed.stop();
    await fresh.stop();
  });
});

describe('two instances on one Redis', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    if (redisAvailable) redis = await startRedisServer();
  });
  afterAll(() => redis?.stop());
  /** Connections to the Redis, under `keyPrefix` (each test its own), closed after the file. */
  const connector = (keyPrefix: string) => async () => {
    const store = await RedisStore.connect({ url: redis!.url, keyPrefix });
    stores.push(store);
    return store;
  };

  it('one writer at a time; a writer paused past its lease has its write refused by the fencing token', async (context) => {
    if (!redisAvailable) context.skip(REDIS_MISSING);
    const connect = connector('fencing:');
    const leaseMs = 1_000;
    const store = await connect();
    const a = await instance(store, { instanceId: 'a', indexLeaseMs: leaseMs });
    // A keeps its lease while B starts, as its polls (an hour apart here) would renew it
    await store.update(leaseKey(), (lease) => lease, 60_000);
    const b = await instance(await connect(), { instanceId: 'b', indexLeaseMs: leaseMs });
    const storedA = a.services.queries.storedIndex('testnet')!;
    const storedB = b.services.queries.storedIndex('testnet')!;
    expect(storedA.writing).toBe(true);
    expect(storedB.writing).toBe(false);
    const tokenA = storedA.token!;
    await synced(a);
    expect((await store.get<StoredCheckpoint>(checkpointKey()))?.token).toBe(tokenA);

    // A pauses (its follower stops: no poll, no write, no renewal) past its lease
    await a.services.queries.follower('testnet').stop();
    const late = await registerLinked(system);
    await store.update(leaseKey(), (lease) => lease, leaseMs);
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 200));
    // B's next poll takes the lease with a newer token, the one after writes the whole index under it
    await synced(b);
    expect(storedB.writing).toBe(true);
    await synced(b);
    const byB = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    expect(byB.token).toBeGreaterThan(tokenA);
    expect(await agentsOf(b, late.human)).toEqual([Number(late.agentId)]);
    // B keeps its lease through what follows, as its polls (an hour apart here) would renew it: A, refused, must
    // not find it free and take it back
    await store.update(leaseKey(), (lease) => lease, 60_000);

    // A comes back believing it still writes: its write under the old token is refused, and it stops writing
    expect(storedA.writing).toBe(true);
    await registerLinked(system);
    await a.services.queries.follower('testnet').start();
    await synced(a);
    expect(storedA.writing).toBe(false);
    expect(await store.get<StoredCheckpoint>(checkpointKey())).toEqual(byB);
    // A still answers from its own copy, which it keeps following
    expect(await agentsOf(a, late.human)).toEqual([Number(late.agentId)]);
  });

  it("a writer's lease taken over at a start: its writes are refused from the takeover on, before the new writer writes", async (context) => {
    if (!redisAvailable) context.skip(REDIS_MISSING);
    const connect = connector('takeover:');
    const leaseMs = 1_000;
    const store = await connect();
    const a = await instance(store, { instanceId: 'a', indexLeaseMs: leaseMs });
    const storedA = a.services.queries.storedIndex('testnet')!;
    await synced(a);
    const tokenA = storedA.token!;

    // A pauses past its lease; B starts meanwhile and takes the lease as it loads the stored index
    await a.services.queries.follower('testnet').stop();
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 200));
    // B's lease outlasts the test (B is not started, so it does not renew): A cannot take it back meanwhile
    const b = await instance(await connect(), { instanceId: 'b', indexLeaseMs: 60_000, start: false });
    const storedB = b.services.queries.storedIndex('testnet')!;
    expect(await storedB.resume()).toBe(true);
    expect(storedB.token).toBeGreaterThan(tokenA);
    const fenced = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    expect(fenced.token).toBe(storedB.token);

    // A comes back with a change to write: refused, though B has written nothing yet
    await registerLinked(system);
    await a.services.queries.follower('testnet').start();
    await synced(a);
    expect(storedA.writing).toBe(false);
    expect(await store.get<StoredCheckpoint>(checkpointKey())).toEqual(fenced);
    await b.services.queries.start();
    await synced(b);
    expect((await store.get<StoredCheckpoint>(checkpointKey()))?.token).toBe(storedB.token);
  });

  it('a start that loads while the writer writes loads one write whole: the record read again after its parts', async (context) => {
    if (!redisAvailable) context.skip(REDIS_MISSING);
    const connect = connector('consistent:');
    const store = await connect();
    const a = await instance(store, { instanceId: 'a' });
    await synced(a);
    // B's first read of a bucket waits for A to store one more registration: the record B read first is stale then
    let late: RegisteredAgent | undefined;
    const overtaken = intercepted(await connect(), 'get', (real) => async (key) => {
      if (late === undefined && key.includes(':bucket:')) {
        late = await registerLinked(system);
        await synced(a);
      }
      return real(key);
    });
    const b = await instance(overtaken, { instanceId: 'b', start: false });
    const storedB = b.services.queries.storedIndex('testnet')!;
    expect(await storedB.resume()).toBe(true);
    expect(storedB.writing).toBe(false);
    expect(late).toBeDefined();
    const stored = (await store.get<StoredCheckpoint>(checkpointKey()))!;
    expect(b.services.queries.follower('testnet').processedBlock).toBe(BigInt(stored.checkpoints.at(-1)![0]));
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: late!.txHash });
    expect(BigInt(stored.checkpoints.at(-1)![0])).toBeGreaterThanOrEqual(blockNumber);
  });
});
