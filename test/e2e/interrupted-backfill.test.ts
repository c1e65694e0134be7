// A first backfill killed with -9 loses at most the few seconds since its last checkpoint: `node dist/main.js` against
// an external anvil whose registry has a long history (agents registered through the real entry point, empty blocks
// between, read one block per eth_getLogs: MAX_LOG_RANGE=1), killed while health says `indexing`.
// - sqlite: restarted on the same DATA_DIR, it reads only the blocks after the stored checkpoint;
// - Redis: of two instances, the writer is killed; the other takes the lease over and finishes.
// Either way the stored index, and every human's agents, equal those of a fresh instance that rebuilt from the
// deploy block.
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSystem, startLocalSystem } from '../../scripts/local-system.js';
import { freePort, metricTotal, type Population, populate, serviceEnv, tempDataDir } from '../../scripts/registry-history.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import type { IndexBucket } from '../../src/services/human-agent-index.js';
import type { StoredCheckpoint } from '../../src/services/stored-agent-index.js';
import { decodeValue } from '../../src/store/key-value-store.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { spawnService } from '../support/service-process.js';

const TESTNET = 11142220;

interface Instance {
  base: string;
  child: ChildProcess;
  exited: Promise<void>;
  output: () => string;
}

interface Health {
  status: string;
  networks: { network: string; indexing?: { blocksDone: number; blocksToGo: number } }[];
}

/** What a reader of the store sees: a key's value (or undefined). */
type ReadStore = (key: string) => Promise<unknown>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a first backfill killed with -9', () => {
  let testnet: LocalSystem;
  let mainnet: LocalSystem;
  let population: Population;
  let head: bigint;
  let deployBlock: bigint;
  let humans: Address[];
  /** The nullifiers of the busy humans. */
  let nullifiers: bigint[];
  /** What a fresh instance that rebuilt from the deploy block answers, and stored. */
  let rebuilt: { answers: unknown[]; buckets: Record<string, IndexBucket>; getLogs: number };
  const dirs: string[] = [];
  const running = new Set<Instance>();

  const indexKey = (name: string) => `agent-index:testnet:${TESTNET}:${testnet.deployment.contracts.registry.toLowerCase()}:${name}`;

  async function start(extra: Record<string, string> = {}, dataDir = tempDataDir()): Promise<Instance & { dataDir: string }> {
    if (!dirs.includes(dataDir)) dirs.push(dataDir);
    const port = await freePort();
    const instance = { ...spawnService({ ...serviceEnv({ testnet, mainnet }, dataDir, port), MAX_LOG_RANGE: '1', ...extra }, port), dataDir };
    running.add(instance);
    return instance;
  }

  async function kill(instance: Instance, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    instance.child.kill(signal);
    await instance.exited;
    running.delete(instance);
  }

  const health = (instance: Instance): Promise<Health | undefined> =>
    fetch(`${instance.base}/api/health`)
      .then((res) => res.json() as Promise<Health>)
      .catch(() => undefined);

  const testnetProgress = (body: Health | undefined) => body?.networks.find((n) => n.network === 'testnet')?.indexing;

  /** Polls until `condition` holds; fails with the instance's output if it never does (or the instance exits). */
  async function until<T>(instance: Instance, what: string, condition: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 1_200; i++) {
      const value = await condition();
      if (value !== undefined) return value;
      if (instance.child.exitCode !== null) break;
      await sleep(50);
    }
    throw new Error(`${what} did not happen:\n${instance.output()}`);
  }

  const healthy = (instance: Instance) => until(instance, 'healthy', async () => ((await health(instance))?.status === 'ok' ? true : undefined));

  /** Every human's agents, and those of each nullifier; a 503 (the follower not live for a moment, on a loaded machine) is asked again. */
  async function answers(instance: Instance): Promise<unknown[]> {
    const ask = async (path: string): Promise<unknown> => {
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(`${instance.base}/api/agent/${path}`);
        if (res.status !== 503 || attempt === 20) return res.json();
        await sleep(250);
      }
    };
    return Promise.all([
      ...humans.map((human) => ask(`agents/${TESTNET}/${human}`)),
      ...nullifiers.map((nullifier) => ask(`agents-by-nullifier/${TESTNET}/${nullifier}`)),
    ]);
  }

  /** The stored index's buckets, by bucket number. */
  async function storedBuckets(read: ReadStore): Promise<Record<string, IndexBucket>> {
    const checkpoint = (await read(indexKey('checkpoint'))) as StoredCheckpoint;
    const buckets: Record<string, IndexBucket> = {};
    for (const bucket of checkpoint.buckets) buckets[bucket] = (await read(indexKey(`bucket:${bucket}`))) as IndexBucket;
    return buckets;
  }

  /** Reads a sqlite store the way the service wrote it, from another connection (WAL: the writer goes on). */
  function sqliteReader(dataDir: string): { read: ReadStore; close: () => void } {
    const db = new Database(join(dataDir, 'store.sqlite'), { readonly: true, fileMustExist: true });
    const select = db.prepare<[string], { value: string }>('SELECT value FROM kv WHERE key = ?');
    return {
      read: async (key) => {
        const row = select.get(key);
        return row ? decodeValue(row.value) : undefined;
      },
      close: () => db.close(),
    };
  }

  /** The last stored checkpoint's block, once the store has one. */
  async function storedBlock(read: () => Promise<StoredCheckpoint | undefined>): Promise<bigint | undefined> {
    const last = (await read())?.checkpoints.at(-1);
    return last ? BigInt(last[0]) : undefined;
  }

  beforeAll(async () => {
    [testnet, mainnet] = await Promise.all([startLocalSystem(TESTNET), startLocalSystem(42220)]);
    // 200 agents, ten a block, each block followed by 150 empty ones: about 3,000 blocks, several seconds to read
    population = await populate(testnet, 200, { perBlock: 10, gapBlocks: 150 });
    head = await testnet.client.getBlockNumber({ cacheTime: 0 });
    deployBlock = testnet.deployment.registryDeployBlock;
    humans = [...new Set(population.agents.map((a) => a.human))];
    const registry = testnet.deployment.contracts.registry;
    // the busy humans' agents are 1-10, then 11-20 and so on: each of 1-10 names one of them
    const nullifierOf = (agentId: bigint) =>
      testnet.client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'agentNullifier', args: [agentId] });
    nullifiers = await Promise.all(Array.from({ length: 10 }, (_, i) => nullifierOf(BigInt(i + 1))));

    const fresh = await start();
    await healthy(fresh);
    const getLogs = await metricTotal(fresh.base, 'rpc_requests_total', { network: 'testnet', method: 'eth_getLogs' });
    const reader = sqliteReader(fresh.dataDir);
    try {
      rebuilt = { answers: await answers(fresh), buckets: await storedBuckets(reader.read), getLogs };
    } finally {
      reader.close();
    }
    await kill(fresh, 'SIGINT');
    // what the chain holds: the busy humans' ten agents each, and no deregistered agent
    const listed = rebuilt.answers.slice(0, humans.length) as { agents: number[]; humanAddress: Address }[];
    expect(listed.find((a) => a.humanAddress === population.busyHumans[0])?.agents).toHaveLength(10);
    const agentIds = listed.flatMap((a) => a.agents);
    expect(agentIds).toHaveLength(population.agents.length - population.deregistered.length);
    for (const id of population.deregistered) expect(agentIds).not.toContain(Number(id));
    // and the nullifiers' lists are the registry's own
    const byNullifier = rebuilt.answers.slice(humans.length) as { agents: number[] }[];
    for (const [i, nullifier] of nullifiers.entries()) {
      const onChain = await testnet.client.readContract({
        address: registry,
        abi: agentRegistryAbi,
        functionName: 'getAgentsForNullifier',
        args: [nullifier],
      });
      expect(byNullifier[i]?.agents).toEqual([...onChain].map(Number).sort((a, b) => a - b));
    }
    expect(byNullifier[0]?.agents).toHaveLength(10);
  }, 240_000);

  afterAll(async () => {
    for (const instance of running) await kill(instance);
    await Promise.all([testnet?.chain.stop(), mainnet?.chain.stop()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('sqlite: a restart on the same DATA_DIR resumes from the stored checkpoint and ends with the rebuilt index', async () => {
    const first = await start();
    const reader = async (): Promise<StoredCheckpoint | undefined> => {
      let store: ReturnType<typeof sqliteReader> | undefined;
      try {
        store = sqliteReader(first.dataDir);
        return (await store.read(indexKey('checkpoint'))) as StoredCheckpoint | undefined;
      } catch {
        return undefined; // no store file yet
      } finally {
        store?.close();
      }
    };
    // mid-backfill: indexing with blocks done, and a checkpoint a third of the way or more, short of the head, stored
    const third = deployBlock + (head - deployBlock) / 3n;
    await until(first, 'a checkpoint stored mid-backfill', async () => {
      const progress = testnetProgress(await health(first));
      if (!progress || progress.blocksDone === 0 || progress.blocksToGo === 0) return undefined;
      const stored = await storedBlock(reader);
      return stored !== undefined && stored > third && stored < head ? stored : undefined;
    });
    await kill(first);
    const resumedAt = (await storedBlock(reader)) as bigint;
    expect(resumedAt).toBeLessThan(head);

    const again = await start({}, first.dataDir);
    const seen = await until(again, 'a first health answer', async () => (await health(again)) ?? undefined);
    await healthy(again);
    // only the blocks after the checkpoint were read: one eth_getLogs each (MAX_LOG_RANGE=1)
    const getLogs = await metricTotal(again.base, 'rpc_requests_total', { network: 'testnet', method: 'eth_getLogs' });
    expect(getLogs).toBeLessThanOrEqual(Number(head - resumedAt) + 2);
    expect(getLogs).toBeLessThan((rebuilt.getLogs * 2) / 3);
    const progress = testnetProgress(seen);
    if (progress) expect(progress.blocksDone + progress.blocksToGo).toBeLessThanOrEqual(Number(head - resumedAt));

    expect(await answers(again)).toEqual(rebuilt.answers);
    await kill(again, 'SIGINT');
    const stored = sqliteReader(first.dataDir);
    try {
      expect(await storedBuckets(stored.read)).toEqual(rebuilt.buckets);
    } finally {
      stored.close();
    }
  }, 240_000);

  describe.skipIf(!redisAvailable)(`Redis${redisAvailable ? '' : ` (${REDIS_MISSING})`}`, () => {
    /** A value as the service stored it in `redis` (its default key prefix). */
    const redisReader =
      (client: Redis): ReadStore =>
      async (key) => {
        const text = await client.get(`air:${key}`);
        return text === null ? undefined : decodeValue(text);
      };

    it('the writer of two instances killed mid-backfill: the other takes the lease over, finishes, and stores the rebuilt index', async () => {
      const redis = await startRedisServer();
      const client = new Redis(redis.url);
      try {
        await writerKilled(redis, redisReader(client));
      } finally {
        client.disconnect();
        await redis.stop();
      }
    }, 240_000);

    async function writerKilled(redis: RedisServer, readRedis: ReadStore): Promise<void> {
      const storedCheckpoint = async () => (await readRedis(indexKey('checkpoint'))) as StoredCheckpoint | undefined;
      const env = { REDIS_URL: redis.url, INDEX_LEASE_MS: '3000' };
      // the first on an empty store takes the writer's lease at its start
      const writer = await start(env);
      await until(writer, 'a checkpoint stored mid-backfill', async () => {
        if (!testnetProgress(await health(writer))?.blocksToGo) return undefined;
        const stored = await storedBlock(storedCheckpoint);
        return stored !== undefined && stored > deployBlock && stored < head ? stored : undefined;
      });
      // frozen there (as a host pauses a process), so the second's start does not race the backfill's end; it is
      // killed frozen, not renewing its lease
      writer.child.kill('SIGSTOP');
      const token = (await storedCheckpoint())?.token as number;
      // the second loads what the writer stored and follows on from it
      const other = await start(env);
      await until(other, 'the second instance answering', async () => (await health(other)) ?? undefined);
      await kill(writer);

      // the lease expires, the other takes it (a newer fencing token) and stores the index up to the head
      await until(other, 'the takeover', async () => {
        const stored = await storedCheckpoint();
        const last = stored?.checkpoints.at(-1);
        return stored && stored.token > token && last && BigInt(last[0]) >= head ? true : undefined;
      });
      await healthy(other);
      expect(await answers(other)).toEqual(rebuilt.answers);
      expect(await storedBuckets(readRedis)).toEqual(rebuilt.buckets);
      await kill(other, 'SIGINT');

      // and a new instance on that Redis answers from the stored index alike
      const third = await start(env);
      await healthy(third);
      expect(await metricTotal(third.base, 'rpc_requests_total', { network: 'testnet', method: 'eth_getLogs' })).toBeLessThanOrEqual(2);
      expect(await answers(third)).toEqual(rebuilt.answers);
      await kill(third, 'SIGINT');
    }
  });
});
