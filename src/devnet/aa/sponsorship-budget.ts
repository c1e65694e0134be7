// Sponsorship budgets: how much gas and native value the paymaster's deposit may be charged per rolling hour, per
// proxy token, per client address and in all. A budget is charged, when the paymaster signs, with what the EntryPoint
// may take from the deposit for the operation at most: its gas limits, and those times its maxFeePerGas (the actual
// charge is never more).
//
// A budget's spending is kept in one-minute buckets, at most 61 of them: a charge fits when the buckets of the last
// 61 minutes (the current one included) plus it stay within the limit. Counting one bucket more than the hour makes
// the limit exact for every 60-minute span, whatever the bucket boundaries: the spending of any such span lies in at
// most 61 consecutive buckets, all of which its last charge was checked against. A client waits at most a minute
// longer than an exact log would make it; the record stays 61 entries however many operations it counts.
import { type Address, formatEther } from 'viem';
import { DIRECT_CLIENT, type Sponsoree } from '../../aa/sponsoree-header.js';
import { sponsorshipRefused } from './sponsorship-refusal.js';

/** What a sponsorship may cost the deposit: gas, and wei (gas times maxFeePerGas). */
export interface SponsoredCost {
  gas: bigint;
  wei: bigint;
}

/** A budget per rolling hour. */
export type BudgetLimit = SponsoredCost;

/** One minute of a budget's spending; `at` is the minute's start (unix ms). */
export interface BudgetBucket extends SponsoredCost {
  at: number;
}

export const BUDGET_WINDOW_MS = 3_600_000;
export const BUDGET_BUCKET_MS = 60_000;
/** How long a bucket counts: the window plus the bucket it started in. */
export const BUDGET_COUNTED_MS = BUDGET_WINDOW_MS + BUDGET_BUCKET_MS;

export type ChargeOutcome =
  | { charged: true; bucket: number }
  /** `retryAt`: when enough of the spending has left the window for this cost to fit; undefined: it never fits. */
  | { charged: false; used: SponsoredCost; retryAt: number | undefined };

const bucketOf = (now: number): number => now - (now % BUDGET_BUCKET_MS);
const fits = (used: SponsoredCost, cost: SponsoredCost, limit: BudgetLimit): boolean =>
  used.gas + cost.gas <= limit.gas && used.wei + cost.wei <= limit.wei;

/** The buckets still counted at `now`, oldest first. */
export function liveBuckets(buckets: readonly BudgetBucket[] | undefined, now: number): BudgetBucket[] {
  return (buckets ?? []).filter((b) => b.at > now - BUDGET_COUNTED_MS).sort((a, b) => a.at - b.at);
}

const total = (buckets: readonly BudgetBucket[]): SponsoredCost =>
  buckets.reduce((sum, b) => ({ gas: sum.gas + b.gas, wei: sum.wei + b.wei }), { gas: 0n, wei: 0n });

/** Charges `cost` at `now` if it fits `limit`: the new buckets and the outcome (the buckets unchanged when refused). */
export function chargeBuckets(
  buckets: readonly BudgetBucket[] | undefined,
  cost: SponsoredCost,
  limit: BudgetLimit,
  now: number,
): { buckets: BudgetBucket[]; outcome: ChargeOutcome } {
  const live = liveBuckets(buckets, now);
  const used = total(live);
  if (!fits(used, cost, limit)) {
    let retryAt: number | undefined;
    if (fits({ gas: 0n, wei: 0n }, cost, limit)) {
      // the oldest buckets leave first: the first moment enough of them have left
      let left = used;
      for (const bucket of live) {
        left = { gas: left.gas - bucket.gas, wei: left.wei - bucket.wei };
        if (fits(left, cost, limit)) {
          retryAt = bucket.at + BUDGET_COUNTED_MS;
          break;
        }
      }
    }
    return { buckets: live, outcome: { charged: false, used, retryAt } };
  }
  const at = bucketOf(now);
  const current = live.find((b) => b.at === at);
  const next = current
    ? live.map((b) => (b === current ? { at, gas: b.gas + cost.gas, wei: b.wei + cost.wei } : b))
    : [...live, { at, gas: cost.gas, wei: cost.wei }];
  return { buckets: next, outcome: { charged: true, bucket: at } };
}

/** Takes back a charge made in bucket `at` (a later budget refused the same sponsorship). */
export function refundBuckets(buckets: readonly BudgetBucket[] | undefined, cost: SponsoredCost, at: number): BudgetBucket[] {
  return (buckets ?? []).map((b) =>
    b.at === at ? { at, gas: b.gas > cost.gas ? b.gas - cost.gas : 0n, wei: b.wei > cost.wei ? b.wei - cost.wei : 0n } : b,
  );
}

/** Where budgets are kept: in memory by default, or on the service's store (shared, kept across restarts). */
export interface BudgetLedger {
  /** Atomically: charges `cost` to `key` if it fits `limit` over the rolling hour. */
  charge(key: string, cost: SponsoredCost, limit: BudgetLimit, now: number): Promise<ChargeOutcome>;
  refund(key: string, cost: SponsoredCost, bucket: number): Promise<void>;
}

/** The in-memory ledger, for a paymaster without a store: at most `maxKeys` budgets, the least recently charged dropped. */
export function createMemoryBudgetLedger(maxKeys = 10_000): BudgetLedger {
  const byKey = new Map<string, BudgetBucket[]>();
  return {
    async charge(key, cost, limit, now) {
      const { buckets, outcome } = chargeBuckets(byKey.get(key), cost, limit, now);
      byKey.delete(key); // re-inserted last: the map's order is recency
      byKey.set(key, buckets);
      for (const oldest of byKey.keys()) {
        if (byKey.size <= maxKeys) break;
        byKey.delete(oldest);
      }
      return outcome;
    },
    async refund(key, cost, bucket) {
      const buckets = byKey.get(key);
      if (buckets) byKey.set(key, refundBuckets(buckets, cost, bucket));
    },
  };
}

export interface SponsorshipBudgetLimits {
  perToken: BudgetLimit;
  perClient: BudgetLimit;
  global: BudgetLimit;
}

/** Defaults: a passkey account's deployment with a registry call is about 1.2M gas of limits, 0.002 native at anvil's fees. */
export const DEFAULT_BUDGETS: SponsorshipBudgetLimits = {
  perToken: { gas: 10_000_000n, wei: 50_000_000_000_000_000n },
  perClient: { gas: 20_000_000n, wei: 100_000_000_000_000_000n },
  global: { gas: 400_000_000n, wei: 2_000_000_000_000_000_000n },
};

const describe = (cost: SponsoredCost): string => `${cost.gas} gas and ${formatEther(cost.wei)}`;

/** Charges a sponsorship to the token's, the client's and the global budget, or to none: the refusal names the budget. */
export function sponsorshipBudgets(ledger: BudgetLedger, limits: SponsorshipBudgetLimits) {
  return {
    async charge(who: Sponsoree, sender: Address, cost: SponsoredCost, now: number): Promise<void> {
      const budgets = [
        ...(who.token ? [{ rule: 'token budget', key: `token:${who.token}`, limit: limits.perToken, whose: 'this proxy token' } as const] : []),
        {
          rule: 'client budget',
          key: `client:${who.client}`,
          limit: limits.perClient,
          whose: who.client === DIRECT_CLIENT ? 'callers without the proxy' : `client ${who.client}`,
        } as const,
        { rule: 'global budget', key: 'global', limit: limits.global, whose: 'this paymaster' } as const,
      ];
      const charged: { key: string; bucket: number }[] = [];
      for (const budget of budgets) {
        const outcome = await ledger.charge(budget.key, cost, budget.limit, now);
        if (outcome.charged) {
          charged.push({ key: budget.key, bucket: outcome.bucket });
          continue;
        }
        await Promise.all(charged.map(({ key, bucket }) => ledger.refund(key, cost, bucket)));
        const when =
          outcome.retryAt === undefined
            ? 'this operation alone is over it'
            : `try again in ${Math.max(1, Math.ceil((outcome.retryAt - now) / 1000))} s${budget.rule === 'token budget' ? ' or with a new token' : ''}`;
        throw sponsorshipRefused(
          budget.rule,
          `${budget.whose} was sponsored ${describe(outcome.used)} in the last hour, and ${sender}'s operation may cost ` +
            `${describe(cost)}: over the budget of ${describe(budget.limit)} per hour; ${when}`,
        );
      }
    },
  };
}

export type SponsorshipBudgets = ReturnType<typeof sponsorshipBudgets>;
