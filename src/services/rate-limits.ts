// Per-client rate limits, each a sliding window counted on the store's rate-limit backend (rate-limiter-flexible
// on the same Redis, sqlite file or memory: store/sliding-window-limiter.ts), so a limit holds across restarts and,
// with a shared store, across instances. One limiter per rule; REST (through express-rate-limit's store interface)
// and A2A count under the same key, the rule's name and the client, so one budget covers every way in.
import { ipKeyGenerator } from 'express-rate-limit';
import { ServiceError } from '../core/errors.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import type { WindowLimiter } from '../store/sliding-window-limiter.js';

export interface LimitRule {
  /** Names the counters. */
  name: string;
  /** What is counted, for the refusal message ("session creations"). */
  what: string;
  limit: number;
  /** A whole number of seconds. */
  windowMs: number;
}

/** Session creations per client address and minute: register, deregister, identify, refresh and challenges. */
export const SESSION_CREATION: LimitRule = { name: 'session-creation', what: 'session creations', limit: 10, windowMs: 60_000 };
/** MCP sessions opened (initialize requests) per client address and minute: each is a record on the store for a day. */
export const MCP_SESSIONS: LimitRule = { name: 'mcp-sessions', what: 'MCP sessions opened', limit: 30, windowMs: 60_000 };
/** A2A push notification config writes per client address and minute. */
export const PUSH_CONFIG_WRITES: LimitRule = { name: 'push-config', what: 'push notification configs', limit: 30, windowMs: 60_000 };

/**
 * The client a limit counts: its IP address, IPv6 addresses by their /56 (what one subscriber usually holds),
 * as express-rate-limit's own key generator does.
 */
export const clientKeyOf = (ip: string | undefined): string => (ip ? ipKeyGenerator(ip) : 'unknown');

export interface LimitCount {
  /** The uses the sliding window holds, this one included; beyond the rule's limit when refused. */
  count: number;
  /** Refused: when a use fits again; allowed: when the whole budget is back (ms since epoch). */
  resetAt: number;
}

export class RateLimiter {
  readonly #limiter: WindowLimiter;

  constructor(
    store: KeyValueStore,
    readonly rule: LimitRule,
  ) {
    this.#limiter = store.limiter(rule);
  }

  /** Counts one more use by `client`; a refused use (count beyond the limit) is not counted. */
  async hit(client: string): Promise<LimitCount> {
    const { used, resetAt } = await this.#limiter.take(client);
    return { count: used, resetAt };
  }

  /** The client's uses in the sliding window, if it has any. */
  async current(client: string): Promise<LimitCount | undefined> {
    const seen = await this.#limiter.peek(client);
    return seen && { count: seen.used, resetAt: seen.resetAt };
  }

  /** Takes one use back (a request that turned out not to count). */
  undo(client: string): Promise<void> {
    return this.#limiter.undo(client);
  }

  reset(client: string): Promise<void> {
    return this.#limiter.reset(client);
  }

  /** Counts one use and refuses it (429) beyond the limit. */
  async consume(client: string): Promise<void> {
    const { count, resetAt } = await this.hit(client);
    if (count > this.rule.limit) throw this.refusal(resetAt);
  }

  /** The 429 of this rule: what the limit is and when to try again (also as Retry-After). */
  refusal(resetAt: number): ServiceError {
    const { what, limit, windowMs } = this.rule;
    const wait = retryAfterSeconds(resetAt);
    return new ServiceError(
      429,
      `Too many ${what}: at most ${limit} per ${Math.round(windowMs / 1000)} s from one address; try again in ${wait} s`,
      wait,
    );
  }
}

/** Whole seconds until `resetAt`, at least 1 (the limiter's clock is Date.now, as the library's is). */
export const retryAfterSeconds = (resetAt: number): number => Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
