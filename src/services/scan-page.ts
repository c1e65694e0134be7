// The scan page's use case: a human opens the page of a session's watch token on a laptop, scans the QR code with
// the phone and watches the session finish. Any kind of session has one (the token names its kind); the page reads
// the session as the kind's status endpoint does, and follows it with the session watcher, the mechanism the A2A
// tasks use, so whatever wakes a task (the registry's logs, a report to any instance) wakes the page too.
import { randomUUID } from 'node:crypto';
import type { RequestedDisclosures } from '../core/disclosures.js';
import { ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import type { SessionType } from '../core/session-types.js';
import type { SessionWatcher, Watch } from './session-watch.js';
import type { AnySessionStatus, Sessions } from './sessions.js';

/** What the page shows of a session when it is opened. */
export interface WatchedSession {
  kind: SessionType;
  network: NetworkName;
  disclosures: RequestedDisclosures;
  status: AnySessionStatus;
  /** While the session waits for the human: the deep link and its QR code. */
  qr?: { deepLink: string; qrImageBase64: string };
}

export class ScanPages {
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
    const { network, disclosures } = await service.watched(watchToken);
    const status = await service.status(watchToken);
    return { kind, network, disclosures, status, ...(status.stage === 'qr-ready' ? await this.#qr(kind, watchToken) : {}) };
  }

  /** A slot of the session watcher for one open page (503 when the service follows all it may). */
  watch(): Watch {
    return this.watcher.reserve(`scan-page:${randomUUID()}`);
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
