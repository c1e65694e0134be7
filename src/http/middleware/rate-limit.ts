// The service layer's per-client limits on REST routes, through express-rate-limit (its standard RateLimit
// headers and Retry-After): its Store delegates to the limiter, so REST and A2A count under the same key. The
// limiter decides (a sliding window, services/rate-limits.ts): a refused hit comes back as a count beyond the limit
// with resetTime the moment a use fits again, which express-rate-limit turns into Retry-After.
import type { Request, RequestHandler } from 'express';
import { type ClientRateLimitInfo, type RateLimitInfo, rateLimit, type Store } from 'express-rate-limit';
import { clientKeyOf, type RateLimiter } from '../../services/rate-limits.js';

/** express-rate-limit's Store over a service limiter. */
class LimiterStore implements Store {
  readonly localKeys = false;

  constructor(private readonly limiter: RateLimiter) {}

  get prefix(): string {
    return this.limiter.rule.name;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const window = await this.limiter.current(key);
    return window && { totalHits: window.count, resetTime: new Date(window.resetAt) };
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const { count, resetAt } = await this.limiter.hit(key);
    return { totalHits: count, resetTime: new Date(resetAt) };
  }

  decrement(key: string): Promise<void> {
    return this.limiter.undo(key);
  }

  resetKey(key: string): Promise<void> {
    return this.limiter.reset(key);
  }
}

/** `limiter`'s rule per client address; beyond it 429 with Retry-After and the limiter's error body. */
export function perClientLimit(limiter: RateLimiter): RequestHandler {
  const { limit, windowMs } = limiter.rule;
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new LimiterStore(limiter),
    keyGenerator: (req) => clientKeyOf(req.ip),
    // clientKeyOf is ipKeyGenerator (IPv6 by /56); the library's source scan cannot see through the call
    validate: { keyGeneratorIpFallback: false },
    handler: (req, res, _next, options) => {
      // the counted window of this request (express-rate-limit puts it on the request)
      const resetAt = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit?.resetTime?.getTime() ?? Date.now() + windowMs;
      res.status(options.statusCode).json({ error: limiter.refusal(resetAt).message });
    },
  });
}
