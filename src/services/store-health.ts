// Whether the store answers, for the health endpoint: a load balancer must see an instance whose shared store is
// gone (Redis stopped) as unhealthy, not only one whose chain is. One read of a key nobody writes is the probe.
import { ServiceError } from '../core/errors.js';
import type { KeyValueStore } from '../store/key-value-store.js';

export interface StoreHealth {
  up: boolean;
  /** Why the store does not answer. */
  error?: string;
}

export function storeHealthProbe(store: KeyValueStore): () => Promise<StoreHealth> {
  return async () => {
    try {
      await store.get('health:probe');
      return { up: true };
    } catch (error) {
      return { up: false, error: error instanceof ServiceError ? error.message : 'store unavailable' };
    }
  };
}
