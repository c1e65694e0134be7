// Per-human quotas: N requests per window per human, counted under the human's nullifier so that every agent of
// one human draws on one budget (a second agent does not buy a second budget). Optionally a trial tier first.
//
// Semantics, the same in every store (this module's transition; the Redis script restates it in Lua):
// - Trial: a human's first `trial.limit` requests ever are served by the trial tier. They do not touch the window.
//   Their use is remembered for as long as the store keeps the human's entry (Redis and the service's store: for
//   good; the memory store: until it is evicted as the least recently used, or the process ends).
// - Free: after the trial (or at once without one), at most `limit` requests per fixed window of `windowS`
//   seconds. A window starts with the first free request after the previous window ended; a refused request is not
//   counted, and is told to retry when the window ends (Retry-After: whole seconds, at least 1).
// - `remaining`: what the human may still send now before a refusal (trial left plus the window's free left).
// Keys are nullifiers of registered humans (or, for a verifier that sees presented credentials, the pairwise `sub`
// the registry signed for it), so the key space grows with real humans, not with what callers send.
import { z } from 'zod';

export const quotaSchema = z
  .strictObject({
    limit: z.number().int().min(1).describe('Free tier: requests per window per human, counted over all of the human’s agents'),
    windowS: z.number().int().min(1).describe('The window in seconds; it starts with the first free request after the last one ended'),
    trial: z
      .strictObject({ limit: z.number().int().min(1).describe('Requests a human is served once, before the free tier, counted forever') })
      .optional(),
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/)
      .default('default')
      .describe('Names the budget in the store: policies with the same name share their humans’ counts'),
  })
  .describe('A per-human quota, keyed by the human’s nullifier');

export type Quota = z.output<typeof quotaSchema>;
export type QuotaInput = z.input<typeof quotaSchema>;

export type QuotaTier = 'trial' | 'free';

/** One request's draw on a human's quota. */
export interface QuotaUse {
  ok: boolean;
  /** The tier that served it (absent when refused). */
  tier?: QuotaTier;
  /** What the human may still send now before a refusal. */
  remaining: number;
  /** Refused: whole seconds until the window ends (at least 1); served: 0. */
  retryAfterS: number;
}

/** What a store keeps per human and quota. */
export interface QuotaState {
  /** Trial requests served, ever. */
  trialUsed: number;
  /** Free requests served in the window. */
  count: number;
  /** When the window ends (ms since epoch); at or before now: no window under way. */
  resetAt: number;
}

/**
 * Where quotas are counted. `key` names the human (and the budget: see quotaKeyOf); `consume` draws one request
 * atomically, so instances sharing the store share the budget. `nowMs` is the caller's clock.
 */
export interface QuotaStore {
  consume(key: string, quota: Quota, nowMs?: number): QuotaUse | Promise<QuotaUse>;
}

/** The store key of a human's budget: the quota's name, a scope (a network, for a service that has several) and the nullifier. */
export const quotaKeyOf = (quota: Quota, nullifier: bigint, scope?: string): string =>
  scope === undefined ? `${quota.name}:${nullifier}` : `${quota.name}:${scope}:${nullifier}`;

/**
 * The store key of the budget of a human known by a pairwise pseudonym (a credential's `sub`) rather than the
 * nullifier: a key of its own (`sub:`), which no nullifier's decimal key can be.
 */
export const pseudonymQuotaKeyOf = (quota: Quota, pseudonym: string, scope?: string): string =>
  scope === undefined ? `${quota.name}:sub:${pseudonym}` : `${quota.name}:${scope}:sub:${pseudonym}`;

/** Retry-After: whole seconds until the window ends, at least 1. */
const secondsUntil = (resetAt: number, nowMs: number): number => Math.max(1, Math.ceil((resetAt - nowMs) / 1000));

/**
 * One request against a human's state: the state to keep (unchanged when refused) and what the request got. The
 * transition every store but Redis runs (Redis runs the same in Lua).
 */
export function takeQuota(current: QuotaState | undefined, quota: Quota, nowMs: number): { state: QuotaState; use: QuotaUse } {
  const state = current ?? { trialUsed: 0, count: 0, resetAt: 0 };
  const windowLive = state.resetAt > nowMs;
  const trialLimit = quota.trial?.limit ?? 0;
  if (state.trialUsed < trialLimit) {
    const next = { ...state, trialUsed: state.trialUsed + 1 };
    const freeLeft = windowLive ? quota.limit - state.count : quota.limit;
    return { state: next, use: { ok: true, tier: 'trial', remaining: trialLimit - next.trialUsed + freeLeft, retryAfterS: 0 } };
  }
  const window = windowLive ? state : { trialUsed: state.trialUsed, count: 0, resetAt: nowMs + quota.windowS * 1000 };
  if (window.count >= quota.limit) return { state, use: { ok: false, remaining: 0, retryAfterS: secondsUntil(window.resetAt, nowMs) } };
  const next = { ...window, count: window.count + 1 };
  return { state: next, use: { ok: true, tier: 'free', remaining: quota.limit - next.count, retryAfterS: 0 } };
}

/**
 * How long a store must keep a human's state after a request at `nowMs`: with a trial, for good (undefined), as its
 * use must be remembered; without, until the window has ended (at most windowS from now).
 */
export const quotaKeepMs = (quota: Quota): number | undefined => (quota.trial ? undefined : quota.windowS * 1000);

/** The refusal message of an exhausted quota: the limit, that it is per human, and when to retry. */
export function quotaRefusalMessage(quota: Quota, retryAfter: number): string {
  const trial = quota.trial ? ` after a trial of ${quota.trial.limit}` : '';
  return `Quota exhausted: at most ${quota.limit} requests per ${quota.windowS} s per human${trial}, shared by all of the human's agents; retry in ${retryAfter} s`;
}

/**
 * Quotas in this process's memory, for one instance. Bounded: a human's entry leaves once its window has passed
 * (entries are swept from the least recently used), and the least recently used leave first when `maxEntries` is
 * reached, which forgets a trial's use: where the trial must hold, use Redis (redisQuotaStore) or a shared store.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly #entries = new Map<string, QuotaState & { expiresAt: number }>();

  constructor(readonly maxEntries = 100_000) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
  }

  consume(key: string, quota: Quota, nowMs: number = Date.now()): QuotaUse {
    const current = this.#entries.get(key);
    const { state, use } = takeQuota(current && current.expiresAt > nowMs ? current : undefined, quota, nowMs);
    const keep = quotaKeepMs(quota);
    // re-inserted at the end: the map's order is the order of last use
    this.#entries.delete(key);
    this.#entries.set(key, { ...state, expiresAt: keep === undefined ? Number.POSITIVE_INFINITY : Math.max(state.resetAt, nowMs + 1) });
    for (const [oldest, entry] of this.#entries) {
      if (entry.expiresAt > nowMs && this.#entries.size <= this.maxEntries) break;
      this.#entries.delete(oldest);
    }
    return use;
  }

  /** Humans with an entry (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }
}
