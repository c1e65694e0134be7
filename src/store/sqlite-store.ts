import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { createPrivateFile, PRIVATE_DIR_MODE } from './data-dir.js';
import { type Clock, decodeValue, encodeValue, expiryFor, type KeyValueStore, nextCounter, type WindowCounter } from './key-value-store.js';
import { type FixedWindowOptions, SlidingWindowLimiter, type WindowLimiter, type WindowRule } from './sliding-window-limiter.js';

interface Row {
  value: string;
  expires_at: number | null;
}

/** How often expired rows are deleted; reads already ignore them, this only bounds the file's size. */
const PURGE_INTERVAL_MS = 60_000;
/** A second process on the same file (a restart overlapping the old one) waits this long for the lock. */
const BUSY_TIMEOUT_MS = 5_000;
/** The rate-limit library's table in the same file (its own schema: key, points, expire). */
const LIMITER_TABLE = 'rate_limits';

/**
 * The embedded default: one sqlite file under DATA_DIR, so sessions and counters survive a restart.
 * better-sqlite3 is synchronous; the async signatures are the port's, for adapters that need the network.
 */
export class SqliteStore implements KeyValueStore {
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #purgeTimer: NodeJS.Timeout;
  readonly #select: Database.Statement<[string, number], Row>;
  readonly #upsert: Database.Statement<[string, string, number | null]>;
  readonly #remove: Database.Statement<[string]>;
  readonly #purge: Database.Statement<[number]>;
  readonly #claim: Database.Statement<[string, string, number | null, number]>;
  readonly #keysInRange: Database.Statement<[string, string, number], { key: string }>;
  /** Read-modify-write of one key; run with .immediate() so the write lock is taken before the read. */
  readonly #readModifyWrite: Database.Transaction<(key: string, step: (current: Row | undefined, now: number) => Row | undefined) => Row | undefined>;
  /** Resolves once the library has created its table (at the first limiter). */
  #limiterTableReady: Promise<void> | undefined;
  #limiterTableCreated = false;

  constructor(path: string, clock: Clock = Date.now) {
    this.#clock = clock;
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
      // sqlite would create the file 0644; it creates the -wal and -shm files with the database file's mode
      createPrivateFile(path);
    }
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // WAL with synchronous=NORMAL is durable against process crashes, which is what a restart needs.
    this.#db.pragma('synchronous = NORMAL');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS kv (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        expires_at INTEGER
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS kv_expires_at ON kv (expires_at) WHERE expires_at IS NOT NULL;
    `);

    // Same liveness rule as isLive() in key-value-store.ts: an entry is gone at its expiry instant.
    this.#select = this.#db.prepare('SELECT value, expires_at FROM kv WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)');
    this.#upsert = this.#db.prepare(
      'INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at',
    );
    this.#remove = this.#db.prepare('DELETE FROM kv WHERE key = ?');
    this.#purge = this.#db.prepare('DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?');
    // One statement is one atomic write: inserts, or takes over an expired entry, or changes nothing. No
    // explicit transaction, so a claim (every signed request's replay guard) costs a single write.
    this.#claim = this.#db.prepare(
      'INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at ' +
        'WHERE kv.expires_at IS NOT NULL AND kv.expires_at <= ?',
    );
    // a range of the primary key: the keys from the prefix up to (not including) the prefix's successor
    this.#keysInRange = this.#db.prepare('SELECT key FROM kv WHERE key >= ? AND key < ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY key');
    this.#readModifyWrite = this.#db.transaction((key, step) => {
      const now = this.#clock();
      const next = step(this.#select.get(key, now), now);
      if (next === undefined) this.#remove.run(key);
      else this.#upsert.run(key, next.value, next.expires_at);
      return next;
    });

    this.#purgeExpired();
    this.#purgeTimer = setInterval(() => this.#purgeExpired(), PURGE_INTERVAL_MS);
    this.#purgeTimer.unref(); // never keeps the process alive on its own
  }

  async get<T>(key: string): Promise<T | undefined> {
    const row = this.#select.get(key, this.#clock());
    return row ? decodeValue<T>(row.value) : undefined;
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    if (value === undefined) this.#remove.run(key);
    else this.#upsert.run(key, encodeValue(value), expiryFor(this.#clock(), ttlMs));
  }

  async update<T>(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): Promise<T | undefined> {
    const row = this.#readModifyWrite.immediate(key, (current, now) => {
      const next = fn(current ? decodeValue<T>(current.value) : undefined);
      if (next === undefined) return undefined;
      const expiresAt = ttlMs === undefined ? (current?.expires_at ?? null) : expiryFor(now, ttlMs);
      return { value: encodeValue(next), expires_at: expiresAt };
    });
    return row ? decodeValue<T>(row.value) : undefined;
  }

  async delete(key: string): Promise<void> {
    this.#remove.run(key);
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<boolean> {
    const now = this.#clock();
    return this.#claim.run(key, encodeValue(value), expiryFor(now, ttlMs), now).changes === 1;
  }

  async increment(key: string, windowMs: number): Promise<WindowCounter> {
    const row = this.#readModifyWrite.immediate(key, (current, now) => {
      const counter = nextCounter(current ? decodeValue<WindowCounter>(current.value) : undefined, now, windowMs);
      return { value: encodeValue(counter), expires_at: counter.resetAt };
    });
    return decodeValue<WindowCounter>(row!.value);
  }

  async keys(prefix: string): Promise<string[]> {
    if (prefix === '') return this.#keysInRange.all('', '\u{10FFFF}', this.#clock()).map((row) => row.key);
    const successor = prefix.slice(0, -1) + String.fromCodePoint((prefix.codePointAt(prefix.length - 1) as number) + 1);
    return this.#keysInRange.all(prefix, successor, this.#clock()).map((row) => row.key);
  }

  /** The library's counters in a table of this file: they survive a restart, as the rest of this store does. */
  limiter(rule: WindowRule): WindowLimiter {
    const table = this.#limiterTable();
    const build = (options: FixedWindowOptions) =>
      new RateLimiterSQLite({ ...options, storeClient: this.#db, storeType: 'better-sqlite3', tableName: LIMITER_TABLE, tableCreated: true });
    return new SlidingWindowLimiter(rule, build, { ready: table });
  }

  async close(): Promise<void> {
    clearInterval(this.#purgeTimer);
    if (this.#db.open) this.#db.close();
  }

  #purgeExpired(): void {
    if (!this.#db.open) return;
    this.#purge.run(this.#clock());
    // The library's rows carry their expiry (Date.now() based) in `expire`; its own purge timer is not used: it
    // could fire after close().
    if (this.#limiterTableCreated) this.#db.prepare(`DELETE FROM ${LIMITER_TABLE} WHERE expire < ?`).run(Date.now());
  }

  /** The library creates its table (after its constructor returns); the limiters count once it exists. */
  #limiterTable(): Promise<void> {
    this.#limiterTableReady ??= new Promise<void>((resolve, reject) => {
      const options = { storeClient: this.#db, storeType: 'better-sqlite3', tableName: LIMITER_TABLE, points: 1, duration: 1 };
      new RateLimiterSQLite(options, (error) => {
        if (error) return reject(error);
        this.#limiterTableCreated = true;
        resolve();
      });
    });
    return this.#limiterTableReady;
  }
}
