// Per-human quotas on Redis, for services running several instances of the SDK's verifier: one Lua script per
// request reads and writes the human's hash, so two instances drawing at once cannot both take the last request.
// It restates core/human-quota.ts's takeQuota (the tests run both on one sequence). Any client with ioredis's
// `eval` will do; the SDK does not depend on a Redis library.
import type { Quota, QuotaStore, QuotaTier, QuotaUse } from '../core/human-quota.js';

/** The one call the store makes: ioredis's `eval(script, numKeys, ...keysAndArgs)`. */
export interface RedisEvalClient {
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

export interface RedisQuotaStoreOptions {
  /** Put before every key (default "agent-quota:"); on top of the client's own keyPrefix, if it has one. */
  keyPrefix?: string;
}

// KEYS[1]: the human's hash {t: trial used, c: free used in the window, r: window end (ms)}.
// ARGV: now (ms, the caller's clock), limit, window (ms), trial limit (0: none).
// Returns {served (1/0), tier (1 trial, 2 free, 0 none), remaining, retry after (s)}. Without a trial the hash
// expires when its window would have ended (PEXPIRE: relative, so Redis's clock need not agree with the caller's);
// with one it is kept for good, as the trial's use must be.
const CONSUME = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local trial = tonumber(ARGV[4])
local held = redis.call('HMGET', KEYS[1], 't', 'c', 'r')
local t = tonumber(held[1]) or 0
local c = tonumber(held[2]) or 0
local r = tonumber(held[3]) or 0
if t < trial then
  t = t + 1
  redis.call('HSET', KEYS[1], 't', t)
  redis.call('PERSIST', KEYS[1])
  local free = limit
  if r > now then free = limit - c end
  return {1, 1, trial - t + free, 0}
end
if r <= now then
  c = 0
  r = now + window
end
if c >= limit then
  return {0, 0, 0, math.max(1, math.ceil((r - now) / 1000))}
end
c = c + 1
redis.call('HSET', KEYS[1], 't', t, 'c', c, 'r', r)
if trial > 0 then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], r - now)
end
return {1, 2, limit - c, 0}
`;

const TIERS: Record<number, QuotaTier | undefined> = { 1: 'trial', 2: 'free' };

export function redisQuotaStore(client: RedisEvalClient, options: RedisQuotaStoreOptions = {}): QuotaStore {
  const prefix = options.keyPrefix ?? 'agent-quota:';
  return {
    async consume(key: string, quota: Quota, nowMs: number = Date.now()): Promise<QuotaUse> {
      const answer = await client.eval(CONSUME, 1, prefix + key, Math.floor(nowMs), quota.limit, quota.windowS * 1000, quota.trial?.limit ?? 0);
      if (!Array.isArray(answer) || answer.length !== 4) throw new Error(`Redis quota script answered ${JSON.stringify(answer)}`);
      const [served, tier, remaining, retryAfterS] = answer.map(Number) as [number, number, number, number];
      const use: QuotaUse = { ok: served === 1, remaining, retryAfterS };
      const named = TIERS[tier];
      if (named) use.tier = named;
      return use;
    },
  };
}
