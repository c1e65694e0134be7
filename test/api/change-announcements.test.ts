// What the query service announces to whoever keeps its answers (the response cache, the credentials' status), on
// real local chains: while a network's follower catches up from its start nobody keeps an answer of that network, so
// the backfill's changes are not announced one by one but the network's own key once caught up; once live, every
// change is announced by its own keys in the poll that delivers it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerKeys } from '../../src/services/answer-reuse.js';
import { type RegisteredAgent, registerWalletFree } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

describe('change announcements', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  const heard: string[] = [];
  let before: RegisteredAgent[];

  beforeAll(async () => {
    networks = await deployTestNetworks();
    // a history to catch up with: agents registered before the service starts
    before = [];
    for (let i = 0; i < 3; i++) before.push(await registerWalletFree(networks.testnet));
    q = await queryTestApp(networks, { eventPollIntervalMs: 3_600_000, start: false });
    q.services.queries.onChange((key) => heard.push(key));
  }, 120_000);

  afterAll(async () => {
    await q?.stop();
  });

  it("announces each network's key once when its follower has caught up, and none of the backfill's changes key by key", async () => {
    await q.services.queries.start();
    expect(heard.filter((key) => key === answerKeys.network('testnet'))).toHaveLength(1);
    expect(heard.filter((key) => key === answerKeys.network('mainnet'))).toHaveLength(1);
    for (const { agentId, nullifier, agent } of before) {
      expect(heard).not.toContain(answerKeys.agent('testnet', agentId));
      expect(heard).not.toContain(answerKeys.nullifier('testnet', nullifier));
      expect(heard).not.toContain(answerKeys.human('testnet', agent.address));
    }
    // what was caught up with is answered
    const byHuman = await q.services.queries.agentsByHuman('testnet', before[0]?.agent.address as `0x${string}`);
    expect(byHuman.value.agents).toEqual([Number(before[0]?.agentId)]);
  });

  it('once live, announces a new registration by its agent, its nullifier and its owner, and not the network', async () => {
    heard.length = 0;
    const { agentId, nullifier, agent } = await registerWalletFree(networks.testnet);
    await q.services.queries.syncNow();
    expect(heard).toContain(answerKeys.agent('testnet', agentId));
    expect(heard).toContain(answerKeys.nullifier('testnet', nullifier));
    expect(heard).toContain(answerKeys.human('testnet', agent.address));
    expect(heard).not.toContain(answerKeys.network('testnet'));
  });
});
