import { RateLimiterMemory } from 'rate-limiter-flexible';
import {
  type Clock,
  decodeValue,
  encodeValue,
  expiryFor,
  isLive,
  type KeyValueStore,
  nextCounter,
  type StoreSize,
  type WindowCounter,
  type WithWrites,
} from './key-value-store.js';
import { SlidingWindowLimiter, type WindowLimiter, type WindowRule } from './sliding-window-limiter.js';

interface Entry {
  text: string;
  expiresAt: number | null;
}

/** Writes between two full sweeps of expired entries; reads already drop the expired entry they meet. */
const SWEEP_EVERY_WRITES = 1024;

/**
 * In-process store for tests and single-process runs. Values go through the same codec as sqlite, so a
 * caller can never mutate a stored value by reference and bigints behave the same in both adapters.
 * Single-threaded JavaScript makes every method atomic.
 */
export class MemoryStore implements KeyValueStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  #writes = 0;

  constructor(clock: Clock = Date.now) {
    this.#clock = clock;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key, this.#clock());
    return entry ? decodeValue<T>(entry.text) : undefined;
  }

  async set<T>(key: string, value: T, ttlMs?: number): Promise<void> {
    if (value === undefined) {
      this.#entries.delete(key);
      return;
    }
    this.#write(key, { text: encodeValue(value), expiresAt: expiryFor(this.#clock(), ttlMs) });
  }

  async update<T>(key: string, fn: (current: T | undefined) => T | undefined, ttlMs?: number): Promise<T | undefined> {
    const now = this.#clock();
    const entry = this.#live(key, now);
    const next = fn(entry ? decodeValue<T>(entry.text) : undefined);
    if (next === undefined) {
      this.#entries.delete(key);
      return undefined;
    }
    const text = encodeValue(next);
    this.#write(key, { text, expiresAt: ttlMs === undefined ? (entry?.expiresAt ?? null) : expiryFor(now, ttlMs) });
    return decodeValue<T>(text);
  }

  async updateWith<T>(key: string, fn: (current: T | undefined) => WithWrites<T>): Promise<T | undefined> {
    let writes: [string, string | undefined][] = [];
    const result = await this.update<T>(key, (current) => {
      const next = fn(current);
      writes = [...next.writes].map(([other, value]) => [other, value === undefined ? undefined : encodeValue(value)]);
      return next.value;
    });
    for (const [other, text] of writes) {
      if (text === undefined) this.#entries.delete(other);
      else this.#write(other, { text, expiresAt: null });
    }
    return result;
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<boolean> {
    const now = this.#clock();
    if (this.#live(key, now)) return false;
    this.#write(key, { text: encodeValue(value), expiresAt: expiryFor(now, ttlMs) });
    return true;
  }

  async increment(key: string, windowMs: number): Promise<WindowCounter> {
    const now = this.#clock();
    const entry = this.#live(key, now);
    const counter = nextCounter(entry ? decodeValue<WindowCounter>(entry.text) : undefined, now, windowMs);
    this.#write(key, { text: encodeValue(counter), expiresAt: counter.resetAt });
    return counter;
  }

  async keys(prefix: string): Promise<string[]> {
    const now = this.#clock();
    return [...this.#entries.keys()].filter((key) => key.startsWith(prefix) && this.#live(key, now)).sort();
  }

  /** The library's in-process counters: a limit of this process alone, as the rest of this store is. */
  limiter(rule: WindowRule): WindowLimiter {
    return new SlidingWindowLimiter(rule, (options) => new RateLimiterMemory(options));
  }

  /** JavaScript strings are UTF-16: two bytes a code unit is what the live keys and values hold, roughly. */
  async size(): Promise<StoreSize> {
    this.#sweep();
    let units = 0;
    for (const [key, entry] of this.#entries) units += key.length + entry.text.length;
    return { backend: 'memory', bytes: units * 2, keys: this.#entries.size };
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && !isLive(entry.expiresAt, now)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #write(key: string, entry: Entry): void {
    this.#entries.set(key, entry);
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.#sweep();
  }

  #sweep(): void {
    const now = this.#clock();
    for (const [key, entry] of this.#entries) if (!isLive(entry.expiresAt, now)) this.#entries.delete(key);
  }
}
