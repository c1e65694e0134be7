// GET /metrics names the writer of each network's stored agent index: two instances on one real redis-server over
// the run's anvil; the writer reports 1 with its fencing token, the follower 0 and no token, and both report the
// checkpoint the writer stored (its block and token), as the store holds it.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCheckpoint } from '../../src/services/stored-agent-index.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

/** The value of `name{network="testnet"}` in the exposition text; undefined when absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name}{network="testnet"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(app: QueryTestApp): Promise<string> {
  const res = await request(app.app).get('/metrics');
  expect(res.status).toBe(200);
  return res.text;
}

describe.skipIf(!redisAvailable)(redisAvailable ? 'index writer metrics' : `index writer metrics (skipped: ${REDIS_MISSING})`, () => {
  let redis: RedisServer;
  let networks: TestNetworks;
  const stores: RedisStore[] = [];
  const apps: QueryTestApp[] = [];

  beforeAll(async () => {
    [redis, networks] = await Promise.all([startRedisServer(), deployTestNetworks()]);
  });

  afterAll(async () => {
    for (const app of apps) await app.stop();
    for (const store of stores) await store.close();
    await redis?.stop();
  });

  /** An instance on its own connection to the Redis; its followers poll only when told to. */
  async function instance(instanceId: string): Promise<QueryTestApp> {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix: 'writer-metrics:' });
    stores.push(store);
    const app = await queryTestApp(networks, { store, instanceId, eventPollIntervalMs: 3_600_000, indexLeaseMs: 60_000 });
    apps.push(app);
    return app;
  }

  it('the writer reports 1 and its token, the follower 0 and none; both report the stored checkpoint', async () => {
    const writer = await instance('a');
    const follower = await instance('b');
    const { txHash } = await registerLinked(networks.testnet);
    for (const app of [writer, follower]) await app.services.queries.syncNow();
    await writer.services.queries.storedIndex('testnet')?.idle();

    const token = writer.services.queries.storedIndex('testnet')?.token;
    expect(token).toBeGreaterThan(0);
    const { deployment } = networks.testnet;
    const key = `agent-index:testnet:${deployment.chainId}:${deployment.contracts.registry.toLowerCase()}:checkpoint`;
    const stored = (await stores[0]!.get<StoredCheckpoint>(key))!;
    const storedBlock = Number(stored.checkpoints.at(-1)![0]);
    const { blockNumber } = await networks.testnet.client.getTransactionReceipt({ hash: txHash });
    expect(storedBlock).toBeGreaterThanOrEqual(Number(blockNumber));

    const [fromWriter, fromFollower] = [await scrape(writer), await scrape(follower)];
    expect(sample(fromWriter, 'registry_index_writer')).toBe(1);
    expect(sample(fromWriter, 'registry_index_writer_token')).toBe(token);
    expect(sample(fromFollower, 'registry_index_writer')).toBe(0);
    expect(sample(fromFollower, 'registry_index_writer_token')).toBeUndefined();
    for (const text of [fromWriter, fromFollower]) {
      // both live, both with the index in their temporary database
      expect(sample(text, 'registry_index_on_disk')).toBe(1);
      expect(sample(text, 'registry_index_checkpoint_block')).toBe(storedBlock);
      expect(sample(text, 'registry_index_checkpoint_token')).toBe(token);
    }
  });
});
