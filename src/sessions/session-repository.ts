import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import type { SessionRecord } from './session-record.js';

export { newSessionId } from './session-record.js';

/** Records outlive their tokens by a day, so support can still see how a session ended. */
const RETENTION_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

const keyOf = (id: string): string => `session:${id}`;

export class SessionRepository {
  readonly #store: KeyValueStore;
  readonly #clock: Clock;

  /** clock: only for the record's ttl; pass the store's clock when tests control time. */
  constructor(store: KeyValueStore, clock: Clock = Date.now) {
    this.#store = store;
    this.#clock = clock;
  }

  /** Throws if a record with this id exists already (ids are random, so that is a bug, not bad luck). */
  async create(record: SessionRecord): Promise<void> {
    const ttlMs = record.expiresAt - this.#clock() + RETENTION_AFTER_EXPIRY_MS;
    await this.#store.update<SessionRecord>(
      keyOf(record.id),
      (current) => {
        if (current) throw new Error(`Session ${record.id} exists already`);
        return record;
      },
      ttlMs,
    );
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.#store.get<SessionRecord>(keyOf(id));
  }

  /** Atomic; keeps the record's expiry. A valid token always has a record, so a missing one is a bug. */
  async update(id: string, fn: (record: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const updated = await this.#store.update<SessionRecord>(keyOf(id), (current) => {
      if (!current) throw new Error(`Session ${id} has no record`);
      const next = fn(current);
      if (next.id !== id) throw new Error(`A session update must not change the id (${id} -> ${next.id})`);
      return next;
    });
    return updated!;
  }
}
