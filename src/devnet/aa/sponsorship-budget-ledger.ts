// The local paymaster's sponsorship budgets on the store port, so a restart does not refill them and instances that
// share a store share them. One key per chain and budget (token, client, global), holding at most 61 one-minute
// buckets, charged with the store's atomic update: two instances charging one budget at once cannot both take its
// last share. The entry expires when its newest bucket stops counting.
import type { KeyValueStore } from '../../store/key-value-store.js';
import { BUDGET_COUNTED_MS, type BudgetBucket, type BudgetLedger, type ChargeOutcome, chargeBuckets, refundBuckets } from './sponsorship-budget.js';

export function storeBudgetLedger(store: KeyValueStore, chainId: number): BudgetLedger {
  const keyOf = (key: string) => `aa:budget:${chainId}:${key}`;
  return {
    async charge(key, cost, limit, now) {
      let outcome: ChargeOutcome | undefined;
      await store.update<BudgetBucket[]>(
        keyOf(key),
        (current) => {
          const charged = chargeBuckets(current, cost, limit, now);
          outcome = charged.outcome;
          return charged.buckets;
        },
        BUDGET_COUNTED_MS,
      );
      return outcome as ChargeOutcome;
    },
    async refund(key, cost, bucket) {
      await store.update<BudgetBucket[]>(keyOf(key), (current) => current && refundBuckets(current, cost, bucket));
    },
  };
}
