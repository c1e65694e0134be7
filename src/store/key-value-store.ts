import type { WindowLimiter, WindowRule } from './sliding-window-limiter.js';

/**
 * The key-value port: everything the service keeps that the chain cannot (session records, rate-limit and
 * replay counters, census entries, A2A tasks). Adapters: memory (tests), sqlite (embedded default), redis (shared
 * by several instances).
 */
export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  /** ttlMs: the entry disappears after it (absent = forever). Setting undefined deletes. */
  set<T>(key: string, value: T, ttlMs?: number): Promise<void>;
  /**
   * Atomic read-modify-write: fn sees the current value (undefined if absent/expired); returning undefined
   * deletes. Returns the new value. A ttlMs given replaces the entry's expiry; without it the old expiry is
   * kept. If fn throws, nothing changes and the error propagates.
   */
  update<T>(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): Promise<T | undefined>;
  /**
   * update() of `key` that also writes other keys in the same transaction, all or nothing: fn sees the key's current
   * value and returns its new one (undefined deletes; the expiry is kept) and `writes` (key to value, undefined
   * deletes, no expiry). If fn throws, nothing is written: a writer whose record carries a fencing token refuses, in
   * fn, to replace a newer one.
   */
  updateWith<T>(key: string, fn: (current: T | undefined) => WithWrites<T>): Promise<T | undefined>;
  delete(key: string): Promise<void>;
  /**
   * Atomic set-if-absent (a claim): stores `value` for `ttlMs` and resolves true if no live entry had the key,
   * else changes nothing and resolves false. Replay guards use it: a second claim of the same key fails,
   * across instances sharing the store and across restarts.
   */
  setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<boolean>;
  /** Fixed-window counter: increments key's count, creating it with expiry now+windowMs if absent/expired. */
  increment(key: string, windowMs: number): Promise<{ count: number; resetAt: number }>;
  /** The live keys that start with `prefix`, in key order (a start-up check walks the session records with it). */
  keys(prefix: string): Promise<string[]>;
  /**
   * A per-client sliding-window limit counted on this store's backend of the rate-limit library (same Redis
   * connection, same sqlite file, or this process's memory), so it holds wherever this store's data does.
   */
  limiter(rule: WindowRule): WindowLimiter;
  /** What the store holds now, for the operator's metrics (how fast clients make it grow). */
  size(): Promise<StoreSize>;
  close(): Promise<void>;
}

/** What an updateWith function returns: the key's new value and the other keys' writes. */
export interface WithWrites<T> {
  value: T | undefined;
  writes: ReadonlyMap<string, unknown>;
}

/** A store's footprint, as its backend counts it. */
export interface StoreSize {
  backend: 'memory' | 'sqlite' | 'redis';
  /**
   * sqlite: the database file with its write-ahead log (what the disk holds); redis: the server's used_memory (the
   * whole server, other prefixes included); memory: the UTF-16 length of the live keys and values, times two.
   */
  bytes: number;
  /** The live keys (redis: DBSIZE, the whole database). */
  keys: number;
}

export type Clock = () => number; // ms since epoch

/** What `increment` keeps under its key; `get` on a counter key returns this. */
export interface WindowCounter {
  count: number;
  resetAt: number;
}

// ---- shared by the adapters, so both store and read values byte-for-byte the same way ----

/** JSON has no bigint; a bigint travels as {"$bigint":"<decimal>"} and comes back as a bigint. */
const BIGINT_TAG = '$bigint';
const TAGGED = `"${BIGINT_TAG}"`;
/**
 * A string value is kept as itself after this mark, not as JSON: JSON.stringify scans and escapes every character
 * (3.5 us for an index of 100 task ids, rewritten on every save) and JSON.parse scans it again. No JSON text starts
 * with it, so values kept as JSON by earlier versions still read as before.
 */
const RAW_STRING = "'";

/** String.prototype.isWellFormed (Node 20; TypeScript has it in the ES2024 library, which also names what Node 20 lacks). */
type WellFormedCheck = string & { isWellFormed(): boolean };

const tagBigint = (_key: string, item: unknown): unknown => (typeof item === 'bigint' ? { [BIGINT_TAG]: item.toString() } : item);
const untagBigint = (_key: string, item: unknown): unknown => (isBigintBox(item) ? BigInt(item[BIGINT_TAG]) : item);

export function encodeValue(value: unknown): string {
  // a lone surrogate has no UTF-8 form (sqlite and Redis would keep U+FFFD): JSON escapes it
  if (typeof value === 'string' && (value as WellFormedCheck).isWellFormed()) return RAW_STRING + value;
  let text: string | undefined;
  try {
    // without a replacer V8 serializes twice as fast; a bigint makes it throw, and only then is the value serialized
    // again with the tag (JSON.stringify calls toJSON before a replacer: both ways give the same text)
    text = JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    text = JSON.stringify(value, tagBigint);
  }
  // JSON.stringify returns undefined for undefined, functions and symbols: nothing a store can keep.
  if (text === undefined) throw new TypeError('KeyValueStore values must be JSON-serialisable');
  return text;
}

export function decodeValue<T>(text: string): T {
  if (text.startsWith(RAW_STRING)) return text.slice(RAW_STRING.length) as T;
  // a reviver makes JSON.parse several times slower: only a text with a tag in it gets one (JSON.stringify never
  // escapes "$", so a tag is always spelled so)
  return (text.includes(TAGGED) ? JSON.parse(text, untagBigint) : JSON.parse(text)) as T;
}

function isBigintBox(item: unknown): item is { [BIGINT_TAG]: string } {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const keys = Object.keys(item);
  const digits = (item as Record<string, unknown>)[BIGINT_TAG];
  return keys.length === 1 && typeof digits === 'string' && /^-?\d+$/.test(digits);
}

/** Absolute expiry (ms) for a ttl, or null for "forever". Rejects ttls that are not finite numbers. */
export function expiryFor(now: number, ttlMs: number | undefined): number | null {
  if (ttlMs === undefined) return null;
  if (!Number.isFinite(ttlMs)) throw new RangeError(`ttlMs must be a finite number of milliseconds, got ${ttlMs}`);
  return now + ttlMs;
}

/** An entry is gone at its expiry instant, not one millisecond later (same rule as session tokens). */
export const isLive = (expiresAt: number | null, now: number): boolean => expiresAt === null || expiresAt > now;

/** The next state of a fixed-window counter. */
export function nextCounter(current: WindowCounter | undefined, now: number, windowMs: number): WindowCounter {
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(`windowMs must be a positive number of milliseconds, got ${windowMs}`);
  }
  return current ? { count: current.count + 1, resetAt: current.resetAt } : { count: 1, resetAt: now + windowMs };
}
