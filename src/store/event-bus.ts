// The events port: short notices between the instances of the service that share one store ("session X moved"),
// so what one instance observes wakes whoever waits for it on any instance. Adapters: in-process (one instance,
// the default) and Redis pub/sub (redis-event-bus.ts).
//
// Delivery is at most once and carries no history: a listener that was not subscribed, or an instance that was
// disconnected, misses the notice. Listeners therefore treat a notice as a hint to read the store (the record is
// the truth) and keep a slow poll of their own as the backstop.

export type EventListener = (message: string) => void;

export interface EventBus {
  /**
   * Delivers `message` to the listeners of `topic`: this instance's at once (synchronously, before the promise
   * settles), the other instances' through the adapter's transport.
   */
  publish(topic: string, message: string): Promise<void>;
  /** Calls `listener` with each message published on `topic` from now on, on any instance; returns the unsubscribe. */
  subscribe(topic: string, listener: EventListener): () => void;
  close(): Promise<void>;
}

/** Listeners per topic, shared by the adapters for their local deliveries. */
export class TopicListeners {
  readonly #topics = new Map<string, Set<EventListener>>();

  /** Adds the listener; true when it is the topic's first. */
  add(topic: string, listener: EventListener): boolean {
    let listeners = this.#topics.get(topic);
    const first = !listeners;
    if (!listeners) {
      listeners = new Set();
      this.#topics.set(topic, listeners);
    }
    listeners.add(listener);
    return first;
  }

  /** Removes the listener; true when the topic has none left. */
  remove(topic: string, listener: EventListener): boolean {
    const listeners = this.#topics.get(topic);
    if (!listeners?.delete(listener)) return false;
    if (listeners.size > 0) return false;
    this.#topics.delete(topic);
    return true;
  }

  /** Calls every listener of `topic`; one that throws does not keep the message from the others. */
  deliver(topic: string, message: string): void {
    for (const listener of [...(this.#topics.get(topic) ?? [])]) {
      try {
        listener(message);
      } catch {
        // a listener's failure is its own: the bus has nobody to report it to
      }
    }
  }

  /** Every topic with a listener now. */
  topics(): string[] {
    return [...this.#topics.keys()];
  }

  clear(): void {
    this.#topics.clear();
  }
}

/** One instance: the listeners of this process are all there is. */
export class InProcessEventBus implements EventBus {
  readonly #listeners = new TopicListeners();

  async publish(topic: string, message: string): Promise<void> {
    this.#listeners.deliver(topic, message);
  }

  subscribe(topic: string, listener: EventListener): () => void {
    this.#listeners.add(topic, listener);
    return () => {
      this.#listeners.remove(topic, listener);
    };
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
