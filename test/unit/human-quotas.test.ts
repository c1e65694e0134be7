// Per-human quotas in every store: the SDK's memory and Redis stores (a real redis-server) and the service's, over
// the store port (memory, sqlite and Redis adapters). The same behaviour in each: two agents of one human share one
// budget while another human has its own, the trial tier then the free one, Retry-After to the second, and the same
// answers as the memory store over one long sequence. Then what each store adds: atomic across instances, kept
// across a restart, bounded in memory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisQuotaStore } from '../../src/client/redis-quota-store.js';
import { compilePolicy, enforcePolicy, type PolicySubject } from '../../src/core/agent-policy.js';
import { MemoryQuotaStore, type Quota, type QuotaInput, type QuotaStore, type QuotaUse, quotaSchema } from '../../src/core/human-quota.js';
import { PolicyRefusalError } from '../../src/core/policy-refusal.js';
import { HumanQuotas } from '../../src/services/human-quotas.js';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const T0 = 1_800_000_000_000;
const quotaOf = (input: QuotaInput): Quota => quotaSchema.parse(input);

const dir = mkdtempSync(join(tmpdir(), 'human-quotas-'));
let redis: RedisServer | undefined;
const closers: (() => unknown)[] = [];
beforeAll(async () => {
  if (redisAvailable) redis = await startRedisServer();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let opened = 0;
const redisClient = (): Redis => {
  const client = new Redis(redis!.url);
  closers.push(() => client.disconnect());
  return client;
};
const sqliteStore = (file = join(dir, `store-${++opened}.sqlite`)): SqliteStore => {
  const store = new SqliteStore(file);
  closers.push(() => store.close());
  return store;
};
const redisStore = async (keyPrefix = `kv-${++opened}:`): Promise<RedisStore> => {
  const store = await RedisStore.connect({ url: redis!.url, keyPrefix });
  closers.push(() => store.close());
  return store;
};
const over = (store: KeyValueStore): QuotaStore => new HumanQuotas(store);

/** Each store as a fresh one (its own prefix or file). */
const STORES: [string, { needsRedis: boolean; open: () => QuotaStore | Promise<QuotaStore> }][] = [
  ['MemoryQuotaStore', { needsRedis: false, open: () => new MemoryQuotaStore() }],
  ['redisQuotaStore', { needsRedis: true, open: () => redisQuotaStore(redisClient(), { keyPrefix: `q-${++opened}:` }) }],
  ['HumanQuotas on MemoryStore', { needsRedis: false, open: () => over(new MemoryStore()) }],
  ['HumanQuotas on SqliteStore', { needsRedis: false, open: () => over(sqliteStore()) }],
  ['HumanQuotas on RedisStore', { needsRedis: true, open: async () => over(await redisStore()) }],
];

const human = (nullifier: bigint, agentCount = 2): PolicySubject => ({
  credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true] },
  agentCount,
  strength: 100,
  proofExpiresAt: T0 / 1000 + 86_400,
  nullifier,
});

describe.each(STORES)('%s', (_name, { needsRedis, open }) => {
  const skip = needsRedis && !redisAvailable;
  const run = skip ? it.skip : it;
  if (skip) it.skip(`(skipped: ${REDIS_MISSING})`, () => undefined);

  run('counts per human: two agents of one human share one budget, another human has its own', async () => {
    const quotas = await open();
    const policy = compilePolicy({ quota: { limit: 3, windowS: 60 } });
    // the same human (nullifier 7) signing with two agents, then a second human (nullifier 8)
    const first = human(7n);
    const second = { ...human(7n), credentials: { ...human(7n).credentials } };
    const other = human(8n, 1);
    const at = (seconds: number) => ({ quotas, nowMs: T0 + seconds * 1000 });
    const uses = [await enforcePolicy(policy, first, at(0)), await enforcePolicy(policy, second, at(1)), await enforcePolicy(policy, first, at(2))];
    expect(uses.map((use) => use.ok && use.quota?.remaining)).toEqual([2, 1, 0]);
    expect(await enforcePolicy(policy, second, at(3)), 'the fourth, from either agent').toEqual({
      ok: false,
      policy: 'quota',
      retryAfterS: 57,
      error: "Quota exhausted: at most 3 requests per 60 s per human, shared by all of the human's agents; retry in 57 s",
    });
    expect(await enforcePolicy(policy, first, at(3))).toMatchObject({ ok: false, retryAfterS: 57 });
    expect(await enforcePolicy(policy, other, at(3)), 'another human').toEqual({
      ok: true,
      quota: { ok: true, tier: 'free', remaining: 2, retryAfterS: 0 },
    });
    expect(await enforcePolicy(policy, second, at(60)), 'a new window').toMatchObject({ ok: true, quota: { remaining: 2 } });
  });

  run('serves the trial tier first, then the free tier per window', async () => {
    const quotas = await open();
    const quota = quotaOf({ limit: 2, windowS: 60, trial: { limit: 3 } });
    const take = (seconds: number) => quotas.consume('h', quota, T0 + seconds * 1000);
    const uses: QuotaUse[] = [];
    for (const seconds of [0, 1, 2, 3, 4, 5, 30, 63, 64, 65, 200]) uses.push(await take(seconds));
    expect(uses).toEqual([
      { ok: true, tier: 'trial', remaining: 4, retryAfterS: 0 },
      { ok: true, tier: 'trial', remaining: 3, retryAfterS: 0 },
      { ok: true, tier: 'trial', remaining: 2, retryAfterS: 0 },
      // the trial is used up: the free window starts with this request, at 3 s
      { ok: true, tier: 'free', remaining: 1, retryAfterS: 0 },
      { ok: true, tier: 'free', remaining: 0, retryAfterS: 0 },
      { ok: false, remaining: 0, retryAfterS: 58 },
      { ok: false, remaining: 0, retryAfterS: 33 },
      { ok: true, tier: 'free', remaining: 1, retryAfterS: 0 },
      { ok: true, tier: 'free', remaining: 0, retryAfterS: 0 },
      { ok: false, remaining: 0, retryAfterS: 58 },
      // long after: the trial stays used, the window is new
      { ok: true, tier: 'free', remaining: 1, retryAfterS: 0 },
    ]);
  });

  run('Retry-After counts whole seconds to the window end, at least 1; the window end serves again', async () => {
    const quotas = await open();
    const quota = quotaOf({ limit: 1, windowS: 10 });
    const take = (ms: number) => quotas.consume('h', quota, T0 + ms);
    expect(await take(0)).toMatchObject({ ok: true });
    expect((await take(1)).retryAfterS).toBe(10);
    expect((await take(500)).retryAfterS).toBe(10);
    expect((await take(1_000)).retryAfterS).toBe(9);
    expect((await take(9_001)).retryAfterS).toBe(1);
    expect((await take(9_999)).retryAfterS).toBe(1);
    expect(await take(10_000)).toEqual({ ok: true, tier: 'free', remaining: 0, retryAfterS: 0 });
  });

  run('answers as the memory store does over one long sequence of several humans', async () => {
    for (const quota of [quotaOf({ limit: 3, windowS: 5 }), quotaOf({ limit: 2, windowS: 7, trial: { limit: 4 } })]) {
      const reference = new MemoryQuotaStore();
      const quotas = await open();
      // a fixed pseudo-random walk: 4 humans, steps of 0 to 1.9 s
      let seed = 26;
      const next = (bound: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed % bound;
      };
      let now = T0;
      const expected: QuotaUse[] = [];
      const got: QuotaUse[] = [];
      for (let i = 0; i < 300; i++) {
        now += next(20) * 100;
        const key = `human-${next(4)}`;
        expected.push(reference.consume(key, quota, now));
        got.push(await quotas.consume(key, quota, now));
      }
      expect(got).toEqual(expected);
      expect(new Set(got.map((use) => use.tier ?? 'refused')), 'every outcome met').toEqual(
        new Set(quota.trial ? ['trial', 'free', 'refused'] : ['free', 'refused']),
      );
    }
  });
});

describe.skipIf(!redisAvailable)(`on a real redis-server${redisAvailable ? '' : ` (skipped: ${REDIS_MISSING})`}`, () => {
  const quota = quotaOf({ limit: 5, windowS: 60 });

  it('redisQuotaStore: two instances drawing at once serve exactly the limit', async () => {
    const prefix = `race-${++opened}:`;
    const [a, b] = [redisQuotaStore(redisClient(), { keyPrefix: prefix }), redisQuotaStore(redisClient(), { keyPrefix: prefix })];
    const uses = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).consume('h', quota, T0 + i)));
    expect(uses.filter((use) => use.ok)).toHaveLength(5);
    expect(
      uses
        .filter((use) => use.ok)
        .map((use) => use.remaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
  });

  it('redisQuotaStore: a human without a trial leaves when the window ends; with a trial, the entry is kept', async () => {
    const client = redisClient();
    const store = redisQuotaStore(client, { keyPrefix: 'ttl:' });
    await store.consume('plain', quota, T0);
    const ttl = await client.pttl('ttl:plain');
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await store.consume('tried', quotaOf({ ...quota, trial: { limit: 1 } }), T0);
    await store.consume('tried', quotaOf({ ...quota, trial: { limit: 1 } }), T0);
    expect(await client.pttl('ttl:tried'), 'no expiry').toBe(-1);
    expect(await client.hgetall('ttl:tried')).toEqual({ t: '1', c: '1', r: String(T0 + 60_000) });
  });

  it('HumanQuotas: two service instances sharing one Redis serve exactly the limit', async () => {
    const prefix = `shared-${++opened}:`;
    const [a, b] = [new HumanQuotas(await redisStore(prefix)), new HumanQuotas(await redisStore(prefix))];
    const uses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).consume('h', quota, T0 + i)));
    expect(uses.filter((use) => use.ok)).toHaveLength(5);
  });
});

describe('HumanQuotas on sqlite', () => {
  const quota = quotaOf({ limit: 4, windowS: 60, trial: { limit: 2 } });

  it('keeps each human’s budget across a restart', async () => {
    const file = join(dir, 'restart.sqlite');
    const before = new SqliteStore(file);
    const quotas = new HumanQuotas(before);
    for (let i = 0; i < 4; i++) await quotas.consume('h', quota, T0 + i);
    await before.close();
    const after = sqliteStore(file);
    expect(await new HumanQuotas(after).consume('h', quota, T0 + 10), 'two trial and two free used before').toEqual({
      ok: true,
      tier: 'free',
      remaining: 1,
      retryAfterS: 0,
    });
  });

  it('two instances on one file serve exactly the budget', async () => {
    const file = join(dir, 'two.sqlite');
    const [a, b] = [new HumanQuotas(sqliteStore(file)), new HumanQuotas(sqliteStore(file))];
    const uses = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).consume('h', quota, T0 + i)));
    expect(uses.filter((use) => use.tier === 'trial')).toHaveLength(2);
    expect(uses.filter((use) => use.tier === 'free')).toHaveLength(4);
  });

  it('enforce throws the refusal the error handler answers: 429 with Retry-After, naming the quota', async () => {
    const quotas = new HumanQuotas(sqliteStore(), () => T0);
    const policy = compilePolicy({ maxAgentsPerHuman: 2, quota: { limit: 1, windowS: 30 } });
    expect(await quotas.enforce(policy, human(9n), 'testnet')).toEqual({ ok: true, tier: 'free', remaining: 0, retryAfterS: 0 });
    const refused = await quotas.enforce(policy, human(9n), 'testnet').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PolicyRefusalError);
    expect((refused as PolicyRefusalError).answer).toEqual({
      status: 429,
      body: { policy: 'quota', error: "Quota exhausted: at most 1 requests per 30 s per human, shared by all of the human's agents; retry in 30 s" },
      headers: { 'Retry-After': '30' },
    });
    expect(await quotas.enforce(policy, human(9n), 'mainnet'), 'the same nullifier on another chain').toMatchObject({ ok: true });
    const tooMany = await quotas.enforce(policy, human(10n, 3), 'testnet').catch((error: unknown) => error);
    expect((tooMany as PolicyRefusalError).answer).toMatchObject({ status: 403, body: { policy: 'maxAgentsPerHuman' }, headers: {} });
  });
});

describe('MemoryQuotaStore bounds', () => {
  it('lets a human go once the window has passed', () => {
    const quotas = new MemoryQuotaStore();
    const quota = quotaOf({ limit: 1, windowS: 10 });
    for (let i = 0; i < 50; i++) quotas.consume(`h${i}`, quota, T0 + i);
    expect(quotas.size).toBe(50);
    quotas.consume('late', quota, T0 + 10_050);
    expect(quotas.size, 'only the one just counted').toBe(1);
  });

  it('keeps at most maxEntries, the least recently used leaving first', () => {
    const quotas = new MemoryQuotaStore(3);
    const quota = quotaOf({ limit: 1, windowS: 60, trial: { limit: 1 } });
    for (const key of ['a', 'b', 'c']) quotas.consume(key, quota, T0);
    quotas.consume('a', quota, T0 + 1); // a used again: b is now the least recent
    quotas.consume('d', quota, T0 + 2);
    expect(quotas.size).toBe(3);
    expect(quotas.consume('b', quota, T0 + 3), 'b was forgotten: its trial again').toMatchObject({ tier: 'trial' });
    expect(quotas.consume('a', quota, T0 + 4), 'a was kept: its window is used').toMatchObject({ ok: false });
  });
});
