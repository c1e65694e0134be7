// The scan page's use case: a human opens the page of a session's watch token on a laptop, scans the QR code with
// the phone and watches the session finish. Any kind of session has one (the token names its kind); the page reads
// the session as the kind's status endpoint does, and follows it with the session watcher, the mechanism the A2A
// tasks use, so whatever wakes a task (the registry's logs, a report to any instance) wakes the page too.
// One watch per session, whatever the number of pages open on it: the watch's updates are fanned out to every page.
// With a watch per page, 500 pages of one session took every slot of the watcher, and other sessions' pages and A2A
// tasks were refused.
import type { RequestedDisclosures } from '../core/disclosures.js';
import { ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import type { SessionType } from '../core/session-types.js';
import type { SessionWatcher, Watch, WatchEnd } from './session-watch.js';
import type { AnySessionStatus, Sessions } from './sessions.js';

/** What the page shows of a session when it is opened. */
export interface WatchedSession {
  /** The session's id: the pages of one session share its watch. */
  id: string;
  kind: SessionType;
  network: NetworkName;
  disclosures: RequestedDisclosures;
  status: AnySessionStatus;
  /** While the session waits for the human: the deep link and its QR code. */
  qr?: { deepLink: string; qrImageBase64: string };
}

/** A page following its session: the session's end, shared by every page of it, and leave() when the page goes. */
export interface PageFollow {
  end: Promise<WatchEnd>;
  leave(): void;
}

interface SharedWatch {
  watch: Watch;
  pages: Set<(status: AnySessionStatus) => void>;
  end: Promise<WatchEnd>;
}

export class ScanPages {
  readonly #shared = new Map<string, SharedWatch>();

  constructor(
    private readonly sessions: Sessions,
    private readonly watcher: SessionWatcher,
  ) {}

  /**
   * The session of a watch token, its status moved forward from the chain (401 for any other token, the session
   * token included; 410 once expired).
   */
  async open(watchToken: string): Promise<WatchedSession> {
    const kind = await this.sessions.kindOf(watchToken);
    const service = this.sessions.kinds[kind];
    const { id, network, disclosures } = await service.watched(watchToken);
    const status = await service.status(watchToken);
    return { id, kind, network, disclosures, status, ...(status.stage === 'qr-ready' ? await this.#qr(kind, watchToken) : {}) };
  }

  /**
   * Follows `session` (opened with `watchToken`) for one page: `onChange` hears each new stage until the session
   * ends. The first page of a session takes a slot of the session watcher (503 when the service follows all it
   * may); the others join its watch, and the last to leave ends it.
   */
  follow(session: WatchedSession, watchToken: string, onChange: (status: AnySessionStatus) => void): PageFollow {
    let shared = this.#shared.get(session.id);
    if (!shared) {
      const watch = this.watcher.reserve(`scan-page:${session.id}`);
      const pages = new Set<(status: AnySessionStatus) => void>();
      const end = watch.follow(watchToken, session.status.stage, (status) => {
        for (const page of pages) page(status);
      });
      const created: SharedWatch = { watch, pages, end };
      void end.finally(() => {
        if (this.#shared.get(session.id) === created) this.#shared.delete(session.id);
      });
      this.#shared.set(session.id, created);
      shared = created;
    }
    const joined = shared;
    joined.pages.add(onChange);
    return {
      end: joined.end,
      leave: () => {
        joined.pages.delete(onChange);
        if (joined.pages.size > 0) return;
        // gone at once, so a page opened next starts a watch of its own rather than joining one that is ending
        if (this.#shared.get(session.id) === joined) this.#shared.delete(session.id);
        joined.watch.cancel();
      },
    };
  }

  /** Sessions followed for pages now (each holds one slot of the session watcher). */
  get followed(): number {
    return this.#shared.size;
  }

  async #qr(kind: SessionType, watchToken: string): Promise<Pick<WatchedSession, 'qr'>> {
    try {
      const { deepLink, qrImageBase64 } = await this.sessions.kinds[kind].qr(watchToken);
      return { qr: { deepLink, qrImageBase64 } };
    } catch (error) {
      // the human scanned between the two reads: the page shows the new stage without a QR code
      if (error instanceof ServiceError && error.status === 409) return {};
      throw error;
    }
  }
}
