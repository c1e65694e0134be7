// Session records on the store port, under session:<id>. Every read is checked against the record shape of its
// kind (session-record.ts); readers ask for the kind they expect.
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { parseSessionRecord, type RecordOf, type SessionRecord, type SessionType } from './session-record.js';

export { newSessionId } from './session-record.js';

/** Records outlive their tokens by a day, so support can still see how a session ended. */
const RETENTION_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

const KEY_PREFIX = 'session:';
const keyOf = (id: string): string => `${KEY_PREFIX}${id}`;
const exportKeyOf = (id: string): string => `session-export:${id}`;

function ofKind<T extends SessionType>(record: SessionRecord, type: T): RecordOf<T> {
  // a token names its session's kind, so a record of another kind is a bug, not bad input
  if (record.type !== type) throw new Error(`Session ${record.id} is a ${record.type} session, not ${type}`);
  return record as RecordOf<T>;
}

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

  /** The record, checked against its kind's shape; with `type`, only a record of that kind. */
  async get(id: string): Promise<SessionRecord | undefined>;
  async get<T extends SessionType>(id: string, type: T): Promise<RecordOf<T> | undefined>;
  async get(id: string, type?: SessionType): Promise<SessionRecord | undefined> {
    const stored = await this.#store.get<unknown>(keyOf(id));
    if (stored === undefined) return undefined;
    const record = parseSessionRecord(stored);
    return type ? ofKind(record, type) : record;
  }

  /**
   * Marks the session's key as handed out: true for the first claim only, whichever instance or token makes it,
   * also after a restart (a claim on the store, kept as long as the record). The key itself is never stored.
   */
  async claimExport(record: SessionRecord): Promise<boolean> {
    const now = this.#clock();
    return this.#store.setIfAbsent(exportKeyOf(record.id), { exportedAt: now }, Math.max(1, record.expiresAt - now) + RETENTION_AFTER_EXPIRY_MS);
  }

  /** The ids of every session still kept (open, or ended less than a day ago). */
  async ids(): Promise<string[]> {
    return (await this.#store.keys(KEY_PREFIX)).map((key) => key.slice(KEY_PREFIX.length));
  }

  /** Atomic; keeps the record's expiry. A valid token always has a record, so a missing one is a bug. */
  async update<T extends SessionType>(id: string, type: T, fn: (record: RecordOf<T>) => RecordOf<T>): Promise<RecordOf<T>> {
    const updated = await this.#store.update<unknown>(keyOf(id), (current) => {
      if (current === undefined) throw new Error(`Session ${id} has no record`);
      const next = fn(ofKind(parseSessionRecord(current), type));
      if (next.id !== id) throw new Error(`A session update must not change the id (${id} -> ${next.id})`);
      return next;
    });
    return updated as RecordOf<T>;
  }
}
