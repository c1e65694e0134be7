// Session records on the store port, under session:<id>. Every read is checked against the record shape of its
// kind (session-record.ts); readers ask for the kind they expect. Every change of a record's stage or identity-app
// report is published on the events port under the session's own topic, so whoever follows that session, on any
// instance sharing the store, reads it at once (session-watch.ts).
import type { EventBus } from '../store/event-bus.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { parseSessionRecord, type RecordOf, type SessionRecord, type SessionStage, type SessionType } from './session-record.js';

export { newSessionId } from './session-record.js';

/** Records outlive their tokens by a day, so support can still see how a session ended. */
const RETENTION_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

const KEY_PREFIX = 'session:';
const keyOf = (id: string): string => `${KEY_PREFIX}${id}`;
const exportKeyOf = (id: string): string => `session-export:${id}`;
/** The events topic of one session (per session, not per network: a notice wakes only that session's followers). */
const topicOf = (id: string): string => `session:${id}`;

/**
 * How far a session has come. Writes that follow the chain only move a session up this order: failed sits below
 * completed because the chain is the truth (an agent minted after its report timed out completes the session), and
 * completed is never left.
 */
const STAGE_ORDER: Record<SessionStage, number> = { 'qr-ready': 0, 'proof-received': 1, failed: 2, completed: 3 };

/** What a follower of the session needs to hear about: its stage and the identity app's report. */
const noticeOf = (record: SessionRecord | undefined): string =>
  record ? JSON.stringify([record.stage, record.callback?.receivedAt, record.callback?.outcome, record.callback?.txHash]) : '';

function ofKind<T extends SessionType>(record: SessionRecord, type: T): RecordOf<T> {
  // a token names its session's kind, so a record of another kind is a bug, not bad input
  if (record.type !== type) throw new Error(`Session ${record.id} is a ${record.type} session, not ${type}`);
  return record as RecordOf<T>;
}

export class SessionRepository {
  readonly #store: KeyValueStore;
  readonly #clock: Clock;
  readonly #events: EventBus | undefined;
  readonly #onPublishError: (error: unknown) => void;

  /**
   * clock: only for the record's ttl; pass the store's clock when tests control time. events: where changes are
   * published (absent: nobody is told); a failed publish is only reported, the followers' polls catch up.
   */
  constructor(store: KeyValueStore, clock: Clock = Date.now, events?: { bus: EventBus; onPublishError?: (error: unknown) => void }) {
    this.#store = store;
    this.#clock = clock;
    this.#events = events?.bus;
    this.#onPublishError = events?.onPublishError ?? (() => undefined);
  }

  /** Calls `listener` whenever session `id` changes stage or gets a report, on this instance or another. Returns the unsubscribe. */
  onChange(id: string, listener: () => void): () => void {
    return this.#events?.subscribe(topicOf(id), () => listener()) ?? (() => undefined);
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
    let before = '';
    let after = '';
    const updated = await this.#store.update<unknown>(keyOf(id), (current) => {
      if (current === undefined) throw new Error(`Session ${id} has no record`);
      const record = ofKind(parseSessionRecord(current), type);
      const next = fn(record);
      if (next.id !== id) throw new Error(`A session update must not change the id (${id} -> ${next.id})`);
      // the last call is the one written (a store may call fn again when another writer came first)
      before = noticeOf(record);
      after = noticeOf(next);
      return next;
    });
    if (after !== before && this.#events) this.#events.publish(topicOf(id), after).catch(this.#onPublishError);
    return updated as RecordOf<T>;
  }

  /**
   * update() for what reading the chain concludes, which any instance may conclude at the same time as another:
   * the write only moves the session forward (STAGE_ORDER), so of two racing writers the later one never takes
   * back or overwrites what the earlier one wrote; a completed record is left exactly as it is. Idempotent: writing
   * the same conclusion twice changes nothing the second time.
   */
  advance<T extends SessionType>(id: string, type: T, fn: (record: RecordOf<T>) => RecordOf<T>): Promise<RecordOf<T>> {
    return this.update(id, type, (current) => {
      if (current.stage === 'completed') return current;
      const next = fn(current);
      return STAGE_ORDER[next.stage] < STAGE_ORDER[current.stage] ? current : next;
    });
  }
}
