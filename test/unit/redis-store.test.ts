// RedisStore on a real redis-server, beyond the contract every adapter passes (store.test.ts): two instances
// sharing one Redis (exact results under concurrent update, increment and setIfAbsent), expiry by Redis's own
// clock, key-prefix isolation, keys() under a prefix holding glob characters, the values' text, and the rate limiter
// across two instances (the limit holds over both; the window slides).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROXY_TOKEN_SECRET } from '../../src/aa/proxy-tokens.js';
import { type LimitCount, RateLimiter } from '../../src/services/rate-limits.js';
import { loadSharedSecret, SESSION_SECRET } from '../../src/store/kept-secret.js';
import { encodeValue } from '../../src/store/key-value-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!redisAvailable)(`RedisStore on a real redis-server${redisAvailable ? '' : ` (skipped: ${REDIS_MISSING})`}`, () => {
  let redis: RedisServer;
  let raw: Redis;
  const opened: RedisStore[] = [];
  let prefixes = 0;

  /** A store under a prefix of its own (or the one given, to share it with another instance). */
  async function open(keyPrefix = `t${++prefixes}:`): Promise<RedisStore> {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix });
    opened.push(store);
    return store;
  }
  /** Two instances of the service on one Redis and one prefix. */
  async function pair(): Promise<[RedisStore, RedisStore]> {
    const prefix = `pair${++prefixes}:`;
    return [await open(prefix), await open(prefix)];
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    raw?.disconnect();
    await redis?.stop();
  });

  it('update from two instances at once loses no write', async () => {
    const [a, b] = await pair();
    const add = (store: RedisStore) => store.update<number>('counter', (current) => (current ?? 0) + 1);
    await Promise.all(Array.from({ length: 40 }, (_, i) => add(i % 2 === 0 ? a : b)));
    expect(await a.get('counter')).toBe(40);
    expect(await b.get('counter')).toBe(40);
  });

  it('update keeps a list whole when two instances append at once', async () => {
    const [a, b] = await pair();
    await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).update<number[]>('list', (current = []) => [...current, i])));
    expect(((await a.get<number[]>('list')) ?? []).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('increment from two instances at once: every count handed out once', async () => {
    const [a, b] = await pair();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).increment('burst', 60_000)));
    expect(results.map((r) => r.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(results.map((r) => r.resetAt)).size, 'one window').toBe(1);
  });

  it('setIfAbsent from two instances at once: exactly one claim wins', async () => {
    const [a, b] = await pair();
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).setIfAbsent('replay:sig', i, 60_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await b.get('replay:sig')).toBe(claims.indexOf(true));
  });

  it("expires entries by Redis's clock: set, update (kept or replaced), setIfAbsent and increment windows", async () => {
    const store = await open('expiry:');
    // long enough that the writes before the sleep all land within it on a busy machine
    const TTL_MS = 1_000;
    await store.set('short', 'v', TTL_MS);
    await store.set('forever', 'v');
    await store.update<number>('kept', () => 1, TTL_MS);
    await store.update<number>('kept', (n) => (n ?? 0) + 1); // no ttl: the expiry stays
    await store.update<number>('renewed', () => 1, TTL_MS);
    await store.update<number>('renewed', (n) => (n ?? 0) + 1, 60_000);
    expect(await store.setIfAbsent('claim', 1, TTL_MS)).toBe(true);
    expect((await store.increment('window', TTL_MS)).count).toBe(1);
    expect((await store.increment('window', TTL_MS)).count).toBe(2);
    expect(await raw.pttl('expiry:short')).toBeGreaterThan(0);
    expect(await raw.pttl('expiry:forever'), 'no expiry').toBe(-1);
    await sleep(TTL_MS + 500);
    expect(await store.get('short')).toBeUndefined();
    expect(await store.get('forever')).toBe('v');
    expect(await store.get('kept')).toBeUndefined();
    expect(await store.get('renewed')).toBe(2);
    expect(await store.setIfAbsent('claim', 2, TTL_MS), 'the claim ended with its ttl').toBe(true);
    expect((await store.increment('window', TTL_MS)).count, 'a new window').toBe(1);
    expect(await store.keys('')).toEqual(['claim', 'forever', 'renewed', 'window']);
  });

  it('keeps values as the other adapters do (the same text under the prefixed key)', async () => {
    const store = await open('same-text:');
    const value = { agentId: 123456789012345678901234567890n, list: [1, 'ü', null], nested: { ok: true } };
    await store.set('session:x', value);
    expect(await raw.get('same-text:session:x')).toBe(encodeValue(value));
    const counter = await store.increment('rate:ip', 60_000);
    expect(await raw.get('same-text:rate:ip')).toBe(encodeValue(counter));
    expect(await store.get('rate:ip')).toEqual(counter);
  });

  it('keeps deployments apart by key prefix: another prefix neither reads, lists nor overwrites a key', async () => {
    const blue = await open('blue:');
    const green = await open('green:');
    await blue.set('session:1', 'blue');
    await green.set('session:1', 'green');
    expect(await blue.get('session:1')).toBe('blue');
    expect(await green.get('session:1')).toBe('green');
    expect(await blue.setIfAbsent('claim', 1, 60_000)).toBe(true);
    expect(await green.setIfAbsent('claim', 1, 60_000), 'another deployment claims its own').toBe(true);
    await green.delete('session:1');
    expect(await blue.keys('session:')).toEqual(['session:1']);
    expect(await green.keys('')).toEqual(['claim']);
  });

  it('keys(): glob characters in the store prefix and in the asked prefix match only themselves', async () => {
    const store = await open('glob*[a-z]?\\:');
    for (const key of ['s*:1', 's*:2', 's?:1', 'sx:1', 's[*]:1', 's\\:1', 'other']) await store.set(key, 1);
    const neighbour = await open('globX[a-z]?\\:'); // what an unescaped '*' in the store prefix would match
    await neighbour.set('s*:9', 1);
    expect(await store.keys('s*:')).toEqual(['s*:1', 's*:2']);
    expect(await store.keys('s?')).toEqual(['s?:1']);
    expect(await store.keys('s[*]')).toEqual(['s[*]:1']);
    expect(await store.keys('s\\')).toEqual(['s\\:1']);
    expect(await store.keys('')).toHaveLength(7);
  });

  it('a large keyspace is listed whole, sorted, without duplicates', async () => {
    const store = await open();
    const keys = Array.from({ length: 1_200 }, (_, i) => `session:${String(i).padStart(4, '0')}`);
    await Promise.all(keys.map((key) => store.set(key, 1)));
    expect(await store.keys('session:')).toEqual(keys);
  });

  describe('generated secrets in the shared store', () => {
    const dirs: string[] = [];
    const dataDir = (): string => {
      const dir = mkdtempSync(join(tmpdir(), 'shared-secret-'));
      dirs.push(dir);
      return dir;
    };
    afterAll(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('instances starting at once all end up with the one secret the first put in the store', async () => {
      const [a, b] = await pair();
      const logs: string[] = [];
      const load = (store: RedisStore) => loadSharedSecret(SESSION_SECRET, { store, dataDir: dataDir(), log: (m) => logs.push(m) });
      const secrets = await Promise.all([load(a), load(b), load(a), load(b)]);
      for (const secret of secrets) expect(Buffer.from(secret).toString()).toBe(Buffer.from(secrets[0] as Uint8Array).toString());
      expect(secrets[0]).toHaveLength(64);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(/^generated a session secret in the shared store \(secret:session-secret\)/);
      // each kept secret has its own key; a set value wins over the store
      const token = await loadSharedSecret(PROXY_TOKEN_SECRET, { store: b, dataDir: dataDir(), log: () => undefined });
      expect(Buffer.from(token).equals(Buffer.from(secrets[0] as Uint8Array))).toBe(false);
      const set = 'x'.repeat(32);
      expect(Buffer.from(await loadSharedSecret(SESSION_SECRET, { value: set, store: a, dataDir: dataDir(), log: () => undefined })).toString()).toBe(
        set,
      );
    });

    it("the first instance offers the secret an earlier single-instance run kept in DATA_DIR, so that run's tokens stay valid", async () => {
      const store = await open();
      const dir = dataDir();
      writeFileSync(join(dir, 'session-secret'), `${'ab'.repeat(32)}\n`);
      const secret = await loadSharedSecret(SESSION_SECRET, { store, dataDir: dir, log: () => undefined });
      expect(Buffer.from(secret).toString()).toBe('ab'.repeat(32));
      expect(await store.get('secret:session-secret')).toBe('ab'.repeat(32));
    });
  });

  describe('rate limits on the shared Redis', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('one limit holds across two instances: concurrent uses from both, exactly the limit allowed', async () => {
      const [a, b] = await pair();
      const rule = { name: 'across', what: 'uses', limit: 10, windowMs: 60_000 };
      const limiters = [new RateLimiter(a, rule), new RateLimiter(b, rule)];
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (limiters[i % 2] as RateLimiter).hit('203.0.113.9')));
      const allowed = results.filter((r) => r.count <= rule.limit);
      // the previous window is empty in a fresh prefix, so exactly the limit fits whatever the moment
      expect(allowed).toHaveLength(10);
      expect(results.filter((r) => r.count > rule.limit)).toHaveLength(20);
      // another client has its own budget, on either instance
      expect((await (limiters[1] as RateLimiter).hit('198.51.100.1')).count).toBe(1);
      await expect((limiters[0] as RateLimiter).consume('203.0.113.9')).rejects.toMatchObject({ status: 429 });
    });

    it('slides at the window boundary: the last window counts in full at its end and by its remaining share after', async () => {
      const [a, b] = await pair();
      const rule = { name: 'sliding', what: 'uses', limit: 10, windowMs: 60_000 };
      const first = new RateLimiter(a, rule);
      const second = new RateLimiter(b, rule);
      // the limiter reads Date.now (as the library does); Redis's TTLs stay real, and last two windows from here
      const start = Math.ceil(Date.now() / 60_000) * 60_000 + 45_000; // three quarters into a minute
      vi.useFakeTimers({ toFake: ['Date'], now: start });
      const client = '192.0.2.7';
      for (let i = 0; i < 10; i++) expect((await (i % 2 ? first : second).hit(client)).count).toBeLessThanOrEqual(10);
      const refused: LimitCount = await first.hit(client);
      expect(refused.count).toBe(11);
      // nothing in the window before: the uses fit again once the next window has begun and their share shrinks
      expect(refused.resetAt - Date.now()).toBe(15_000 + 6_000);

      vi.setSystemTime(start + 15_000); // the next minute begins: 10 * (1 - 0) + 1 > 10
      expect((await second.hit(client)).count).toBe(11);
      vi.setSystemTime(start + 15_000 + 6_000); // 10 * (1 - 0.1) + 1 = 10: fits
      expect((await second.hit(client)).count).toBe(10);
      expect((await first.hit(client)).count, 'the window is full again').toBe(11);
      vi.setSystemTime(start + 15_000 + 30_000); // half of the last minute's 10, plus the 1 of this one: 4 more fit
      const half = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? first : second).hit(client)));
      expect(half.filter((r) => r.count <= 10)).toHaveLength(4);
      expect(await first.current(client)).toEqual({ count: 10, resetAt: start + 15_000 + 120_000 });
    });

    it('undo gives a use back and reset forgets the client, on every instance', async () => {
      const [a, b] = await pair();
      const rule = { name: 'undo', what: 'uses', limit: 2, windowMs: 60_000 };
      const first = new RateLimiter(a, rule);
      const second = new RateLimiter(b, rule);
      await first.hit('c');
      await first.hit('c');
      expect((await second.hit('c')).count).toBe(3);
      await second.undo('c');
      expect((await second.hit('c')).count, 'one came back').toBeLessThanOrEqual(2);
      await first.reset('c');
      expect(await second.current('c')).toBeUndefined();
    });
  });
});
