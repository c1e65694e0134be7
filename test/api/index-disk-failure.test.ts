// A live network's agents-by-human index is kept in a temporary sqlite database (disk-value-table.ts). When that
// database fails under it (here: a real database made read-only, as a full or vanished temporary directory would
// refuse writes), the index is not trusted any more: the follower starts over from the deploy block, the index is
// rebuilt in memory, and it moves to a new database once live again. Real anvil, real HTTP.
import request from 'supertest';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDatabase } from '../../src/services/disk-value-table.js';
import { registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';

let networks: TestNetworks;
let app: QueryTestApp;
/** The databases the test network's index moved to, in order. */
const databases: ReturnType<typeof temporaryDatabase>[] = [];

beforeAll(async () => {
  networks = await deployTestNetworks();
  await setMaxAgentsPerHuman(networks.testnet, 0n); // a human with several agents
  app = await queryTestApp(networks, {
    eventPollIntervalMs: 3_600_000,
    indexDatabase: (network) => {
      const db = temporaryDatabase();
      if (network === 'testnet') databases.push(db);
      return db;
    },
  });
}, 60_000);

afterAll(async () => {
  await app?.stop();
  for (const db of databases) if (db.open) db.close();
});

async function agentsOf(human: Address): Promise<number[]> {
  const res = await request(app.app).get(`/api/agent/agents/${networks.testnet.deployment.chainId}/${human}`);
  expect(res.status).toBe(200);
  return res.body.agents;
}

describe('the live index on disk', () => {
  it('a failure of its database has the index rebuilt from the logs, and moved to a new database', async () => {
    const first = await registerLinked(networks.testnet);
    await app.services.queries.syncNow();
    await expect.poll(() => app.services.queries.indexStorage().testnet).toBe('disk');
    expect(await agentsOf(first.human)).toEqual([Number(first.agentId)]);

    // the database's file can no longer be written: the next registration's logs fail to apply
    const moves = databases.length;
    databases.at(-1)?.pragma('query_only = ON');
    const second = await registerLinked(networks.testnet, { human: first.human });
    await app.services.queries.syncNow();
    // rebuilt from the deploy block, in memory, then moved again to a database of its own
    await expect
      .poll(
        async () => {
          await app.services.queries.syncNow();
          return [databases.length, app.services.queries.indexStorage().testnet];
        },
        { timeout: 20_000 },
      )
      .toEqual([moves + 1, 'disk']);
    expect(await agentsOf(first.human)).toEqual([Number(first.agentId), Number(second.agentId)]);
    expect(databases.at(-2)?.open).toBe(false); // the failed one was let go
  });
});
