import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { createPrivateFile, PRIVATE_DIR_MODE } from './data-dir.js';
import {
  type Clock,
  decodeValue,
  encodeValue,
  expiryFor,
  type KeyValueStore,
  nextCounter,
  type StoreSize,
  type WindowCounter,
  type WithWrites,
} from './key-value-store.js';
import { type FixedWindowOptions, SlidingWindowLimiter, type WindowLimiter, type WindowRule } from './sliding-window-limiter.js';

interface Row {
  value: string;
  expires_at: number | null;
}

/**
 * A row as a write of the turn left it. A string value is kept as itself (strings are immutable: it is handed out as
 * is) and encoded once at the commit, however many updates of the turn changed it (an index of task ids, updated by
 * every request of the turn).
 */
type StagedRow = Row | { text: string; expires_at: number | null };

const textOf = (row: StagedRow): string => ('text' in row ? encodeValue(row.text) : row.value);

/** How often expired rows are deleted; reads already ignore them, this only bounds the file's size. */
const PURGE_INTERVAL_MS = 60_000;
/** A second process on the same file (a restart overlapping the old one) waits this long for the lock. */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * sqlite's page cache for the store, in KiB (better-sqlite3 builds sqlite with 16 MiB). The store's reads are by key,
 * a few pages each, and the OS keeps the file's pages; what filled a larger cache was the stored registry index, whose
 * buckets are written at each checkpoint and read once at a start: with 100,000 agents the cache held 12 MB more than
 * with 10,000 (heaptrack, settled), memory that grew with the registry up to the cap.
 */
const CACHE_KIB = 2048;
/** The rate-limit library's table in the same file (its own schema: key, points, expire). */
const LIMITER_TABLE = 'rate_limits';

/** A write waiting for the end of the event-loop turn. */
interface QueuedWrite {
  /** Runs it on the turn's rows; what it returns is what the write resolves to. */
  run(rows: TurnRows): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The rows as the writes of a turn leave them, inside the turn's transaction: a key's row is read from the table
 * once, then each write of the turn sees what the ones before it left, and each key touched is written once at the
 * end (a counter or an index changed by many requests of the turn costs one row write, not one each).
 */
class TurnRows {
  readonly #staged = new Map<string, StagedRow | undefined>();

  constructor(private readonly select: (key: string, now: number) => Row | undefined) {}

  /** The live row of `key` at `now`, as the turn has left it so far. */
  get(key: string, now: number): StagedRow | undefined {
    if (!this.#staged.has(key)) return this.select(key, now);
    const row = this.#staged.get(key);
    return row && (row.expires_at === null || row.expires_at > now) ? row : undefined;
  }

  /** `row` for `key` (undefined: deleted), written when the turn commits. */
  put(key: string, row: StagedRow | undefined): void {
    this.#staged.set(key, row);
  }

  get staged(): ReadonlyMap<string, StagedRow | undefined> {
    return this.#staged;
  }
}

/**
 * The embedded default: one sqlite file under DATA_DIR, so sessions and counters survive a restart.
 * better-sqlite3 is synchronous; the async signatures are the port's, for adapters that need the network.
 *
 * Group commit: the writes made during one turn of the event loop are committed together, in the order they were
 * made, in one transaction at the end of the turn (IMMEDIATE: the write lock is taken before anything is read), and
 * each write's promise settles once that transaction has committed. A commit costs far more than a row (the
 * write-ahead log's frames, the lock), and under load a turn holds the writes of many requests; a key written
 * several times in the turn is written once (TurnRows). A write that fails (an update whose function throws)
 * changes nothing and fails alone. A read of a key with a write waiting commits the turn's writes first, so this
 * process always reads what it wrote; other processes see a write once it has committed, as before.
 */
export class SqliteStore implements KeyValueStore {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #clock: Clock;
  readonly #purgeTimer: NodeJS.Timeout;
  readonly #select: Database.Statement<[string, number], Row>;
  readonly #upsert: Database.Statement<[string, string, number | null]>;
  readonly #remove: Database.Statement<[string]>;
  readonly #purge: Database.Statement<[number]>;
  readonly #keysInRange: Database.Statement<[string, string, number], { key: string }>;
  /** The writes of this turn, committed together at its end. */
  #queue: QueuedWrite[] = [];
  readonly #queuedKeys = new Set<string>();
  #commitScheduled = false;
  /** Runs the queued writes on the turn's rows, then writes the rows they changed, in one transaction. */
  readonly #commitQueue: Database.Transaction<(writes: QueuedWrite[]) => { ok: boolean; value: unknown }[]>;
  /** Resolves once the library has created its table (at the first limiter). */
  #limiterTableReady: Promise<void> | undefined;
  #limiterTableCreated = false;

  constructor(path: string, clock: Clock = Date.now) {
    this.#path = path;
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
    this.#db.pragma(`cache_size = -${CACHE_KIB}`);
    this.#createTable();

    // Same liveness rule as isLive() in key-value-store.ts: an entry is gone at its expiry instant.
    this.#select = this.#db.prepare('SELECT value, expires_at FROM kv WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)');
    this.#upsert = this.#db.prepare(
      'INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at',
    );
    this.#remove = this.#db.prepare('DELETE FROM kv WHERE key = ?');
    this.#purge = this.#db.prepare('DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?');
    // a range of the primary key: the keys from the prefix up to (not including) the prefix's successor
    this.#keysInRange = this.#db.prepare('SELECT key FROM kv WHERE key >= ? AND key < ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY key');
    this.#commitQueue = this.#db.transaction((writes) => {
      const rows = new TurnRows((key, now) => this.#select.get(key, now));
      const outcomes = writes.map((write) => {
        try {
          return { ok: true, value: write.run(rows) };
        } catch (error) {
          return { ok: false, value: error };
        }
      });
      for (const [key, row] of rows.staged) {
        if (row === undefined) this.#remove.run(key);
        else this.#upsert.run(key, textOf(row), row.expires_at);
      }
      return outcomes;
    });

    this.#purgeExpired();
    this.#purgeTimer = setInterval(() => this.#purgeExpired(), PURGE_INTERVAL_MS);
    this.#purgeTimer.unref(); // never keeps the process alive on its own
  }

  /**
   * The table, a rowid table. Files of earlier versions hold it WITHOUT ROWID, which sqlite suits to rows of a few
   * dozen bytes: a task (1-2 kB) or an index of task ids (4 kB) went mostly to overflow pages, and a commit of a
   * turn's tasks cost twice the CPU. Such a table is copied into the new one once, in one transaction (a second
   * process opening the file meanwhile waits for the lock, then finds it done).
   */
  #createTable(): void {
    const columns = 'key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER';
    const expiresIndex = 'CREATE INDEX IF NOT EXISTS kv_expires_at ON kv (expires_at) WHERE expires_at IS NOT NULL';
    const schema = this.#db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'kv'").pluck();
    const withoutRowid = () => /WITHOUT\s+ROWID\s*$/i.test(schema.get() ?? '');
    if (withoutRowid()) {
      this.#db
        .transaction(() => {
          if (!withoutRowid()) return;
          this.#db.exec(`
            CREATE TABLE kv_rowid (${columns});
            INSERT INTO kv_rowid (key, value, expires_at) SELECT key, value, expires_at FROM kv ORDER BY key;
            DROP TABLE kv;
            ALTER TABLE kv_rowid RENAME TO kv;
          `);
        })
        .immediate();
    }
    this.#db.exec(`CREATE TABLE IF NOT EXISTS kv (${columns}); ${expiresIndex};`);
  }

  async get<T>(key: string): Promise<T | undefined> {
    if (this.#queuedKeys.has(key)) this.#commit();
    const row = this.#select.get(key, this.#clock());
    return row ? decodeValue<T>(row.value) : undefined;
  }

  set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    if (value === undefined) return this.delete(key);
    try {
      const row = { value: encodeValue(value), expires_at: expiryFor(this.#clock(), ttlMs) };
      return this.#queueWrite(key, (rows) => {
        rows.put(key, row);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  update<T>(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): Promise<T | undefined> {
    const now = this.#clock();
    return this.#queueWrite(key, (rows) => {
      const current = rows.get(key, now);
      const next = fn(current === undefined ? undefined : 'text' in current ? (current.text as T) : decodeValue<T>(current.value));
      if (next === undefined) {
        rows.put(key, undefined);
        return undefined;
      }
      const expiresAt = ttlMs === undefined ? (current?.expires_at ?? null) : expiryFor(now, ttlMs);
      // a string (an index kept as text) is its own copy: neither encoded nor decoded before the commit
      if (typeof next === 'string') {
        rows.put(key, { text: next, expires_at: expiresAt });
        return next;
      }
      const text = encodeValue(next);
      rows.put(key, { value: text, expires_at: expiresAt });
      return decodeValue<T>(text);
    });
  }

  updateWith<T>(key: string, fn: (current: T | undefined) => WithWrites<T>): Promise<T | undefined> {
    const now = this.#clock();
    return this.#queueWrite(key, (turn) => {
      const current = turn.get(key, now);
      // fn and every encoding first: when one throws, nothing of this write is staged
      const { value, writes } = fn(current === undefined ? undefined : decodeValue<T>(textOf(current)));
      const rows = [...writes].map(
        ([other, item]) => [other, item === undefined ? undefined : { value: encodeValue(item), expires_at: null }] as const,
      );
      const text = value === undefined ? undefined : encodeValue(value);
      for (const [other, row] of rows) turn.put(other, row);
      turn.put(key, text === undefined ? undefined : { value: text, expires_at: current?.expires_at ?? null });
      return text === undefined ? undefined : decodeValue<T>(text);
    });
  }

  delete(key: string): Promise<void> {
    return this.#queueWrite(key, (rows) => {
      rows.put(key, undefined);
    });
  }

  /** A claim: taken when no live row has the key (an expired one is taken over). */
  setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<boolean> {
    const now = this.#clock();
    try {
      const row = { value: encodeValue(value), expires_at: expiryFor(now, ttlMs) };
      return this.#queueWrite(key, (rows) => {
        if (rows.get(key, now)) return false;
        rows.put(key, row);
        return true;
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  increment(key: string, windowMs: number): Promise<WindowCounter> {
    const now = this.#clock();
    return this.#queueWrite(key, (rows) => {
      const current = rows.get(key, now);
      const counter = nextCounter(current ? decodeValue<WindowCounter>(textOf(current)) : undefined, now, windowMs);
      rows.put(key, { value: encodeValue(counter), expires_at: counter.resetAt });
      return counter;
    });
  }

  async keys(prefix: string): Promise<string[]> {
    this.#commit();
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

  /**
   * The file and its write-ahead log, as the disk holds them (the log grows between checkpoints, and the file keeps
   * the pages of expired rows for reuse); an in-memory database: its pages.
   */
  async size(): Promise<StoreSize> {
    this.#commit();
    const keys =
      this.#db.prepare<[number], number>('SELECT count(*) FROM kv WHERE expires_at IS NULL OR expires_at > ?').pluck().get(this.#clock()) ?? 0;
    if (this.#path === ':memory:') {
      const pages = (this.#db.pragma('page_count', { simple: true }) as number) * (this.#db.pragma('page_size', { simple: true }) as number);
      return { backend: 'sqlite', bytes: pages, keys };
    }
    const fileSize = (path: string): number => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    return { backend: 'sqlite', bytes: fileSize(this.#path) + fileSize(`${this.#path}-wal`), keys };
  }

  async close(): Promise<void> {
    clearInterval(this.#purgeTimer);
    if (!this.#db.open) return;
    this.#commit();
    this.#db.close();
  }

  /** Queues a write for the end of this turn; it settles once committed. */
  #queueWrite<R>(key: string, run: (rows: TurnRows) => R): Promise<R> {
    if (!this.#db.open) return Promise.reject(new Error('The store is closed'));
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      this.#queuedKeys.add(key);
      if (this.#commitScheduled) return;
      this.#commitScheduled = true;
      setImmediate(() => this.#commit());
    });
  }

  /** Commits the queued writes now, in one transaction, and settles each. */
  #commit(): void {
    this.#commitScheduled = false;
    const writes = this.#queue;
    if (writes.length === 0) return;
    this.#queue = [];
    this.#queuedKeys.clear();
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      outcomes = this.#commitQueue.immediate(writes);
    } catch (error) {
      // the transaction itself failed (the lock not had in time, the disk): none of them is kept
      for (const write of writes) write.reject(error);
      return;
    }
    writes.forEach((write, index) => {
      const outcome = outcomes[index] as { ok: boolean; value: unknown };
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.value);
    });
  }

  #purgeExpired(): void {
    if (!this.#db.open) return;
    this.#commit();
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
