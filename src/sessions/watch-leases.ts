// Which instance follows a watched session: a lease per watch on the shared store, held while the watch runs
// (renewed every third of its term), let go when it ends, and expired by the store when its instance dies.
// Several instances share the open A2A tasks in the store, and each resumes the open ones it finds (at start, and
// periodically for those whose instance died): without leases, every instance would follow every task, saving
// its updates and notifying its webhooks once per instance.
import type { KeyValueStore } from '../store/key-value-store.js';

export interface WatchLeaseOptions {
  store: KeyValueStore;
  /**
   * This instance; default a random id. The composition root derives it from the host and DATA_DIR, so that an
   * instance restarted after a crash takes its own watches back at once instead of waiting for their leases to expire.
   */
  instanceId?: string;
  /** How long a lease outlives the last renewal (the longest a dead instance's watch stays unresumed); default 30 s. */
  leaseMs?: number;
}

const keyOf = (id: string): string => `watch-lease:${id}`;

/** Thrown inside a store update to leave another instance's lease as it is. */
class HeldElsewhere extends Error {}

export class WatchLeases {
  readonly #store: KeyValueStore;
  readonly #instanceId: string;
  readonly #leaseMs: number;
  readonly #held = new Set<string>();
  #renewal: NodeJS.Timeout | undefined;

  constructor(options: WatchLeaseOptions) {
    this.#store = options.store;
    this.#instanceId = options.instanceId ?? crypto.randomUUID();
    this.#leaseMs = options.leaseMs ?? 30_000;
  }

  /** Takes the lease of `id` unless another live instance holds it; true when taken. */
  async claim(id: string): Promise<boolean> {
    try {
      await this.#store.update<string>(
        keyOf(id),
        (holder) => {
          if (holder !== undefined && holder !== this.#instanceId) throw new HeldElsewhere();
          return this.#instanceId;
        },
        this.#leaseMs,
      );
      return true;
    } catch (error) {
      if (error instanceof HeldElsewhere) return false;
      throw error;
    }
  }

  /** Holds the lease of `id` from now on (a watch this instance starts), renewing it until let go. */
  hold(id: string): void {
    this.#held.add(id);
    this.#write(id);
    this.#renewal ??= setInterval(() => {
      for (const held of this.#held) this.#write(held);
    }, this.#leaseMs / 3).unref();
  }

  /**
   * Lets the lease of `id` go, if this instance still holds it, so another may take the watch at once. The store's
   * write is started before this returns (an in-memory store has let go by then).
   */
  letGo(id: string): void {
    if (!this.#held.delete(id)) return;
    if (this.#held.size === 0) {
      clearInterval(this.#renewal);
      this.#renewal = undefined;
    }
    // a failure leaves the lease to expire
    this.#store.update<string>(keyOf(id), (holder) => (holder === this.#instanceId ? undefined : holder)).catch(() => undefined);
  }

  #write(id: string): void {
    // a failed renewal (the store away for a moment) is retried at the next one; the lease outlives two of them
    this.#store.set(keyOf(id), this.#instanceId, this.#leaseMs).catch(() => undefined);
  }
}
