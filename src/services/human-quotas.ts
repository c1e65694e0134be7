// The service's per-human quotas and policies, counted on the store port: one atomic update per request (a sqlite
// transaction, or Redis's compare-and-set), so the instances sharing a store share each human's budget and a
// restart keeps it. The transition is core/human-quota.ts's, the one the SDK's memory store runs.
import { type CompiledPolicy, enforcePolicy, type PolicySubject } from '../core/agent-policy.js';
import { type Quota, type QuotaState, type QuotaStore, type QuotaUse, quotaKeepMs, takeQuota } from '../core/human-quota.js';
import type { NetworkName } from '../core/networks.js';
import { PolicyRefusalError } from '../core/policy-refusal.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';

const PREFIX = 'human-quota:';

export class HumanQuotas implements QuotaStore {
  constructor(
    private readonly store: KeyValueStore,
    private readonly clock: Clock = Date.now,
  ) {}

  async consume(key: string, quota: Quota, nowMs: number = this.clock()): Promise<QuotaUse> {
    let use: QuotaUse | undefined;
    // the update may run its function more than once (Redis retries a lost compare-and-set): the last run is what was kept
    await this.store.update<QuotaState>(
      PREFIX + key,
      (current) => {
        const taken = takeQuota(current, quota, nowMs);
        use = taken.use;
        return taken.state;
      },
      quotaKeepMs(quota),
    );
    return use as QuotaUse;
  }

  /**
   * Every policy, then the human's quota on `network` (humans are counted per chain: a nullifier belongs to one
   * registry). Throws a PolicyRefusalError (403 {error, policy}, or 429 with Retry-After); returns the quota's use.
   */
  async enforce(policy: CompiledPolicy, subject: PolicySubject, network: NetworkName): Promise<QuotaUse | undefined> {
    const outcome = await enforcePolicy(policy, subject, { quotas: this, scope: network, nowMs: this.clock() });
    if (!outcome.ok) throw new PolicyRefusalError(outcome);
    return outcome.quota;
  }
}
