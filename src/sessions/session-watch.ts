// Following a session until it ends: the one mechanism behind everything that waits for a human to finish (an
// A2A register or deregister task, and anything else that shows a session live). A watch reads the session's
// status (the same read as the REST status endpoint) whenever the registry of its network logs something or the
// session's record changes, and at least every `pollIntervalMs`, so a registration is seen within one log poll of
// its block; it reports each new stage and ends at completed, failed or expiry.
//
// Across instances (several processes on one shared store): the identity app reports to whichever instance its
// callback URL reaches, and any instance's status read may be the one that sees the chain complete a session. Each
// such write of the record is published on the events port under the session's own topic (SessionRepository), and
// a watch listens to its session's topic, so the watch wakes on every instance within a pub/sub hop.
// Decision: topics per session, not per network. Every instance follows the registry's logs itself already (the
// local wake-up below); a per-network notice would wake every watch of the network on every instance at each
// registry log, each wake a status read with a chain round trip, while a per-session notice wakes only the
// session that moved, whose read is then a store read (a completed record is not checked against the chain again).
//
// Watches hold a slot each: at most `maxWatches` run at once, and the slot is taken before anything is awaited,
// so concurrent requests cannot overshoot the cap.
import { ChainUnreachableError, ServiceError, StoreUnavailableError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import { FINAL_STAGES, type SessionStage, type SessionType } from '../core/session-types.js';
import type { AnySessionStatus, Sessions } from './sessions.js';
import type { WatchLeases } from './watch-leases.js';

/** How a watch ended. */
export type WatchEnd =
  | { outcome: 'completed' | 'failed'; status: AnySessionStatus }
  /** The session's 30 minutes ran out before the human finished. */
  | { outcome: 'expired'; error: string }
  /** The session can no longer be read (e.g. its token was refused): the error and its HTTP status. */
  | { outcome: 'refused'; error: string; status: number }
  /** cancel() or stopAll() ended it. */
  | { outcome: 'stopped' };

export interface Watch {
  readonly id: string;
  /**
   * Follows the session of `token`, last seen at `stage`, until it ends or the watch is cancelled; `onChange`
   * receives each new stage short of the final ones. The slot is freed when it returns.
   */
  follow(token: string, stage: SessionStage, onChange: (status: AnySessionStatus) => unknown): Promise<WatchEnd>;
  /** Frees the slot and ends a follow in progress (which then returns `stopped`). */
  cancel(): void;
}

export interface SessionWatcherOptions {
  sessions: Sessions;
  /** Subscribes to the registry's activity on a network, as this instance's log follower sees it; returns the unsubscribe. */
  registryActivity: (network: NetworkName, listener: () => void) => () => void;
  /** Subscribes to the changes of one session's record, made by any instance; returns the unsubscribe. */
  sessionActivity: (sessionId: string, listener: () => void) => () => void;
  /** Longest time between two status reads; default 1 s (activity triggers a read at once). */
  pollIntervalMs?: number;
  /** Most sessions watched at once; more are refused with a 503 until some end. Default 500. */
  maxWatches?: number;
  /** Instances sharing a store: which one follows each watch (watch-leases.ts). Absent: this process is alone. */
  leases?: WatchLeases;
}

/** Waits `ms`, or less when `signal` aborts or the function handed to `setWake` is called. */
const sleep = (ms: number, signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      setWake(undefined);
      resolve();
    };
    const timer = setTimeout(done, ms);
    setWake(done);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The pause between two status reads: until `activity` reports something, at most `ms`. Subscribed for the
 * watch's whole life, so activity during a read is not missed: the next read follows at once.
 */
function activityPauses(activity: (listener: () => void) => () => void, ms: number, signal: AbortSignal) {
  let woken = false;
  let wake: (() => void) | undefined;
  const close = activity(() => {
    woken = true;
    wake?.();
  });
  const pause = async () => {
    if (!woken)
      await sleep(ms, signal, (w) => {
        wake = w;
      });
    woken = false;
  };
  return { pause, close };
}

export class SessionWatcher {
  readonly #options: Required<Omit<SessionWatcherOptions, 'leases'>>;
  readonly #leases: WatchLeases | undefined;
  readonly #running = new Map<string, AbortController>();

  constructor({ leases, ...options }: SessionWatcherOptions) {
    this.#options = { pollIntervalMs: 1_000, maxWatches: 500, ...options };
    this.#leases = leases;
  }

  /**
   * Takes the watch `id` over for this instance if nobody follows it: false when this instance already does, or
   * another live instance holds its lease. For watches resumed from the store (open A2A tasks).
   */
  async claim(id: string): Promise<boolean> {
    if (this.#running.has(id)) return false;
    return this.#leases ? this.#leases.claim(id) : true;
  }

  /** How many sessions are watched now. */
  get size(): number {
    return this.#running.size;
  }

  /**
   * Takes a slot for one more watched session, synchronously: 503 when all are taken, unless `evenWhenFull`
   * (sessions that were already watched before a restart keep their watch).
   */
  reserve(id: string, options: { evenWhenFull?: boolean } = {}): Watch {
    const { maxWatches } = this.#options;
    if (this.#running.size >= maxWatches && !options.evenWhenFull) {
      throw new ServiceError(503, `The service is following ${maxWatches} open sessions, its most; try again in a few minutes`);
    }
    this.#running.get(id)?.abort();
    const controller = new AbortController();
    this.#running.set(id, controller);
    this.#leases?.hold(id);
    const release = () => {
      if (this.#running.get(id) !== controller) return;
      this.#running.delete(id);
      this.#leases?.letGo(id);
    };
    return {
      id,
      follow: (token, stage, onChange) => this.#follow(token, stage, onChange, controller.signal).finally(release),
      cancel: () => {
        controller.abort();
        release();
      },
    };
  }

  /** Ends the watch `id`, if there is one. */
  cancel(id: string): void {
    this.#running.get(id)?.abort();
    if (this.#running.delete(id)) this.#leases?.letGo(id);
  }

  /** Ends every watch (service shutdown), letting their leases go for another instance to take them at once. */
  stopAll(): void {
    for (const [id, controller] of this.#running) {
      controller.abort();
      this.#leases?.letGo(id);
    }
    this.#running.clear();
  }

  async #follow(token: string, stage: SessionStage, onChange: (status: AnySessionStatus) => unknown, signal: AbortSignal): Promise<WatchEnd> {
    let kind: SessionType;
    let network: NetworkName;
    let sessionId: string;
    try {
      kind = await this.#options.sessions.kindOf(token);
      ({ id: sessionId, network } = await this.#options.sessions.kinds[kind].peek(token));
    } catch (error) {
      return ended(error) ?? { outcome: 'refused', error: 'The session cannot be read', status: 500 };
    }
    // woken by the registry's logs on the session's network and by changes of the session's record on any instance
    const activity = (listener: () => void) => {
      const fromChain = this.#options.registryActivity(network, listener);
      const fromRecord = this.#options.sessionActivity(sessionId, listener);
      return () => {
        fromChain();
        fromRecord();
      };
    };
    const pauses = activityPauses(activity, this.#options.pollIntervalMs, signal);
    try {
      let current = token;
      let last = stage;
      while (!signal.aborted) {
        await pauses.pause();
        if (signal.aborted) break;
        let status: AnySessionStatus;
        try {
          status = await this.#options.sessions.kinds[kind].status(current);
        } catch (error) {
          const end = ended(error);
          if (end) return end;
          continue; // a transient chain failure: read again at the next interval
        }
        current = status.sessionToken;
        if (status.stage === 'completed' || status.stage === 'failed') return { outcome: status.stage, status };
        if (status.stage !== last && !FINAL_STAGES.has(status.stage)) {
          last = status.stage;
          await onChange(status);
        }
      }
      return { outcome: 'stopped' };
    } finally {
      pauses.close();
    }
  }
}

/** A refusal ends the watch (expiry, a token no longer valid); anything else (a chain or the store not answering) is worth another read. */
function ended(error: unknown): WatchEnd | undefined {
  if (!(error instanceof ServiceError) || error instanceof ChainUnreachableError || error instanceof StoreUnavailableError) return undefined;
  if (error.status === 410) return { outcome: 'expired', error: error.message };
  return { outcome: 'refused', error: error.message, status: error.status };
}
