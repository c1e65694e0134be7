import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'kv-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The same contract for every adapter. Redis keeps time by its own clock (TTLs), which a test cannot move: the
// checks that travel in time run on the adapters with an injected clock, and redis-store.test.ts checks real expiry.
let redis: RedisServer | undefined;
beforeAll(async () => {
  if (redisAvailable) redis = await startRedisServer();
});
afterAll(() => redis?.stop());

let fileCount = 0;
let prefixCount = 0;
interface Adapter {
  open: (clock: () => number) => KeyValueStore | Promise<KeyValueStore>;
  /** The injected clock decides expiry. */
  travels: boolean;
}
const adapters: [string, Adapter][] = [
  ['MemoryStore', { open: (clock) => new MemoryStore(clock), travels: true }],
  ['SqliteStore', { open: (clock) => new SqliteStore(join(dir, `nested/store-${++fileCount}.sqlite`), clock), travels: true }],
  // each test its own key prefix on the one server: a fresh store as the others get
  ['RedisStore', { open: (clock) => RedisStore.connect({ url: redis!.url, keyPrefix: `contract-${++prefixCount}:`, clock }), travels: false }],
];

describe.each(adapters)('%s', (name, { open, travels }) => {
  /** A clock test's name, saying why a store whose server keeps its own time skips it. */
  const clocked = (test: string): string => (travels ? test : `${test} (skipped: ${name} expires keys by its server's clock, not an injected one)`);
  let now: number;
  let store: KeyValueStore;

  beforeEach(async (context) => {
    if (name === 'RedisStore' && !redisAvailable) context.skip(REDIS_MISSING);
    now = 1_700_000_000_000;
    store = await open(() => now);
  });
  afterEach(() => store?.close());

  it('sets, gets and deletes JSON values', async () => {
    const value = { a: 1, list: ['x', null, true], nested: { s: 'ü' } };
    await store.set('k', value);
    expect(await store.get('k')).toEqual(value);
    await store.set('k', 'replaced');
    expect(await store.get('k')).toBe('replaced');
    await store.delete('k');
    expect(await store.get('k')).toBeUndefined();
    await store.delete('never-set'); // deleting a missing key is fine
    expect(await store.get('missing')).toBeUndefined();
  });

  it('lists the live keys under a prefix, in key order', async () => {
    await store.set('session:b', 1);
    await store.set('session:a', 1);
    await store.set('session-export:a', 1);
    await store.set('sessions', 1);
    await store.set('session:gone', 1, 1_000);
    expect(await store.keys('session:')).toEqual(['session:a', 'session:b', 'session:gone']);
    if (travels) {
      now += 1_000;
      expect(await store.keys('session:')).toEqual(['session:a', 'session:b']);
    }
    expect(await store.keys('nothing:')).toEqual([]);
  });

  it('hands out copies, not the stored value itself', async () => {
    const value = { n: 1 };
    await store.set('k', value);
    value.n = 2;
    const read = await store.get<{ n: number }>('k');
    read!.n = 3;
    expect(await store.get('k')).toEqual({ n: 1 });
  });

  it('round-trips bigints, nested and at the top level', async () => {
    const value = { agentId: 123456789012345678901234567890n, list: [-5n, 0n], plain: '7' };
    await store.set('big', value);
    const read = await store.get<typeof value>('big');
    expect(read).toEqual(value);
    expect(typeof read!.agentId).toBe('bigint');
    await store.set('top', 42n);
    expect(await store.get('top')).toBe(42n);
  });

  it('round-trips strings of every shape, as strings (kept as text, not as JSON)', async () => {
    const strings = [
      '',
      "'",
      "'quoted'",
      '"json string"',
      '{"a":1}',
      '[1,2]',
      '42',
      'null',
      'tab\tnew\nline',
      'ü \u2028 😀',
      '\ud800 lone',
      '$bigint',
    ];
    for (const [index, value] of strings.entries()) await store.set(`s${index}`, value);
    for (const [index, value] of strings.entries()) expect(await store.get(`s${index}`)).toBe(value);
    expect(await store.update<string>('s4', (current) => `${current}!`)).toBe('{"a":1}!');
    expect(await store.get('s4')).toBe('{"a":1}!');
    // objects holding such strings, and the tag's name as text, are JSON as before
    const value = { text: "'x", tag: 'the "$bigint" tag', box: { $bigint: 'not digits' } };
    await store.set('o', value);
    expect(await store.get('o')).toEqual(value);
  });

  it.skipIf(!travels)(clocked('expires an entry at its ttl, by the injected clock'), async () => {
    await store.set('short', 'v', 1_000);
    await store.set('forever', 'v');
    now += 999;
    expect(await store.get('short')).toBe('v');
    now += 1;
    expect(await store.get('short')).toBeUndefined();
    now += 10 * 365 * 24 * 3600_000;
    expect(await store.get('forever')).toBe('v');
  });

  it('update: creates, modifies, deletes, and returns the new value', async () => {
    expect(await store.update<number>('n', (current) => (current ?? 0) + 1)).toBe(1);
    expect(await store.update<number>('n', (current) => (current ?? 0) + 1)).toBe(2);
    expect(await store.get('n')).toBe(2);
    expect(await store.update<number>('n', () => undefined)).toBeUndefined();
    expect(await store.get('n')).toBeUndefined();
  });

  it.skipIf(!travels)(clocked('update: keeps the old expiry without a ttl and replaces it with one'), async () => {
    await store.set('k', 1, 1_000);
    now += 500;
    await store.update<number>('k', (current) => current! + 1);
    now += 499;
    expect(await store.get('k')).toBe(2);
    await store.update<number>('k', (current) => current! + 1, 1_000); // expires at now + 1000 from here
    now += 999;
    expect(await store.get('k')).toBe(3);
    now += 1;
    expect(await store.get('k')).toBeUndefined();
  });

  it.skipIf(!travels)(clocked('update: an expired entry looks absent to fn'), async () => {
    await store.set('k', 'old', 10);
    now += 10;
    let seen: unknown = 'not called';
    await store.update<string>('k', (current) => {
      seen = current;
      return 'new';
    });
    expect(seen).toBeUndefined();
    now += 1_000_000; // created without a ttl and the expired entry's expiry is not inherited
    expect(await store.get('k')).toBe('new');
  });

  it('update: fn throwing leaves the value untouched', async () => {
    await store.set('k', { v: 1 });
    await expect(
      store.update<{ v: number }>('k', () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await store.get('k')).toEqual({ v: 1 });
  });

  it('updateWith: the key and the other writes land together, or nothing does when fn refuses', async () => {
    await store.set('gone', 1);
    const written = await store.updateWith<{ token: number }>('checkpoint', (current) => ({
      value: { token: (current?.token ?? 0) + 1 },
      writes: new Map<string, unknown>([
        ['bucket:1', { a: 1n }],
        ['gone', undefined],
      ]),
    }));
    expect(written).toEqual({ token: 1 });
    expect(await store.get('bucket:1')).toEqual({ a: 1n });
    expect(await store.get('gone')).toBeUndefined();
    await expect(
      store.updateWith('checkpoint', () => {
        throw new Error('fenced');
      }),
    ).rejects.toThrow('fenced');
    expect(await store.get('bucket:1')).toEqual({ a: 1n });
    expect(await store.get('checkpoint')).toEqual({ token: 1 });
    // concurrent writers each see the one before
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.updateWith<{ token: number }>('checkpoint', (c) => ({ value: { token: (c?.token ?? 0) + 1 }, writes: new Map([[`b${i}`, i]]) })),
      ),
    );
    expect(await store.get('checkpoint')).toEqual({ token: 21 });
    expect(await store.get('b19')).toBe(19);
  });

  it('update: concurrent read-modify-writes lose no increment', async () => {
    await Promise.all(Array.from({ length: 50 }, () => store.update<number>('counter', (current) => (current ?? 0) + 1)));
    expect(await store.get('counter')).toBe(50);
  });

  it('increment: counts within a fixed window and starts a new one after it', async () => {
    const start = now;
    expect(await store.increment('ip:1', 60_000)).toEqual({ count: 1, resetAt: start + 60_000 });
    now += 30_000;
    expect(await store.increment('ip:1', 60_000)).toEqual({ count: 2, resetAt: start + 60_000 });
    expect(await store.increment('ip:2', 60_000)).toEqual({ count: 1, resetAt: now + 60_000 });
    if (travels) {
      now = start + 60_000; // the window ends at resetAt
      expect(await store.increment('ip:1', 60_000)).toEqual({ count: 1, resetAt: now + 60_000 });
    }
  });

  it('increment: concurrent increments each get their own count', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => store.increment('burst', 1_000)));
    expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('setIfAbsent: the first claim of a key wins until its ttl ends; concurrent claims, exactly one', async () => {
    expect(await store.setIfAbsent('replay:x', 1, 1_000)).toBe(true);
    expect(await store.setIfAbsent('replay:x', 2, 1_000)).toBe(false);
    expect(await store.get('replay:x')).toBe(1);
    if (travels) {
      now += 1_000;
      expect(await store.setIfAbsent('replay:x', 3, 1_000)).toBe(true);
    }
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => store.setIfAbsent('replay:race', i, 1_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('refuses values and ttls it cannot keep', async () => {
    await expect(store.set('fn', () => 1)).rejects.toThrow(TypeError);
    await expect(store.set('k', 1, Number.NaN)).rejects.toThrow(RangeError);
    await expect(store.increment('k', 0)).rejects.toThrow(RangeError);
  });

  it('size: its backend, the live keys, and bytes that grow with what is written', async () => {
    const backend = { MemoryStore: 'memory', SqliteStore: 'sqlite', RedisStore: 'redis' }[name];
    const before = await store.size();
    expect(before.backend).toBe(backend);
    await store.set('big', 'x'.repeat(200_000));
    await store.set('small', { n: 1 });
    await store.set('short', 1, 1_000);
    const after = await store.size();
    // redis counts the whole database: the keys of this test's prefix came on top of the earlier tests'
    expect(after.keys - before.keys).toBe(3);
    // sqlite: the pages in the write-ahead log; redis: its used_memory; memory: UTF-16 units
    expect(after.bytes - before.bytes).toBeGreaterThanOrEqual(200_000);
    if (travels) {
      now += 1_000;
      expect((await store.size()).keys - before.keys).toBe(2);
    }
  });
});

describe('SqliteStore on disk', () => {
  it('keeps data across a reopen of the same file (a service restart)', async () => {
    const path = join(dir, 'restart/data.sqlite');
    const first = new SqliteStore(path);
    await first.set('session:abc', { stage: 'qr-ready', agentId: 7n }, 60_000);
    await first.increment('rate:ip', 60_000);
    expect(await first.setIfAbsent('replay:sig', 1, 60_000)).toBe(true);
    await first.close();

    const second = new SqliteStore(path);
    expect(await second.get('session:abc')).toEqual({ stage: 'qr-ready', agentId: 7n });
    expect((await second.increment('rate:ip', 60_000)).count).toBe(2);
    expect(await second.setIfAbsent('replay:sig', 1, 60_000), 'a claim survives the restart').toBe(false);
    await second.close();
  });

  it('purges expired rows when it opens the file', async () => {
    let now = 1_000;
    const path = join(dir, 'purge.sqlite');
    const first = new SqliteStore(path, () => now);
    await first.set('gone', 1, 10);
    await first.set('kept', 1);
    await first.close();
    now = 2_000;
    const second = new SqliteStore(path, () => now);
    await second.close();

    // Read the raw table: the expired row is gone, not just hidden.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT key FROM kv ORDER BY key').all()).toEqual([{ key: 'kept' }]);
    db.close();
  });

  it('moves the WITHOUT ROWID table of earlier versions into a rowid table, every live row and expiry kept', async () => {
    const path = join(dir, 'earlier-schema.sqlite');
    const { default: Database } = await import('better-sqlite3');
    const earlier = new Database(path);
    earlier.exec(`
      CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER) WITHOUT ROWID;
      CREATE INDEX kv_expires_at ON kv (expires_at) WHERE expires_at IS NOT NULL;
    `);
    const insert = earlier.prepare('INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?)');
    insert.run('session:a', JSON.stringify({ stage: 'qr-ready', agentId: { $bigint: '7' } }), 5_000);
    insert.run('a2a:task:t1', JSON.stringify('v1.sealed'), null); // a string as JSON, as earlier versions kept it
    insert.run('gone', '1', 1_500);
    earlier.close();

    let now = 2_000;
    const store = new SqliteStore(path, () => now);
    expect(await store.get('session:a')).toEqual({ stage: 'qr-ready', agentId: 7n });
    expect(await store.get('a2a:task:t1')).toBe('v1.sealed');
    expect(await store.get('gone')).toBeUndefined();
    await store.set('a2a:task:t2', 'v1.other', 10_000);
    now = 5_000; // session:a's expiry instant
    expect(await store.get('session:a')).toBeUndefined();
    expect(await store.keys('a2a:task:')).toEqual(['a2a:task:t1', 'a2a:task:t2']);
    await store.close();
    // a second open finds the table moved and leaves it as it is
    const again = new SqliteStore(path, () => now);
    expect(await again.get('a2a:task:t2')).toBe('v1.other');
    await again.close();

    const db = new Database(path, { readonly: true });
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as { name: string; sql: string }[];
    expect(tables.map((table) => table.name)).toEqual(['kv']);
    expect(tables[0]?.sql).not.toMatch(/WITHOUT ROWID/i);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'kv_expires_at'").all()).toHaveLength(1);
    db.close();
  });

  it('uses WAL mode', async () => {
    const path = join(dir, 'wal.sqlite');
    const store = new SqliteStore(path);
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });
});

// The writes of one event-loop turn are committed together at its end (setImmediate); a second store on the same
// file stands for another process, which sees a write only once it has committed.
describe('SqliteStore group commit', () => {
  let count = 0;
  const opened: SqliteStore[] = [];
  /** A fresh file and two stores on it: the writer, and another "process" reading what has committed. */
  const pair = (): { path: string; writer: SqliteStore; reader: SqliteStore } => {
    const path = join(dir, `group-commit/${++count}.sqlite`);
    const writer = new SqliteStore(path);
    const reader = new SqliteStore(path);
    opened.push(writer, reader);
    return { path, writer, reader };
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('a write is committed at the end of its turn, and its promise resolves only after the commit', async () => {
    const { writer, reader } = pair();
    const written = writer.set('k', { v: 1 });
    // awaiting a read only runs microtasks: still the same turn, nothing committed yet
    expect(await reader.get('k')).toBeUndefined();
    expect(await reader.keys('')).toEqual([]);
    await written;
    expect(await reader.get('k')).toEqual({ v: 1 });

    // each kind of write: resolved means another connection reads it
    const updated = writer.update<number>('n', (current) => (current ?? 0) + 10);
    const claimed = writer.setIfAbsent('claim', 'mine', 60_000);
    const counted = writer.increment('rate', 60_000);
    const deleted = writer.delete('k');
    expect(await reader.get('n')).toBeUndefined();
    expect(await reader.get('k')).toEqual({ v: 1 });
    expect(await updated).toBe(10);
    expect(await claimed).toBe(true);
    expect((await counted).count).toBe(1);
    await deleted;
    expect(await reader.get('n')).toBe(10);
    expect(await reader.get('claim')).toBe('mine');
    expect(await reader.get('rate')).toMatchObject({ count: 1 });
    expect(await reader.get('k')).toBeUndefined();
  });

  it('a string changed by many updates of one turn: each sees the one before, and the last lands (as text)', async () => {
    const { writer, reader, path } = pair();
    await writer.set('index', '[]');
    const updates = Array.from({ length: 20 }, (_, i) =>
      writer.update<string>('index', (current) => (current === '[]' ? `[${i}]` : `[${i},${(current ?? '[').slice(1)}`)),
    );
    const results = await Promise.all(updates);
    expect(results[0]).toBe('[0]');
    expect(results[19]).toBe(`[${Array.from({ length: 20 }, (_, i) => 19 - i).join(',')}]`);
    expect(await reader.get('index')).toBe(results[19]);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT value FROM kv WHERE key = 'index'").pluck().get()).toBe(`'${results[19]}`);
    db.close();
  });

  it('the many writes of one turn all land, in the order they were made', async () => {
    const { writer, reader } = pair();
    const sets = Array.from({ length: 50 }, (_, i) => writer.set(`many:${String(i).padStart(2, '0')}`, i));
    // set, delete, set of one key: the last one wins
    const sequence = [writer.set('seq', 'first'), writer.delete('seq'), writer.set('seq', 'last')];
    // an update sees the set queued before it, the next update sees that update
    const base = writer.set('u', 1);
    const plusOne = writer.update<number>('u', (current) => (current ?? 0) + 1);
    const timesTen = writer.update<number>('u', (current) => (current ?? 0) * 10);
    // claims and counters made in one turn are each decided against the ones before them
    const claims = [writer.setIfAbsent('c', 'first', 60_000), writer.setIfAbsent('c', 'second', 60_000)];
    const counts = [writer.increment('ctr', 60_000), writer.increment('ctr', 60_000), writer.increment('ctr', 60_000)];
    // a delete queued after an update undoes it, an update after a delete starts from nothing
    const removed = [writer.set('d', 5), writer.delete('d'), writer.update<number>('d', (current) => (current ?? 100) + 1)];

    expect(await reader.keys('many:')).toEqual([]);
    await Promise.all([...sets, ...sequence, base]);
    expect(await Promise.all([plusOne, timesTen])).toEqual([2, 20]);
    expect(await Promise.all(claims)).toEqual([true, false]);
    expect((await Promise.all(counts)).map((c) => c.count)).toEqual([1, 2, 3]);
    expect((await Promise.all(removed))[2]).toBe(101);

    expect(await reader.keys('many:')).toEqual(Array.from({ length: 50 }, (_, i) => `many:${String(i).padStart(2, '0')}`));
    expect(await Promise.all(Array.from({ length: 50 }, (_, i) => reader.get(`many:${String(i).padStart(2, '0')}`)))).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    expect(await reader.get('seq')).toBe('last');
    expect(await reader.get('u')).toBe(20);
    expect(await reader.get('c')).toBe('first');
    expect(await reader.get('ctr')).toMatchObject({ count: 3 });
    expect(await reader.get('d')).toBe(101);
  });

  it('an update whose function throws fails alone: the writes before and after it in the same turn are committed', async () => {
    const { writer, reader } = pair();
    await writer.set('b', 'untouched');
    const before = writer.set('a', 1);
    const failing = writer.update<string>('b', () => {
      throw new Error('refused');
    });
    const after = [writer.set('c', 3), writer.update<number>('a', (current) => (current ?? 0) + 1)];
    const outcomes = await Promise.allSettled([before, failing, ...after]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('refused'));
    expect(await reader.get('a')).toBe(2);
    expect(await reader.get('b')).toBe('untouched');
    expect(await reader.get('c')).toBe(3);

    // a value that cannot be kept, returned by an update mid-batch, fails alone too
    const around = [writer.set('x', 1), writer.update<unknown>('b', () => () => 1), writer.set('y', 2)];
    const more = await Promise.allSettled(around);
    expect(more.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((more[1] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect([await reader.get('x'), await reader.get('b'), await reader.get('y')]).toEqual([1, 'untouched', 2]);
  });

  it('reads its own writes: a get of a key with a write waiting commits the turn first, keys() too', async () => {
    const { writer, reader } = pair();
    const written = writer.set('k', 'v');
    const other = writer.set('other', 'o');
    expect(await writer.get('k')).toBe('v');
    // the get committed the whole queue (the turn has not ended: another connection reads it already)
    expect(await reader.get('k')).toBe('v');
    expect(await reader.get('other')).toBe('o');
    await Promise.all([written, other]);

    const deleted = writer.delete('k');
    expect(await writer.get('k')).toBeUndefined();
    await deleted;

    const queued = [writer.set('p:b', 1), writer.set('p:a', 1), writer.delete('other')];
    expect(await writer.keys('p:')).toEqual(['p:a', 'p:b']);
    expect(await reader.keys('')).toEqual(['p:a', 'p:b']);
    await Promise.all(queued);

    // an update queued after a set reads it, and a get then sees the update
    const base = writer.set('n', 1);
    const bumped = writer.update<number>('n', (current) => (current ?? 0) + 1);
    expect(await writer.get('n')).toBe(2);
    expect(await Promise.all([base, bumped])).toEqual([undefined, 2]);
  });

  it('close() commits the writes still waiting', async () => {
    const { path, writer } = pair();
    const writes = [
      writer.set('s', { kept: true }),
      writer.update<number>('u', () => 7),
      writer.setIfAbsent('claim', 1, 60_000),
      writer.increment('ctr', 60_000),
    ];
    await writer.close();
    expect(await Promise.all(writes)).toEqual([undefined, 7, true, expect.objectContaining({ count: 1 })]);
    const reopened = new SqliteStore(path);
    opened.push(reopened);
    expect(await reopened.get('s')).toEqual({ kept: true });
    expect(await reopened.get('u')).toBe(7);
    expect(await reopened.get('claim')).toBe(1);
    expect(await reopened.get('ctr')).toMatchObject({ count: 1 });
  });

  it('every kind of write after close() rejects, and nothing reaches the file', async () => {
    const { path, writer } = pair();
    await writer.close();
    await expect(writer.set('k', 1)).rejects.toThrow(/closed/);
    await expect(writer.update('k', () => 1)).rejects.toThrow(/closed/);
    await expect(writer.delete('k')).rejects.toThrow(/closed/);
    await expect(writer.setIfAbsent('k', 1, 1_000)).rejects.toThrow(/closed/);
    await expect(writer.increment('k', 1_000)).rejects.toThrow(/closed/);
    const reopened = new SqliteStore(path);
    opened.push(reopened);
    expect(await reopened.keys('')).toEqual([]);
  });
});
