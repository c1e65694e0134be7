// The events port over Redis pub/sub: every instance publishing and subscribing on the same Redis hears the others.
// A connection of its own subscribes (a Redis connection in subscriber mode takes no other command), one channel per
// topic with a listener here, named under the configured key prefix so that services sharing a Redis keep apart.
//
// - This instance's listeners get a message at once, not by the round trip through Redis; the copy Redis sends back
//   carries this instance's id and is dropped, so nobody hears a message twice.
// - After a reconnect, the bus subscribes every topic that has a listener again (also those whose SUBSCRIBE failed
//   while Redis was away); messages published while the connection was down are lost (pub/sub keeps none), so
//   every listener then gets one wake-up notice (RECONNECTED) to read what it waits for afresh.
// - Connections take the store's options (redis-store.ts): a publish while Redis is away fails at once (a notice is
//   a hint, never worth holding a request for); the subscriber queues its commands until it is connected again.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type EventBus, type EventListener, TopicListeners } from './event-bus.js';
import { createRedisClient } from './redis-store.js';

/** The message listeners receive after the subscriber connection came back: events may have been missed. */
export const RECONNECTED = 'reconnected';

export interface RedisEventBusOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** Prepended to every channel name, e.g. "registry:"; channels are <prefix>events:<topic>. */
  keyPrefix?: string;
  /** A connection lost (once per outage of each connection) or a command failed; the bus keeps trying. */
  onError?: (error: Error) => void;
}

export class RedisEventBus implements EventBus {
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #listeners = new TopicListeners();
  readonly #channelPrefix: string;
  /** Tells this instance's own messages apart when Redis sends them back. */
  readonly #origin = randomBytes(8).toString('hex');
  readonly #onError: (error: Error) => void;
  /** SUBSCRIBE and UNSUBSCRIBE commands not yet answered (flush() waits for them). */
  #pending = new Set<Promise<unknown>>();
  #connectedOnce = false;

  constructor(options: RedisEventBusOptions) {
    this.#channelPrefix = `${options.keyPrefix ?? ''}events:`;
    this.#onError = options.onError ?? (() => undefined);
    this.#publisher = createRedisClient(options.url, { connectionName: 'events-publisher' });
    // no command timeout: a subscriber connection waits for messages, not answers
    this.#subscriber = createRedisClient(options.url, {
      connectionName: 'events-subscriber',
      enableOfflineQueue: true,
      autoResubscribe: false,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
    });
    for (const connection of [this.#publisher, this.#subscriber]) {
      // ioredis reports every failed reconnection attempt: the first of an outage is enough
      let down = false;
      connection.on('error', (error: Error) => {
        if (!down) this.#onError(error);
        down = true;
      });
      connection.on('ready', () => {
        down = false;
      });
      // lazy connections: connect now; a failure is reported on 'error' and retried by ioredis
      connection.connect().catch(() => undefined);
    }
    this.#subscriber.on('message', (channel: string, envelope: string) => this.#received(channel, envelope));
    this.#subscriber.on('ready', () => this.#reconnected());
  }

  async publish(topic: string, message: string): Promise<void> {
    this.#listeners.deliver(topic, message);
    await this.#publisher.publish(this.#channel(topic), `${this.#origin} ${message}`);
  }

  subscribe(topic: string, listener: EventListener): () => void {
    if (this.#listeners.add(topic, listener)) this.#track(this.#subscriber.subscribe(this.#channel(topic)));
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      if (this.#listeners.remove(topic, listener)) this.#track(this.#subscriber.unsubscribe(this.#channel(topic)));
    };
  }

  /**
   * Resolves once both connections are up: a publish fails at once before the publisher's is (see above). For a
   * caller whose first messages matter; it waits through failed attempts, so a caller that must not wait long bounds it.
   */
  async ready(): Promise<void> {
    await Promise.all(
      [this.#publisher, this.#subscriber].map((connection) =>
        connection.status === 'ready' ? undefined : new Promise((resolve) => connection.once('ready', resolve)),
      ),
    );
  }

  /** Resolves once Redis has answered every SUBSCRIBE and UNSUBSCRIBE sent so far: from then on, other instances' messages arrive. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    await Promise.allSettled([this.#publisher.quit(), this.#subscriber.quit()]);
    this.#publisher.disconnect();
    this.#subscriber.disconnect();
  }

  #channel(topic: string): string {
    return `${this.#channelPrefix}${topic}`;
  }

  #track(command: Promise<unknown>): void {
    const tracked = command.catch((error: unknown) => this.#onError(error instanceof Error ? error : new Error(String(error))));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }

  /** On every connection after the first: the channels again, and a wake-up for what was missed meanwhile. */
  #reconnected(): void {
    if (!this.#connectedOnce) {
      this.#connectedOnce = true;
      return;
    }
    const topics = this.#listeners.topics();
    if (topics.length === 0) return;
    this.#track(this.#subscriber.subscribe(...topics.map((topic) => this.#channel(topic))));
    for (const topic of topics) this.#listeners.deliver(topic, RECONNECTED);
  }

  #received(channel: string, envelope: string): void {
    if (!channel.startsWith(this.#channelPrefix)) return;
    const space = envelope.indexOf(' ');
    if (space < 0 || envelope.slice(0, space) === this.#origin) return;
    this.#listeners.deliver(channel.slice(this.#channelPrefix.length), envelope.slice(space + 1));
  }
}
