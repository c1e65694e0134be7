// What every kind of session shares: open a session (record + session token), build the deep link whose
// deeplinkCallback carries a callback-scoped token, reopen it from a token, record the identity app's report
// idempotently, and move it to completed or failed. Registration, deregistration, refresh and identify each add
// their own chain checks (ChainSyncedSessions.syncWithChain).
import QRCode from 'qrcode';
import type { Hex } from 'viem';
import type { RegistryTransaction } from '../chain/actions/registry-transactions.js';
import type { ChainGateway, NetworkGateway } from '../chain/gateway.js';
import { buildSelfApp, deepLinkFor } from '../core/deep-link.js';
import type { RequestedDisclosures } from '../core/disclosures.js';
import { SCAN_PAGE_PATH, SESSION_BASE_PATHS } from '../core/endpoints.js';
import { badRequest, ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import type { Clock } from '../store/key-value-store.js';
import { checkReportedTransaction, neverConfirmed, REPORTED_TX_TIMEOUT_MS } from './reported-transaction.js';
import type { RecordOf, SessionStage, SessionType } from './session-record.js';
import type { SessionRepository } from './session-repository.js';
import { READING_SCOPES, type SessionClaims, type SessionSecrets, type SessionTokens, type TokenScope } from './session-token.js';
import { type SessionView, sessionView } from './session-view.js';

export interface CallbackReport {
  status: 'success' | 'error';
  txHash?: Hex;
  error?: string;
}

export interface FlowDeps {
  chains: ChainGateway;
  sessions: SessionRepository;
  tokens: SessionTokens;
  clock: Clock;
  /** Base URL of this service, for the callback and scan URLs. */
  publicUrl: string;
  deepLinkScheme: string;
  appName: string;
  /** How long a reported transaction may stay unknown to the chain before the session fails; default per network (reported-transaction.ts). */
  reportedTxTimeoutMs?: number;
}

export interface SessionQr extends SessionView {
  deepLink: string;
  qrData: string;
  qrImageBase64: string;
}

export interface OpenedSession extends SessionQr {
  scanUrl: string;
  /** The page that shows the QR code and follows the session live (same watch token as scanUrl). */
  scanPageUrl: string;
}

/** The fields every session status answer carries beyond the view: the network, the transaction, the failure. */
export interface StatusBase extends SessionView {
  network: NetworkName;
  txHash?: Hex;
  error?: string;
}

export const qrPng = async (text: string): Promise<string> =>
  (await QRCode.toBuffer(text, { type: 'png', width: 400, margin: 2, errorCorrectionLevel: 'M' })).toString('base64');

/** Sessions whose deep link and QR image are kept (about 15 kB each). */
const QR_CACHE_SIZE = 1_000;

/** One kind of session, served under its base path (core/endpoints.ts). */
export class SessionFlow<T extends SessionType> {
  readonly basePath: string;
  readonly #qrs = new Map<string, Promise<{ deepLink: string; qrImageBase64: string }>>();

  constructor(
    readonly deps: FlowDeps,
    readonly type: T,
  ) {
    this.basePath = SESSION_BASE_PATHS[type];
  }

  /** Stores the record and answers with the session token, deep link and QR code. */
  async create(record: RecordOf<T>, secrets?: SessionSecrets): Promise<{ claims: SessionClaims; session: OpenedSession }> {
    await this.deps.sessions.create(record);
    const claims: SessionClaims = {
      sessionId: record.id,
      type: this.type,
      scope: 'session',
      expiresAt: record.expiresAt,
      ...(secrets ? { secrets } : {}),
    };
    const { deepLink, qrImageBase64 } = await this.#linkAndQr(record);
    const view = await this.view(claims, record);
    // The scan link is shown, shared and kept in browser histories: it carries a watch token (status and QR
    // only), never the session token that exports the key.
    const watchToken = await this.deps.tokens.issue({ sessionId: record.id, type: this.type, scope: 'watch', expiresAt: record.expiresAt });
    return {
      claims,
      session: {
        ...view,
        deepLink,
        qrData: deepLink,
        qrImageBase64,
        scanUrl: `${this.deps.publicUrl}${this.basePath}/qr?format=png&token=${encodeURIComponent(watchToken)}`,
        scanPageUrl: `${this.deps.publicUrl}${SCAN_PAGE_PATH}/${encodeURIComponent(watchToken)}`,
      },
    };
  }

  /**
   * The claims and record of a token of this flow (400 other type, 401 altered or a scope not in `scopes`, 410
   * expired). By default a session or watch token: what reading the session needs.
   */
  async open(token: string, scopes: readonly TokenScope[] = READING_SCOPES): Promise<{ claims: SessionClaims; record: RecordOf<T> }> {
    const claims = await this.deps.tokens.open(token, { type: this.type, scope: scopes });
    const record = await this.deps.sessions.get(claims.sessionId, this.type);
    if (!record) throw new ServiceError(401, 'Invalid session token');
    return { claims, record };
  }

  view(claims: SessionClaims, record: RecordOf<T>): Promise<SessionView> {
    return sessionView(this.deps.tokens, claims, record, this.deps.clock);
  }

  /** The view plus what every kind's status shows: network, transaction, failure reason. */
  async statusBase(claims: SessionClaims, record: RecordOf<T>): Promise<StatusBase> {
    return {
      ...(await this.view(claims, record)),
      network: record.network,
      ...(record.txHash ? { txHash: record.txHash } : {}),
      ...(record.stage === 'failed' && record.failureReason ? { error: record.failureReason } : {}),
    };
  }

  /** The deep link and QR again, while the session still waits for the human (409 otherwise). */
  async qr(token: string): Promise<SessionQr> {
    const { claims, record } = await this.open(token);
    if (record.stage !== 'qr-ready') {
      throw new ServiceError(409, `The QR code is only available while the session waits for the human; the session is ${record.stage}`);
    }
    const { deepLink, qrImageBase64 } = await this.#linkAndQr(record);
    const view = await this.view(claims, record);
    return { ...view, deepLink, qrData: deepLink, qrImageBase64 };
  }

  /**
   * A session's deep link and its QR image, made once per session and kept (the most recent QR_CACHE_SIZE): the link's
   * callback token lives as long as the session, so one link serves every request for it. Rendering the PNG costs
   * about 10 ms of CPU; eight requests at once for it slowed every other request of the service tenfold.
   */
  #linkAndQr(record: RecordOf<T>): Promise<{ deepLink: string; qrImageBase64: string }> {
    const key = `${record.id}:${record.expiresAt}`;
    let made = this.#qrs.get(key);
    if (made) {
      this.#qrs.delete(key); // re-inserted last: the map's order is recency
    } else {
      made = this.deepLink(record).then(async (deepLink) => ({ deepLink, qrImageBase64: await qrPng(deepLink) }));
      // a failure (the chain, while reading the registry) is not kept
      made.catch(() => this.#qrs.delete(key));
      for (const oldest of this.#qrs.keys()) {
        if (this.#qrs.size < QR_CACHE_SIZE) break;
        this.#qrs.delete(oldest);
      }
    }
    this.#qrs.set(key, made);
    return made;
  }

  async deepLink(record: RecordOf<T>, gateway: NetworkGateway = this.deps.chains.get(record.network)): Promise<string> {
    const callbackToken = await this.deps.tokens.issue({ sessionId: record.id, type: this.type, scope: 'callback', expiresAt: record.expiresAt });
    const app = buildSelfApp({
      sessionId: record.id,
      appName: this.deps.appName,
      network: record.network,
      registry: gateway.contracts.registry,
      userId: record.userId,
      userDefinedData: record.userDefinedData,
      disclosures: record.disclosures,
      callbackUrl: `${this.deps.publicUrl}${this.basePath}/callback?token=${encodeURIComponent(callbackToken)}`,
    });
    return deepLinkFor(app, this.deps.deepLinkScheme);
  }

  /**
   * Records the identity app's report: success -> proof-received with its txHash, error -> failed with its
   * reason. Idempotent; a completed session stays completed. The caller then follows the chain. A success report
   * while the session already waits on one keeps the time the wait began, so reporting again (the same hash or
   * another) cannot stretch the wait for the chain past its deadline.
   */
  async recordCallback(callbackToken: string, report: CallbackReport): Promise<RecordOf<T>> {
    const claims = await this.deps.tokens.open(callbackToken, { type: this.type, scope: 'callback' });
    if (report.status === 'success' && !report.txHash)
      throw badRequest('A success callback must carry the txHash of the verifySelfProof transaction');
    if (report.status === 'error' && !report.error) throw badRequest('An error callback must say what went wrong in "error"');
    const receivedAt = this.deps.clock();
    return this.deps.sessions.update(claims.sessionId, this.type, (record) => {
      if (record.stage === 'completed') return record;
      const waitingSince =
        record.stage === 'proof-received' && record.callback?.outcome === 'success' && report.status === 'success'
          ? record.callback.receivedAt
          : receivedAt;
      const callback = {
        receivedAt: waitingSince,
        outcome: report.status,
        ...(report.txHash ? { txHash: report.txHash } : {}),
        ...(report.error ? { error: report.error } : {}),
      };
      if (report.status === 'error') return { ...record, callback, stage: 'failed', failureReason: report.error as string };
      const { failureReason: _dropped, ...rest } = record;
      return { ...rest, callback, stage: 'proof-received', txHash: report.txHash as Hex } as RecordOf<T>;
    });
  }

  /**
   * Moves the session to completed with `fields` (once: a completed session keeps what it completed with). Without
   * a txHash in `fields`, the reported one is kept only if the chain confirms it as this session's proof.
   */
  async complete(record: RecordOf<T>, fields: Partial<RecordOf<T>> = {}): Promise<RecordOf<T>> {
    // Nobody hears "completed" before the block that did it would survive a hard kill of the service (a local
    // chain's state file holds it), so a restart never takes back what a session reported.
    await this.deps.chains.get(record.network).makeDurable();
    const reported = record.callback?.txHash;
    const confirmed = fields.txHash === undefined && reported ? (await this.#check(record, reported)).verdict === 'confirmed' : false;
    const completedAt = this.deps.clock();
    // another instance may complete the same session at the same moment: the first write stands (advance)
    return this.deps.sessions.advance(record.id, this.type, (current) => {
      const { failureReason: _dropped, txHash: _hint, ...rest } = current;
      const txHash = confirmed && current.callback?.txHash === reported ? reported : undefined;
      return { ...rest, ...(txHash ? { txHash } : {}), ...fields, stage: 'completed', completedAt } as RecordOf<T>;
    });
  }

  /** Moves a session still waiting on the chain to failed with `reason`. */
  fail(record: RecordOf<T>, reason: string): Promise<RecordOf<T>> {
    return this.deps.sessions.advance(record.id, this.type, (current) =>
      current.stage === 'proof-received' ? { ...current, stage: 'failed', failureReason: reason } : current,
    );
  }

  /**
   * Checks the transaction the identity app reported, for a session waiting on it (reported-transaction.ts):
   * this session's proof, mined and successful -> `confirmed`, for the kind to read what it did; reverted -> failed
   * with `revertReason`; another transaction -> failed saying why; unknown to the chain past the deadline -> failed.
   * Otherwise the session keeps waiting. A newer report than the one checked is never failed by this check.
   */
  async followReport(record: RecordOf<T>, revertReason: string): Promise<{ record: RecordOf<T>; confirmed?: RegistryTransaction }> {
    const hash = record.callback?.outcome === 'success' ? record.callback.txHash : undefined;
    if (record.stage !== 'proof-received' || !record.callback || !hash) return { record };
    const check = await this.#check(record, hash);
    if (check.verdict === 'confirmed') return { record, confirmed: check.transaction };
    if (check.verdict === 'reverted') return { record: await this.#failReport(record, revertReason) };
    if (check.verdict === 'foreign') return { record: await this.#failReport(record, check.reason) };
    const waited = this.deps.clock() - record.callback.receivedAt;
    return { record: waited > this.#reportedTxTimeout(record) ? await this.#failReport(record, neverConfirmed(hash, waited)) : record };
  }

  #check(record: RecordOf<T>, hash: Hex) {
    return checkReportedTransaction(this.deps.chains.get(record.network), hash, record);
  }

  #reportedTxTimeout(record: RecordOf<T>): number {
    const embedded = this.deps.chains.get(record.network).embedded;
    return this.deps.reportedTxTimeoutMs ?? REPORTED_TX_TIMEOUT_MS[embedded ? 'embedded' : 'external'];
  }

  /** Fails a session still waiting on the very report that was checked (a newer report gets its own check). */
  #failReport(record: RecordOf<T>, reason: string): Promise<RecordOf<T>> {
    const checked = record.callback;
    const same = (current: RecordOf<T>) => current.callback?.receivedAt === checked?.receivedAt && current.callback?.txHash === checked?.txHash;
    return this.deps.sessions.advance(record.id, this.type, (current) =>
      current.stage === 'proof-received' && same(current) ? { ...current, stage: 'failed', failureReason: reason } : current,
    );
  }
}

/**
 * What every kind of session does the same way once its flow is set up: its status, the QR again, the identity
 * app's report, then a look at the chain. Subclasses say how the chain shows their outcome.
 */
export abstract class ChainSyncedSessions<T extends SessionType, Status extends StatusBase = StatusBase> {
  protected constructor(protected readonly flow: SessionFlow<T>) {}

  get type(): T {
    return this.flow.type;
  }

  /** Moves a waiting session forward from what the chain says. */
  protected abstract syncWithChain(record: RecordOf<T>): Promise<RecordOf<T>>;

  /** The session's stage, moved forward from the chain, with a refreshed token. */
  abstract status(token: string): Promise<Status>;

  /** The id, network and stage of a session, read from its record without a look at the chain. */
  async peek(token: string): Promise<{ id: string; network: NetworkName; stage: SessionStage }> {
    const { record } = await this.flow.open(token);
    return { id: record.id, network: record.network, stage: record.stage };
  }

  /** The deep link and QR again, while the session still waits for the human. */
  qr(token: string): Promise<SessionQr> {
    return this.flow.qr(token);
  }

  /**
   * What a page following the session shows beside its status: its network and what the human is asked to
   * disclose. Only with a watch token: a page address stays in browser histories and reaches other people, so the
   * session token, which exports the key, is refused there (401) even though it could read the session.
   */
  async watched(watchToken: string): Promise<{ id: string; network: NetworkName; disclosures: RequestedDisclosures }> {
    const { claims, record } = await this.flow.open(watchToken);
    if (claims.scope !== 'watch') {
      throw new ServiceError(401, 'This page takes the watch token of the scan link (scanPageUrl), never the session token: keep that one private');
    }
    return { id: record.id, network: record.network, disclosures: record.disclosures };
  }

  /** The identity app's report. Idempotent; a completed session stays completed. */
  async callback(callbackToken: string, report: CallbackReport): Promise<{ received: true; stage: SessionStage }> {
    const updated = await this.flow.recordCallback(callbackToken, report);
    // followers of the session hear of the report from the record's change (SessionRepository publishes it)
    const synced = report.status === 'success' ? await this.syncWithChain(updated) : updated;
    return { received: true, stage: synced.stage };
  }
}
