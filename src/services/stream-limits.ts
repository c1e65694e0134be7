// Long-lived streams (A2A message/stream and resubscriptions, scan-page events) hold a connection each for as long
// as their task or session lives, up to 30 minutes. Without a bound per caller, one client opened 1,000 streams on
// one task in a few seconds and took every connection the server accepts. Each stream takes a ticket here first:
// at most `perClient` open streams per client address, `perSubject` per task or session (a few tabs or agents
// following it), and `total` in all; and a stream lives at most `maxLifetimeMs`, after which it is ended and the
// client resubscribes (A2A's tasks/resubscribe, the scan page's EventSource reconnects by itself). Counts are per
// process: each instance guards its own connections.
import { ServiceError } from '../core/errors.js';

export interface StreamLimitRules {
  perClient: number;
  perSubject: number;
  total: number;
  maxLifetimeMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimitRules = { perClient: 8, perSubject: 4, total: 1_000, maxLifetimeMs: 10 * 60_000 };

/** A stream being open; release() when it ends (idempotent). */
export interface StreamTicket {
  /** When the stream must end: the client resubscribes. */
  readonly maxLifetimeMs: number;
  release(): void;
}

/** Streams end within their lifetime, and most far sooner: a client refused may try again shortly. */
const RETRY_AFTER_SECONDS = 10;

export class StreamLimits {
  readonly rules: StreamLimitRules;
  readonly #byClient = new Map<string, number>();
  readonly #bySubject = new Map<string, number>();
  #total = 0;

  constructor(rules: Partial<StreamLimitRules> = {}) {
    this.rules = { ...DEFAULT_STREAM_LIMITS, ...rules };
  }

  /** Open streams now, in all. */
  get open(): number {
    return this.#total;
  }

  /**
   * A ticket for one more stream of `client` following `subject` (a task or session), or 429 naming the limit.
   * Synchronous, so concurrent requests cannot overshoot a limit.
   */
  admit(client: string, subject?: string): StreamTicket {
    const { perClient, perSubject, total, maxLifetimeMs } = this.rules;
    const refuse = (what: string): never => {
      throw new ServiceError(429, `Too many open streams: ${what}; close one, or try again when one ends`, RETRY_AFTER_SECONDS);
    };
    if ((this.#byClient.get(client) ?? 0) >= perClient) refuse(`at most ${perClient} per client`);
    if (subject !== undefined && (this.#bySubject.get(subject) ?? 0) >= perSubject) refuse(`at most ${perSubject} follow one task or session`);
    if (this.#total >= total) refuse(`the service holds ${total}, its most`);
    add(this.#byClient, client, 1);
    if (subject !== undefined) add(this.#bySubject, subject, 1);
    this.#total++;
    let released = false;
    return {
      maxLifetimeMs,
      release: () => {
        if (released) return;
        released = true;
        add(this.#byClient, client, -1);
        if (subject !== undefined) add(this.#bySubject, subject, -1);
        this.#total--;
      },
    };
  }
}

/** Adds `delta` to a count, dropping the key at zero so the maps hold only open streams. */
function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
