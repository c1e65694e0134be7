// Fast reads: an uncached verify costs one RPC round trip and a cached one none (counted at the HTTP client,
// and in /metrics); the registry's events invalidate cached answers within one polling interval after a
// deregistration, a refresh, and another registration of the same human.
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import type { TestSystem } from '../support/chain.js';
import { deregisterByProof, eventually, type QueryTestApp, queryTestApp, refreshByProof } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';

const TESTNET = 11142220;
/** The embedded chains' polling interval (the service's default for them). */
const POLL_MS = 200;
/**
 * One polling interval, plus what a loaded test machine adds to reading the logs and answering (seconds at worst): a
 * cached answer the change did not reach would stay as it was, far past it.
 */
const ONE_POLL_BUDGET_MS = POLL_MS + 4_000;

let networks: TestNetworks;
let system: TestSystem;

beforeAll(async () => {
  networks = await deployTestNetworks();
  system = networks.testnet;
  await setMaxAgentsPerHuman(system, 0n);
});

/** rpc_round_trips_total{network="testnet"} as GET /metrics shows it. */
async function metricsRpcCount(app: Express): Promise<number> {
  const res = await request(app).get('/metrics');
  expect(res.status).toBe(200);
  const line = res.text.split('\n').find((l) => l.startsWith('rpc_round_trips_total{network="testnet"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('RPC round trips', () => {
  let q: QueryTestApp;
  let agent: RegisteredAgent;

  beforeAll(async () => {
    // The followers poll only when told to (syncNow), so that nothing but the requests under test reaches the RPC.
    q = await queryTestApp(networks, { eventPollIntervalMs: 3_600_000 });
    agent = await registerLinked(system);
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q?.stop();
  });

  it('an uncached verify costs one round trip, a cached one none (also as /metrics shows it)', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    const before = await q.cacheLookups('agent');
    const shownBefore = await metricsRpcCount(q.app);
    q.resetRpc();

    const first = await request(q.app).get(path);
    expect(first.body.isVerified).toBe(true);
    expect(q.rpc).toEqual({ testnet: 1, mainnet: 0 });
    expect(await metricsRpcCount(q.app)).toBe(shownBefore + 1);

    q.resetRpc();
    const second = await request(q.app).get(path);
    expect(second.body).toEqual(first.body);
    expect(q.rpc).toEqual({ testnet: 0, mainnet: 0 });
    expect(await metricsRpcCount(q.app)).toBe(shownBefore + 1);
    expect(await q.cacheLookups('agent')).toEqual({ hit: before.hit + 1, miss: before.miss + 1 });
  });

  it('each request of a cached agent counts one lookup, also the first of another answer of it', async () => {
    // verify is prepared and written from the cache; card is not prepared yet: it is built from the cached record
    const verify = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    const card = `/api/cards/${TESTNET}/${agent.agentId}`;
    expect((await request(q.app).get(verify)).status).toBe(200);
    const before = await q.cacheLookups('agent');
    expect((await request(q.app).get(card)).status).toBe(200);
    expect(await q.cacheLookups('agent')).toEqual({ hit: before.hit + 1, miss: before.miss });
    expect((await request(q.app).get(card)).status).toBe(200);
    expect((await request(q.app).get(verify)).status).toBe(200);
    expect(await q.cacheLookups('agent')).toEqual({ hit: before.hit + 3, miss: before.miss });
  });

  it('info adds one round trip for the registration block the first time it is seen, then none', async () => {
    const other = await registerLinked(system);
    await q.services.queries.syncNow();
    q.resetRpc();
    expect((await request(q.app).get(`/api/agent/info/${TESTNET}/${other.agentId}`)).status).toBe(200);
    expect(q.rpc.testnet).toBe(2); // the agent (eth_call) and its block's timestamp (eth_getBlockByNumber)
    q.resetRpc();
    for (const path of ['/api/agent/info', '/api/agent/verify', '/api/verify-status', '/api/reputation', '/api/cards']) {
      expect((await request(q.app).get(`${path}/${TESTNET}/${other.agentId}`)).status, path).toBe(200);
    }
    expect(q.rpc.testnet).toBe(0);
  });

  it('agents-by-nullifier and agents-by-human: no round trip (the index is built from logs)', async () => {
    q.resetRpc();
    const path = `/api/agent/agents-by-nullifier/${TESTNET}/${agent.nullifier}`;
    expect((await request(q.app).get(path)).body.agents).toEqual([Number(agent.agentId)]);
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${agent.human}`)).body.agents).toEqual([Number(agent.agentId)]);
    expect(q.rpc.testnet).toBe(0);
  });

  it('once the followers stop, the cache is bypassed (it would not hear of changes): one round trip each time', async () => {
    const other = await registerLinked(system);
    await q.services.queries.syncNow();
    await q.stop();
    q.resetRpc();
    await request(q.app).get(`/api/agent/verify/${TESTNET}/${other.agentId}`);
    await request(q.app).get(`/api/agent/verify/${TESTNET}/${other.agentId}`);
    expect(q.rpc.testnet).toBe(2);
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${other.human}`)).status).toBe(503);
  });
});

describe('invalidation by the registry events', () => {
  let q: QueryTestApp;

  beforeAll(async () => {
    q = await queryTestApp(networks, { eventPollIntervalMs: POLL_MS });
  });

  afterAll(async () => {
    await q?.stop();
  });

  /** GETs `path` twice and checks that the second answer came from the cache. */
  async function cached(path: string): Promise<request.Response> {
    await q.services.queries.syncNow(); // the follower has seen the agent's latest block: its answers may be cached
    await request(q.app).get(path);
    const before = await q.cacheLookups('agent');
    const res = await request(q.app).get(path);
    expect((await q.cacheLookups('agent')).hit, 'answered from the cache').toBe(before.hit + 1);
    return res;
  }

  it('after a deregistration, verify answers the no-proof body within one polling interval', async () => {
    const agent = await registerLinked(system);
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    expect((await cached(path)).body.isVerified).toBe(true);

    await deregisterByProof(system, { human: agent.human, agent: agent.agent.address });
    const { value, elapsedMs } = await eventually(
      () => request(q.app).get(path),
      (res) => res.body.isVerified === false,
      10_000,
    );
    expect(value.body).toEqual({
      agentId: Number(agent.agentId),
      chainId: TESTNET,
      isVerified: false,
      proofProvider: '0x0000000000000000000000000000000000000000',
      isSelfProvider: false,
      verificationStrength: 0,
      strengthLabel: 'None',
      humanNullifier: '0',
      agentCountForHuman: 0,
    });
    expect(elapsedMs).toBeLessThan(ONE_POLL_BUDGET_MS);
  });

  it('after a refresh, info shows the newly disclosed credentials within one polling interval', async () => {
    const agent = await registerLinked(system);
    const path = `/api/agent/info/${TESTNET}/${agent.agentId}`;
    expect((await cached(path)).body.credentials.nationality).toBe('');

    await refreshByProof(system, { human: agent.human, agentId: agent.agentId, disclosures: { nationality: true } });
    const { value, elapsedMs } = await eventually(
      () => request(q.app).get(path),
      (res) => res.body.credentials?.nationality === 'GBR',
      10_000,
    );
    expect(value.body.credentials.nationality).toBe('GBR');
    expect(elapsedMs).toBeLessThan(ONE_POLL_BUDGET_MS);
  });

  it("another registration of the same human updates the cached agent's agentCountForHuman (no event names it)", async () => {
    const first = await registerLinked(system);
    const path = `/api/agent/verify/${TESTNET}/${first.agentId}`;
    expect((await cached(path)).body.agentCountForHuman).toBe(1);
    const byNullifier = `/api/agent/agents-by-nullifier/${TESTNET}/${first.nullifier}`;
    expect((await request(q.app).get(byNullifier)).body.agents).toEqual([Number(first.agentId)]);

    const second = await registerLinked(system, { human: first.human });
    const { value, elapsedMs } = await eventually(
      () => request(q.app).get(path),
      (res) => res.body.agentCountForHuman === 2,
      10_000,
    );
    expect(value.body.agentCountForHuman).toBe(2);
    expect(elapsedMs).toBeLessThan(ONE_POLL_BUDGET_MS);
    expect((await request(q.app).get(byNullifier)).body.agents).toEqual([first.agentId, second.agentId].map(Number));
    expect((await request(q.app).get(`/api/agent/agents/${TESTNET}/${first.human}`)).body.agents).toEqual(
      [first.agentId, second.agentId].map(Number),
    );
  });
});
