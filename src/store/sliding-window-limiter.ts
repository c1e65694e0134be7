// Per-client rate limits on rate-limiter-flexible, whichever store backs them (memory, sqlite, redis: each store
// adapter hands its own library backend to this class through `KeyValueStore.limiter`).
//
// The algorithm is a sliding-window counter made of two aligned fixed windows of the library. The library counts
// fixed windows only (its atomic consume opens a window at a key's first hit), and a fixed window lets a client
// spend its whole budget at the end of one window and again at the start of the next. Here each window of the rule
// has a key of its own, `<client>:<floor(now / window)>`: a hit is the library's atomic consume on the current
// window's key, and the previous window's count is read with `get` (that window is over, so its count no longer
// changes and reading it needs no lock). The estimate of the last `window` ms is
//     previous * (1 - elapsed fraction of the current window) + current
// and a hit is allowed while the estimate stays within the limit. One atomic increment and one read per hit, in
// Redis, sqlite or memory alike, so the limit holds across instances sharing the store. A refused hit is given
// back (the library's reward): refusals do not lengthen the wait, so the Retry-After we compute stays true.
import { RateLimiterRes } from 'rate-limiter-flexible';

/** What a limit counts: `limit` uses per `windowMs` per client. */
export interface WindowRule {
  /** Names the counters (keys `<name>:<client>:<window index>`). */
  name: string;
  limit: number;
  /** A whole number of seconds (the library's durations are seconds). */
  windowMs: number;
}

/** One decision. */
export interface LimitVerdict {
  allowed: boolean;
  /** The estimated uses of the sliding window, this one included when allowed (rounded up; limit + 1 when refused). */
  used: number;
  /** Allowed: when the client's budget is whole again; refused: the earliest moment a use would be allowed (unix ms). */
  resetAt: number;
}

/** The per-rule sliding window limiter a store hands out. */
export interface WindowLimiter {
  readonly rule: WindowRule;
  /** Counts one use by `client`, or refuses it (and then counts nothing). */
  take(client: string): Promise<LimitVerdict>;
  /** The client's estimate without counting; undefined when it has no use in the last two windows. */
  peek(client: string): Promise<Omit<LimitVerdict, 'allowed'> | undefined>;
  /** Gives one counted use back (a request that turned out not to count). */
  undo(client: string): Promise<void>;
  /** Forgets the client's uses. */
  reset(client: string): Promise<void>;
}

/** The part of the library's limiters (RateLimiterMemory, RateLimiterSQLite, RateLimiterRedis) this class uses. */
export interface FixedWindows {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
  reward(key: string, points?: number): Promise<RateLimiterRes>;
  delete(key: string): Promise<boolean>;
}

/** What a store gives a rule: the library's limiter over its own backend, built for these options. */
export interface FixedWindowOptions {
  keyPrefix: string;
  points: number;
  /** Seconds. */
  duration: number;
}

export interface BackendHooks {
  /** Resolves when the backend can count (the sqlite table exists). */
  ready?: Promise<unknown>;
  /** The store's own error for a backend failure (Redis away: StoreUnavailableError). */
  failure?: (error: unknown) => Error;
}

export class SlidingWindowLimiter implements WindowLimiter {
  readonly #windows: FixedWindows;
  readonly #hooks: BackendHooks;

  constructor(
    readonly rule: WindowRule,
    build: (options: FixedWindowOptions) => FixedWindows,
    hooks: BackendHooks = {},
  ) {
    const { name, limit, windowMs } = rule;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit of ${name} must be a positive integer, got ${limit}`);
    if (!Number.isInteger(windowMs) || windowMs < 1000 || windowMs % 1000 !== 0) {
      throw new RangeError(`windowMs of ${name} must be a whole number of seconds, got ${windowMs}`);
    }
    // A window's key lives two windows from its first hit: through the next window, which reads it as the previous one.
    this.#windows = build({ keyPrefix: `ratelimit:${name}`, points: limit, duration: (2 * windowMs) / 1000 });
    this.#hooks = hooks;
  }

  async take(client: string): Promise<LimitVerdict> {
    const now = Date.now();
    const { index, elapsed } = this.#position(now);
    const key = windowKey(client, index);
    const [current, previous] = await Promise.all([this.#consume(key), this.#count(windowKey(client, index - 1))]);
    const { limit, windowMs } = this.rule;
    // integers only: previous * (1 - elapsed / w) + current <= limit, multiplied by w
    if (previous * (windowMs - elapsed) + current * windowMs <= limit * windowMs) {
      return { allowed: true, used: Math.ceil(estimate(previous, current, elapsed, windowMs)), resetAt: (index + 2) * windowMs };
    }
    await this.#call(() => this.#windows.reward(key));
    return { allowed: false, used: limit + 1, resetAt: now + this.#wait(previous, current - 1, elapsed) };
  }

  async peek(client: string): Promise<Omit<LimitVerdict, 'allowed'> | undefined> {
    const { index, elapsed } = this.#position(Date.now());
    const [current, previous] = await Promise.all([this.#count(windowKey(client, index)), this.#count(windowKey(client, index - 1))]);
    if (current === 0 && previous === 0) return undefined;
    const { windowMs } = this.rule;
    return { used: Math.ceil(estimate(previous, current, elapsed, windowMs)), resetAt: (index + (current > 0 ? 2 : 1)) * windowMs };
  }

  async undo(client: string): Promise<void> {
    const key = windowKey(client, this.#position(Date.now()).index);
    if ((await this.#count(key)) > 0) await this.#call(() => this.#windows.reward(key));
  }

  async reset(client: string): Promise<void> {
    const { index } = this.#position(Date.now());
    await this.#call(() => Promise.all([this.#windows.delete(windowKey(client, index)), this.#windows.delete(windowKey(client, index - 1))]));
  }

  #position(now: number): { index: number; elapsed: number } {
    const index = Math.floor(now / this.rule.windowMs);
    return { index, elapsed: now - index * this.rule.windowMs };
  }

  /**
   * How long until one more use fits, if nobody else uses the budget meanwhile: later in this window, as the
   * previous window's share shrinks; else in the next, where this window's `counted` uses are the previous share.
   */
  #wait(previous: number, counted: number, elapsed: number): number {
    const { limit, windowMs } = this.rule;
    const room = limit - counted - 1;
    if (room >= 0 && previous > 0) {
      const at = Math.ceil(windowMs - (room * windowMs) / previous);
      if (at < windowMs) return Math.max(0, at - elapsed);
    }
    const intoNext = counted > 0 ? Math.max(0, Math.ceil(windowMs - ((limit - 1) * windowMs) / counted)) : 0;
    return windowMs - elapsed + intoNext;
  }

  /** The library's atomic consume: the count of the window after this hit (the library's refusal carries it too). */
  async #consume(key: string): Promise<number> {
    try {
      await this.#hooks.ready;
      return (await this.#windows.consume(key)).consumedPoints;
    } catch (error) {
      if (error instanceof RateLimiterRes) return error.consumedPoints;
      throw this.#failure(error);
    }
  }

  async #count(key: string): Promise<number> {
    const res = await this.#call(() => this.#windows.get(key));
    // every window key has an expiry: no time left (the memory backend keeps a record until its timer) is none
    return res && res.msBeforeNext > 0 ? Math.max(0, res.consumedPoints) : 0;
  }

  async #call<T>(operation: () => Promise<T>): Promise<T> {
    try {
      await this.#hooks.ready;
      return await operation();
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #failure(error: unknown): Error {
    return this.#hooks.failure ? this.#hooks.failure(error) : error instanceof Error ? error : new Error(String(error));
  }
}

const windowKey = (client: string, index: number): string => `${client}:${index}`;

const estimate = (previous: number, current: number, elapsed: number, windowMs: number): number =>
  (previous * (windowMs - elapsed)) / windowMs + current;
