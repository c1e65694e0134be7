// Rate limits with express-rate-limit, counting in our key-value store so that limits hold across
// restarts and, with a shared store, across instances.
import type { RequestHandler } from 'express';
import { type ClientRateLimitInfo, ipKeyGenerator, type Options, rateLimit, type Store } from 'express-rate-limit';
import type { Clock, KeyValueStore, WindowCounter } from '../../store/key-value-store.js';

/** express-rate-limit's Store over the key-value port's fixed-window counters. */
export class KeyValueRateLimitStore implements Store {
  private windowMs = 60_000;
  readonly localKeys = false;

  constructor(
    private readonly kv: KeyValueStore,
    readonly prefix: string,
    private readonly clock: Clock = Date.now,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  private key(key: string): string {
    return `ratelimit:${this.prefix}:${key}`;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const window = await this.kv.get<WindowCounter>(this.key(key));
    if (!window || window.resetAt <= this.clock()) return undefined;
    return { totalHits: window.count, resetTime: new Date(window.resetAt) };
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const { count, resetAt } = await this.kv.increment(this.key(key), this.windowMs);
    return { totalHits: count, resetTime: new Date(resetAt) };
  }

  async decrement(key: string): Promise<void> {
    await this.kv.update<WindowCounter>(this.key(key), (current) => current && { ...current, count: Math.max(0, current.count - 1) });
  }

  async resetKey(key: string): Promise<void> {
    await this.kv.delete(this.key(key));
  }
}

export interface LimitOptions {
  store: KeyValueStore;
  /** Names the counter and the error message. */
  name: string;
  what: string;
  limit: number;
  windowMs: number;
  clock?: Clock;
}

/** `limit` requests per `windowMs` per client IP; beyond that 429 with Retry-After and an error body. */
export function perIpLimit(options: LimitOptions): RequestHandler {
  const seconds = Math.round(options.windowMs / 1000);
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new KeyValueRateLimitStore(options.store, options.name, options.clock),
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
    handler: (_req, res, _next, limiter) => {
      res.status(limiter.statusCode).json({
        error: `Too many ${options.what}: at most ${options.limit} per ${seconds} s from one address; retry after the time in Retry-After`,
      });
    },
  });
}
