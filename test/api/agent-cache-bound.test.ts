// The agent cache holds a bounded number of agents, least recently used going first: memory does not grow with the
// number of agents asked about (AGENT_CACHE_ENTRIES), and a hit keeps an agent in.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;

let q: QueryTestApp;
const agents: RegisteredAgent[] = [];

beforeAll(async () => {
  const networks = await deployTestNetworks();
  for (let i = 0; i < 4; i++) agents.push(await registerLinked(networks.testnet));
  q = await queryTestApp(networks, { agentCacheSize: 2 });
  await q.services.queries.syncNow();
}, 60_000);

afterAll(() => q?.stop());

const info = async (agent: RegisteredAgent) => {
  const res = await request(q.app).get(`/api/agent/info/${TESTNET}/${agent.agentId}`);
  expect(res.status).toBe(200);
};

describe('the agent cache', () => {
  it('keeps at most its bound of agents, the least recently used leaving first', async () => {
    const [a, b, c, d] = agents as [RegisteredAgent, RegisteredAgent, RegisteredAgent, RegisteredAgent];
    await info(a);
    await info(b);
    await info(a); // a hit: b is now the least recently used
    await info(c);
    const before = await q.cacheLookups('agent');
    await info(a);
    expect(await q.cacheLookups('agent')).toEqual({ hit: before.hit + 1, miss: before.miss });
    await info(b);
    expect((await q.cacheLookups('agent')).miss).toBe(before.miss + 1);
    for (const agent of [a, b, c, d]) await info(agent);
    expect(q.services.queries.cacheSize('testnet').agents).toBeLessThanOrEqual(2);
  });
});
