// Two instances (`node dist/main.js` twice) on one real redis-server race for the writer's lease of the stored
// agents-by-human index, with a short lease (INDEX_LEASE_MS), against external anvil chains. The writer A is frozen
// with SIGSTOP (no poll, no renewal, no write: a process stalled by the host or a long GC pause) while agents are
// registered on chain through the registry's entry point; B takes the lease over with a newer fencing token and
// stores the new agents. A is then thawed (SIGCONT) still believing it writes: its write under the old token is
// refused, it stops writing, the stored checkpoint stays B's, and both answer agents-by-human alike.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';
import type { StoredCheckpoint } from '../../src/services/stored-agent-index.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { newAccount, type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';
import { freePort, spawnService } from '../support/service-process.js';

const TESTNET = 11142220;
/**
 * Short, so that the test does not wait long for A's to run out; and several of a writer's polls (a second apart
 * against an external RPC) long, so that a loaded machine's stalls do not hand it over before A is frozen.
 */
const LEASE_MS = 5_000;
const KEY_PREFIX = 'index-fencing:';

interface Instance {
  name: string;
  base: string;
  child: ChildProcess;
  exited: Promise<void>;
  stopped: boolean;
  output: () => string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The contracts of `system` as the service's environment names them for its network. */
function networkEnv(system: TestSystem): Record<string, string> {
  const prefix = system.network.toUpperCase();
  const { registry, proofProvider, hub, demoVerifier, demoVerifierEd25519, multicall } = system.deployment.contracts;
  return {
    [`${prefix}_RPC_URL`]: system.rpcUrl,
    [`${prefix}_REGISTRY_ADDRESS`]: registry,
    [`${prefix}_PROOF_PROVIDER_ADDRESS`]: proofProvider,
    [`${prefix}_HUB_ADDRESS`]: hub,
    [`${prefix}_DEMO_VERIFIER_ADDRESS`]: demoVerifier,
    [`${prefix}_MULTICALL_ADDRESS`]: multicall,
    [`${prefix}_REGISTRY_DEPLOY_BLOCK`]: system.deployment.registryDeployBlock.toString(),
    ...(demoVerifierEd25519 ? { [`${prefix}_DEMO_VERIFIER_ED25519_ADDRESS`]: demoVerifierEd25519 } : {}),
  };
}

/** Starts `node dist/main.js` on a free port; resolves once GET /api/health answers 200. */
async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const spawned = spawnService({ ...process.env, ...env, LOG_LEVEL: 'warn' }, await freePort());
  const instance: Instance = { name, ...spawned, stopped: false };
  const { child } = spawned;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) break;
    const res = await fetch(`${instance.base}/api/health`).catch(() => undefined);
    if (res?.status === 200) return instance;
    await sleep(100);
  }
  await stopInstance(instance);
  throw new Error(`${name} did not become healthy:\n${instance.output()}`);
}

/** By its own pid: thawed first if frozen, then SIGINT, SIGKILL if it has not ended within 10 s. */
async function stopInstance(instance: Instance | undefined): Promise<void> {
  if (!instance || instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  if (instance.stopped) thaw(instance);
  instance.child.kill('SIGINT');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 10_000);
  await instance.exited;
  clearTimeout(timer);
}

function freeze(instance: Instance): void {
  instance.child.kill('SIGSTOP');
  instance.stopped = true;
}

function thaw(instance: Instance): void {
  instance.child.kill('SIGCONT');
  instance.stopped = false;
}

interface WriterGauges {
  writer: number | undefined;
  token: number | undefined;
  checkpointBlock: number | undefined;
  checkpointToken: number | undefined;
}

/** The index writer's gauges of the testnet in the instance's GET /metrics. */
async function gauges(instance: Instance): Promise<WriterGauges> {
  const res = await fetch(`${instance.base}/metrics`);
  expect(res.status).toBe(200);
  const lines = (await res.text()).split('\n');
  const sample = (name: string): number | undefined => {
    const line = lines.find((entry) => entry.startsWith(`${name}{network="testnet"}`));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return {
    writer: sample('registry_index_writer'),
    token: sample('registry_index_writer_token'),
    checkpointBlock: sample('registry_index_checkpoint_block'),
    checkpointToken: sample('registry_index_checkpoint_token'),
  };
}

async function agentsOf(instance: Instance, human: Address): Promise<number[]> {
  const res = await fetch(`${instance.base}/api/agent/agents/${TESTNET}/${human}`);
  const body = (await res.json()) as { agents?: number[]; error?: string };
  if (res.status !== 200) throw new Error(`${instance.name} answered ${res.status}: ${body.error}`);
  return body.agents ?? [];
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'the index writer fenced' : `the index writer fenced (skipped: ${REDIS_MISSING})`, () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'index-fencing-a-')), mkdtempSync(join(tmpdir(), 'index-fencing-b-'))];
  let redis: RedisServer | undefined;
  let chain: DevChain | undefined;
  let testnet: TestSystem;
  let store: RedisStore | undefined;
  let a: Instance | undefined;
  let b: Instance | undefined;

  beforeAll(async () => {
    let mainnet: TestSystem;
    [redis, chain, mainnet] = await Promise.all([startRedisServer(), startDevChain({ chainId: TESTNET }), deployTestSystem('mainnet')]);
    testnet = await deployTestSystem('testnet', chain.rpcUrl);
    await setMaxAgentsPerHuman(testnet, 0n); // a human with several agents
    store = await RedisStore.connect({ url: redis.url, keyPrefix: KEY_PREFIX });
    const shared = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: KEY_PREFIX,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      AA_PROXY_TOKEN_SECRET: randomBytes(32).toString('hex'),
      INDEX_LEASE_MS: String(LEASE_MS),
      ...networkEnv(mainnet),
      ...networkEnv(testnet),
    };
    // A first: it finds the lease free and takes it at its start
    a = await startInstance('A', { ...shared, DATA_DIR: dirs[0] as string });
    b = await startInstance('B', { ...shared, DATA_DIR: dirs[1] as string });
  }, 180_000);

  afterAll(async () => {
    await stopInstance(b);
    await stopInstance(a);
    await store?.close();
    await redis?.stop();
    await chain?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** The checkpoint record as the store holds it. */
  const storedCheckpoint = async (): Promise<StoredCheckpoint | undefined> =>
    store?.get<StoredCheckpoint>(`agent-index:testnet:${TESTNET}:${testnet.deployment.contracts.registry.toLowerCase()}:checkpoint`);

  const blockOf = async (agent: RegisteredAgent): Promise<number> =>
    Number((await testnet.client.getTransactionReceipt({ hash: agent.txHash })).blockNumber);

  it('a writer frozen past its lease is replaced by a newer token, and thawed cannot overwrite its successor', async () => {
    const [instanceA, instanceB] = [a!, b!];
    const before = await registerLinked(testnet);
    // A writes (it stores the registration under its token); B follows
    await expect.poll(async () => (await gauges(instanceA)).checkpointBlock ?? 0, { timeout: 15_000 }).toBeGreaterThanOrEqual(await blockOf(before));
    const ofA = await gauges(instanceA);
    expect(ofA.writer).toBe(1);
    expect(ofA.token).toBeGreaterThan(0);
    expect(ofA.checkpointToken).toBe(ofA.token);
    const tokenA = ofA.token as number;
    expect(await gauges(instanceB)).toMatchObject({ writer: 0, token: undefined, checkpointToken: tokenA });

    freeze(instanceA);
    // while A is frozen: a human with two agents, another with one
    const human = newAccount().address;
    const added = [await registerLinked(testnet, { human }), await registerLinked(testnet, { human }), await registerLinked(testnet)];
    const lastBlock = await blockOf(added.at(-1) as RegisteredAgent);

    // B takes the lease over once A's has run out, and stores the new agents under its newer token
    await expect
      .poll(
        async () => {
          const now = await gauges(instanceB);
          return now.writer === 1 && (now.token ?? 0) > tokenA && now.checkpointToken === now.token && (now.checkpointBlock ?? 0) >= lastBlock;
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(true);
    const tokenB = (await gauges(instanceB)).token as number;
    const byB = (await storedCheckpoint()) as StoredCheckpoint;
    expect(byB.token).toBe(tokenB);
    expect(Number(byB.checkpoints.at(-1)?.[0])).toBeGreaterThanOrEqual(lastBlock);
    expect(await agentsOf(instanceB, human)).toEqual([Number(added[0]!.agentId), Number(added[1]!.agentId)]);
    expect(await agentsOf(instanceB, added[2]!.human)).toEqual([Number(added[2]!.agentId)]);

    // A thawed still holds token tokenA in memory: its next poll carries the new agents, and its write of them is
    // refused (the stored token is newer); it stops writing
    thaw(instanceA);
    const tokensSeen = new Set<number>();
    await expect
      .poll(
        async () => {
          const token = (await storedCheckpoint())?.token;
          if (token !== undefined) tokensSeen.add(token);
          return (await gauges(instanceA)).writer;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe(0);
    const afterA = await gauges(instanceA);
    expect(afterA.token).toBeUndefined();
    expect(afterA.checkpointToken).toBe(tokenB);
    expect([...tokensSeen]).toEqual([tokenB]);

    // the writer is still B, and what it stores next is under its token: no write of A's landed meanwhile
    const later = await registerLinked(testnet, { human });
    const laterBlock = await blockOf(later);
    await expect.poll(async () => (await gauges(instanceB)).checkpointBlock ?? 0, { timeout: 15_000 }).toBeGreaterThanOrEqual(laterBlock);
    const stored = (await storedCheckpoint()) as StoredCheckpoint;
    expect(stored.token).toBe(tokenB);
    expect(await gauges(instanceB)).toMatchObject({ writer: 1, token: tokenB, checkpointToken: tokenB });
    expect(await gauges(instanceA)).toMatchObject({ writer: 0, token: undefined, checkpointToken: tokenB });

    // both answer agents-by-human alike: A keeps its own copy current from the chain
    const expected = [added[0]!.agentId, added[1]!.agentId, later.agentId].map(Number);
    await expect.poll(() => agentsOf(instanceA, human), { timeout: 10_000 }).toEqual(expected);
    expect(await agentsOf(instanceB, human)).toEqual(expected);
    for (const agent of [before, added[2]!]) {
      const [fromA, fromB] = [await agentsOf(instanceA, agent.human), await agentsOf(instanceB, agent.human)];
      expect(fromA).toEqual([Number(agent.agentId)]);
      expect(fromB).toEqual(fromA);
    }
  }, 120_000);
});
