// Per-client rate limits, counted on the store port (fixed windows), so a limit holds across restarts and,
// with a shared store, across instances. One limiter per rule; REST (through express-rate-limit's store
// interface) and A2A count under the same key, `ratelimit:<rule>:<client>`, so one budget covers every way in.
import { ipKeyGenerator } from 'express-rate-limit';
import { ServiceError } from '../core/errors.js';
import type { Clock, KeyValueStore, WindowCounter } from '../store/key-value-store.js';

export interface LimitRule {
  /** Names the counter. */
  name: string;
  /** What is counted, for the refusal message ("session creations"). */
  what: string;
  limit: number;
  windowMs: number;
}

/** Session creations per client address and minute: register, deregister, identify, refresh and challenges. */
export const SESSION_CREATION: LimitRule = { name: 'session-creation', what: 'session creations', limit: 10, windowMs: 60_000 };
/** A2A push notification config writes per client address and minute. */
export const PUSH_CONFIG_WRITES: LimitRule = { name: 'push-config', what: 'push notification configs', limit: 30, windowMs: 60_000 };

/**
 * The client a limit counts: its IP address, IPv6 addresses by their /56 (what one subscriber usually holds),
 * as express-rate-limit's own key generator does.
 */
export const clientKeyOf = (ip: string | undefined): string => (ip ? ipKeyGenerator(ip) : 'unknown');

export interface LimitCount {
  count: number;
  /** When the window ends (ms since epoch). */
  resetAt: number;
}

export class RateLimiter {
  constructor(
    private readonly store: KeyValueStore,
    readonly rule: LimitRule,
    private readonly clock: Clock = Date.now,
  ) {}

  keyOf(client: string): string {
    return `ratelimit:${this.rule.name}:${client}`;
  }

  /** Counts one more use by `client`. */
  hit(client: string): Promise<LimitCount> {
    return this.store.increment(this.keyOf(client), this.rule.windowMs);
  }

  /** The client's count in the current window, if it has one. */
  async current(client: string): Promise<LimitCount | undefined> {
    const window = await this.store.get<WindowCounter>(this.keyOf(client));
    return window && window.resetAt > this.clock() ? window : undefined;
  }

  /** Takes one use back (a request that turned out not to count). */
  async undo(client: string): Promise<void> {
    await this.store.update<WindowCounter>(this.keyOf(client), (current) => current && { ...current, count: Math.max(0, current.count - 1) });
  }

  async reset(client: string): Promise<void> {
    await this.store.delete(this.keyOf(client));
  }

  /** Counts one use and refuses it (429) beyond the limit. */
  async consume(client: string): Promise<void> {
    const { count, resetAt } = await this.hit(client);
    if (count > this.rule.limit) throw this.refusal(resetAt);
  }

  /** The 429 of this rule: what the limit is and when to try again (also as Retry-After). */
  refusal(resetAt: number): ServiceError {
    const { what, limit, windowMs } = this.rule;
    const wait = Math.max(1, Math.ceil((resetAt - this.clock()) / 1000));
    return new ServiceError(
      429,
      `Too many ${what}: at most ${limit} per ${Math.round(windowMs / 1000)} s from one address; try again in ${wait} s`,
      wait,
    );
  }
}
