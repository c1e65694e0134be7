// The store port over Redis, for several instances of the service sharing sessions, counters, replay claims, tasks
// and rate limits. Values are the other adapters' text (encodeValue), so one key reads the same in any adapter.
//
// - Expiry is Redis's own (PX, KEEPTTL): nothing sweeps.
// - update is an optimistic compare-and-set: read, compute fn, then a Lua script writes only if the value is still
//   the one read, else read again (a bounded number of times). WATCH/MULTI would need a connection of its own per
//   update; the script runs on the one shared connection.
// - Every key is under a prefix (REDIS_KEY_PREFIX), so several deployments can share a Redis.
// - While Redis is away every call fails at once with StoreUnavailableError (503): no offline queue, one retry, a
//   command timeout. The connection comes back by itself.
import { Redis, type RedisOptions, ReplyError } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { StoreUnavailableError } from '../core/errors.js';
import {
  type Clock,
  decodeValue,
  encodeValue,
  expiryFor,
  type KeyValueStore,
  type StoreSize,
  type WindowCounter,
  type WithWrites,
} from './key-value-store.js';
import { type FixedWindowOptions, SlidingWindowLimiter, type WindowLimiter, type WindowRule } from './sliding-window-limiter.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'air:';

export interface RedisStoreOptions {
  /** redis://[user:password@]host:port[/db], or rediss:// for TLS. */
  url: string;
  /** Put before every key; default "air:". */
  keyPrefix?: string;
  /** Stamps increment's resetAt (expiry itself is Redis's clock). */
  clock?: Clock;
  /** Connection state changes, for the log: lost (with the reason) and back. */
  onConnection?: (event: { state: 'lost'; reason: string } | { state: 'back' }) => void;
}

/** How long a command may wait for its answer before the call fails (a Redis that hangs rather than refuses). */
const COMMAND_TIMEOUT_MS = 2_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** Compare-and-set rounds of one update before it gives up (each round lost means another writer won). */
const MAX_UPDATE_ATTEMPTS = 100;
const SCAN_BATCH = 500;

/**
 * The ioredis options of the service's Redis connections: no offline queue (a call while Redis is away fails at
 * once instead of waiting), one retry, a command timeout, and reconnection in the background. The event bus uses them
 * too, with its own overrides (a subscriber connection keeps its subscriptions across reconnects).
 */
export function redisOptions(overrides: RedisOptions = {}): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // reconnect forever, backing off to one attempt every 2 s
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
    ...overrides,
  };
}

/** A connection (not yet connected: call connect()) to `url` with the service's options. */
export const createRedisClient = (url: string, overrides: RedisOptions = {}): Redis => new Redis(url, redisOptions(overrides));

/** host:port of a Redis URL, for messages: never its password. */
export function redisAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 6379}`;
}

/** KEYS[1] must hold ARGV[2] (ARGV[1] = '1') or be absent (ARGV[1] = '0'): else the script answers 0. */
const EXPECTED = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
`;

// KEYS[1] the key; ARGV[1] '1' if a value was read ('0' if none), ARGV[2] that value, ARGV[3] the new value ('' with
// ARGV[5] = 'del' to delete), ARGV[4] px ('' to keep the expiry, or none for a new entry). Returns 1 if written.
const COMPARE_AND_SET = `${EXPECTED}if ARGV[5] == 'del' then
  redis.call('DEL', KEYS[1])
elseif ARGV[4] ~= '' then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
elseif ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[3])
end
return 1`;

// COMPARE_AND_SET's check on KEYS[1] (ARGV[1], ARGV[2]), then KEYS[1] set to ARGV[3] ('' with ARGV[4] = 'del' to
// delete, keeping its expiry) and each further KEYS[i] set to ARGV[i + 3] (deleted when ARGV[i + 3] is ''), in one
// script: all or nothing. Returns 1 if written.
const COMPARE_AND_SET_MANY = `${EXPECTED}if ARGV[4] == 'del' then
  redis.call('DEL', KEYS[1])
elseif ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[3])
end
for i = 2, #KEYS do
  if ARGV[i + 3] == '' then redis.call('DEL', KEYS[i]) else redis.call('SET', KEYS[i], ARGV[i + 3]) end
end
return 1`;

// A fixed-window counter kept as the other adapters keep it: {"count":n,"resetAt":ms}. ARGV[1] now, ARGV[2] window ms.
const INCREMENT = `
local current = redis.call('GET', KEYS[1])
local count, resetAt
if current then
  local counter = cjson.decode(current)
  count = counter.count + 1
  resetAt = counter.resetAt
  redis.call('SET', KEYS[1], string.format('{"count":%d,"resetAt":%d}', count, resetAt), 'KEEPTTL')
else
  count = 1
  resetAt = tonumber(ARGV[1]) + tonumber(ARGV[2])
  redis.call('SET', KEYS[1], string.format('{"count":%d,"resetAt":%d}', count, resetAt), 'PX', ARGV[2])
end
return {count, resetAt}`;

type Scripted = Redis & {
  kvCompareAndSet(key: string, hadValue: string, expected: string, next: string, px: string, mode: string): Promise<number>;
  kvIncrement(key: string, now: string, windowMs: string): Promise<[number, number]>;
  kvCompareAndSetMany(keyCount: number, ...keysThenArgs: string[]): Promise<number>;
};

export class RedisStore implements KeyValueStore {
  readonly #redis: Scripted;
  readonly #prefix: string;
  readonly #clock: Clock;
  readonly #address: string;
  /** The connection's last error, for messages while it is down. */
  #lastError: string | undefined;
  #closing = false;

  private constructor(options: RedisStoreOptions) {
    this.#prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#clock = options.clock ?? Date.now;
    this.#address = redisAddress(options.url);
    const redis = createRedisClient(options.url, { connectionName: 'store' });
    redis.defineCommand('kvCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    redis.defineCommand('kvIncrement', { numberOfKeys: 1, lua: INCREMENT });
    redis.defineCommand('kvCompareAndSetMany', { lua: COMPARE_AND_SET_MANY });
    this.#redis = redis as Scripted;
    let connected = false;
    let lost = false;
    redis.on('error', (error: Error) => {
      this.#lastError = error.message;
    });
    redis.on('close', () => {
      if (!connected || lost || this.#closing) return;
      lost = true;
      options.onConnection?.({ state: 'lost', reason: this.#lastError ?? 'connection closed' });
    });
    redis.on('ready', () => {
      if (lost) options.onConnection?.({ state: 'back' });
      connected = true;
      lost = false;
      this.#lastError = undefined;
    });
  }

  /** Connects; a Redis that does not answer is a StoreUnavailableError saying where and why (the service does not start). */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const store = new RedisStore(options);
    try {
      await store.#redis.connect();
    } catch (error) {
      store.#redis.disconnect();
      throw new StoreUnavailableError('redis', `at ${store.#address} did not answer (${store.#lastError ?? (error as Error).message})`);
    }
    return store;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const text = await this.#call(() => this.#redis.get(this.#key(key)));
    return text === null ? undefined : decodeValue<T>(text);
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    if (value === undefined) return this.delete(key);
    const text = encodeValue(value);
    const px = pxOf(ttlMs, this.#clock());
    if (px === 'expired') return this.delete(key);
    await this.#call(() => (px === undefined ? this.#redis.set(this.#key(key), text) : this.#redis.set(this.#key(key), text, 'PX', px)));
  }

  async update<T>(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): Promise<T | undefined> {
    const redisKey = this.#key(key);
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      const read = await this.#call(() => this.#redis.get(redisKey));
      const next = fn(read === null ? undefined : decodeValue<T>(read));
      const hadValue = read === null ? '0' : '1';
      if (next === undefined) {
        if (read === null) return undefined;
        if (await this.#call(() => this.#redis.kvCompareAndSet(redisKey, hadValue, read, '', '', 'del'))) return undefined;
      } else {
        const text = encodeValue(next);
        const px = pxOf(ttlMs, this.#clock());
        // an expiry already past deletes, as a write that is gone at once would
        const [value, pxArg, mode] = px === 'expired' ? ['', '', 'del'] : [text, px === undefined ? '' : String(px), 'set'];
        const written = await this.#call(() => this.#redis.kvCompareAndSet(redisKey, hadValue, read ?? '', value, pxArg, mode));
        if (written) return decodeValue<T>(text);
      }
      // another writer came first: read again, after a short random pause once contention lasts
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 50)));
    }
    throw new Error(`update of ${key} kept conflicting with other writers (${MAX_UPDATE_ATTEMPTS} attempts)`);
  }

  async updateWith<T>(key: string, fn: (current: T | undefined) => WithWrites<T>): Promise<T | undefined> {
    const redisKey = this.#key(key);
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      const read = await this.#call(() => this.#redis.get(redisKey));
      const { value, writes } = fn(read === null ? undefined : decodeValue<T>(read));
      const text = value === undefined ? '' : encodeValue(value);
      // a value is never '' (encodeValue's text is JSON or starts with a mark): '' says "delete"
      const others = [...writes].map(([other, item]) => [this.#key(other), item === undefined ? '' : encodeValue(item)] as const);
      const keys = [redisKey, ...others.map(([other]) => other)];
      const args = [read === null ? '0' : '1', read ?? '', text, value === undefined ? 'del' : 'set', ...others.map(([, item]) => item)];
      if (await this.#call(() => this.#redis.kvCompareAndSetMany(keys.length, ...keys, ...args))) {
        return value === undefined ? undefined : decodeValue<T>(text);
      }
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 50)));
    }
    throw new Error(`update of ${key} kept conflicting with other writers (${MAX_UPDATE_ATTEMPTS} attempts)`);
  }

  async delete(key: string): Promise<void> {
    await this.#call(() => this.#redis.del(this.#key(key)));
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<boolean> {
    const text = encodeValue(value);
    const px = pxOf(ttlMs, this.#clock());
    const redisKey = this.#key(key);
    // a claim that is gone at once succeeds if nobody holds the key, and keeps nothing
    if (px === 'expired') return (await this.#call(() => this.#redis.exists(redisKey))) === 0;
    const answer = await this.#call(() =>
      px === undefined ? this.#redis.set(redisKey, text, 'NX') : this.#redis.set(redisKey, text, 'PX', px, 'NX'),
    );
    return answer === 'OK';
  }

  async increment(key: string, windowMs: number): Promise<WindowCounter> {
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new RangeError(`windowMs must be a positive number of milliseconds, got ${windowMs}`);
    }
    const window = String(Math.max(1, Math.round(windowMs)));
    const [count, resetAt] = await this.#call(() => this.#redis.kvIncrement(this.#key(key), String(this.#clock()), window));
    return { count: Number(count), resetAt: Number(resetAt) };
  }

  async keys(prefix: string): Promise<string[]> {
    const pattern = `${escapeGlob(this.#prefix + prefix)}*`;
    const found = new Set<string>(); // SCAN may return a key twice
    let cursor = '0';
    do {
      const [next, batch] = await this.#call(() => this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH));
      for (const key of batch) found.add(key.slice(this.#prefix.length));
      cursor = next;
    } while (cursor !== '0');
    return [...found].sort();
  }

  /** The library's Redis limiter on this connection, under this store's prefix. */
  limiter(rule: WindowRule): WindowLimiter {
    const build = (options: FixedWindowOptions) =>
      new RateLimiterRedis({ ...options, keyPrefix: this.#prefix + options.keyPrefix, storeClient: this.#redis, rejectIfRedisNotReady: true });
    return new SlidingWindowLimiter(rule, build, { failure: (error) => this.#unavailable(error) });
  }

  /**
   * The server's used_memory and the database's DBSIZE: what Redis holds for everyone using it (counting only this
   * prefix's keys would take a SCAN of them all at every scrape).
   */
  async size(): Promise<StoreSize> {
    const [info, keys] = await Promise.all([this.#call(() => this.#redis.info('memory')), this.#call(() => this.#redis.dbsize())]);
    const used = /^used_memory:(\d+)\r?$/m.exec(info)?.[1];
    return { backend: 'redis', bytes: used === undefined ? 0 : Number(used), keys };
  }

  async close(): Promise<void> {
    this.#closing = true;
    try {
      if (this.#redis.status === 'ready') await this.#redis.quit();
    } catch {
      // the connection went away while quitting: nothing left to close politely
    } finally {
      this.#redis.disconnect();
    }
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw this.#unavailable(error);
    }
  }

  /** A Redis error reply (a script's or a wrong type's) is ours to fix; anything else is Redis not answering. */
  #unavailable(error: unknown): Error {
    if (error instanceof ReplyError || error instanceof StoreUnavailableError) return error as Error;
    if (this.#redis.status !== 'ready') {
      return new StoreUnavailableError('redis', `at ${this.#address} is not connected (${this.#lastError ?? 'connection lost'}; reconnecting)`);
    }
    return new StoreUnavailableError('redis', `at ${this.#address} did not answer (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** PX of a ttl: undefined for "forever", 'expired' for a ttl already over, else whole milliseconds (at least 1). */
function pxOf(ttlMs: number | undefined, now: number): number | undefined | 'expired' {
  if (expiryFor(now, ttlMs) === null || ttlMs === undefined) return undefined;
  return ttlMs <= 0 ? 'expired' : Math.max(1, Math.ceil(ttlMs));
}

/** The prefix as a SCAN MATCH pattern matching it literally. */
const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');
