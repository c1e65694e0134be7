// GET /register/{sessionRef}: the page a human opens on a laptop to scan a session's QR code with the phone and
// watch the session finish, and GET /register/{sessionRef}/events, its live updates (server-sent events from the
// session watcher). sessionRef is the watch token of the scan link; the session token is refused.
//
// The rule that every answer is JSON holds for programs: the page's state and every refusal are JSON unless the
// client asks for HTML (a browser does), which then gets the page, or a page saying the same refusal with the same
// status. The page sets its own headers over the shared ones: a Content-Security-Policy allowing only its own
// inline style and script (by hash), no-store, and no Referer, since its address holds the capability.
import type { Request, Response } from 'express';
import { SCAN_PAGE_PATH } from '../../core/endpoints.js';
import { serviceErrorOf } from '../../core/errors.js';
import type { Services } from '../../services/index.js';
import { ScanPages, type WatchedSession } from '../../sessions/scan-page.js';
import type { Route } from '../route.js';
import { contentSecurityPolicy } from '../scan-page/assets.js';
import { errorPageHtml, qrImage, scanPageHtml } from '../scan-page/page.js';
import { agentNowState, endState, openedState, stateOf } from '../scan-page/state.js';
import { errorSchema } from '../schemas/registration.js';
import { type ScanPageState, scanPageParamsSchema, scanPageStateSchema } from '../schemas/scan-page.js';
import { admitStream } from '../stream-admission.js';
import { documented, parseWith } from '../validation.js';
import { chainFailure } from './session-follow-up.js';

const TAGS = ['Registration'];
const PAGE = `${SCAN_PAGE_PATH}/{sessionRef}`;
/** An SSE comment this often keeps proxies with an idle timeout (often 60 s) from cutting a quiet stream. */
const KEEPALIVE_MS = 15_000;

const refusals = (html: boolean) => ({
  401: {
    description: 'Not a watch token of this service: altered, a callback token, or a session token (which is never taken in a page address)',
    schema: errorSchema,
    ...(html ? { contentType: 'text/html' } : {}),
  },
  410: { description: 'The session expired (30 minutes)', schema: errorSchema, ...(html ? { contentType: 'text/html' } : {}) },
  500: { ...chainFailure, schema: errorSchema, ...(html ? { contentType: 'text/html' } : {}) },
});

/** Headers of every answer of these routes: the address holds a capability, so no Referer leaves with it and nothing is stored. */
function privateAnswer(res: Response): void {
  res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
}

/** The request's path as its template, for the request log: the watch token in the path is not written there. */
const REF_IN_PATH = new RegExp(`^${SCAN_PAGE_PATH}/[^/?]+`);
function hideRef(req: Request): void {
  req.originalUrl = req.originalUrl.replace(REF_IN_PATH, `${SCAN_PAGE_PATH}/{sessionRef}`);
}

const wantsHtml = (req: Request): boolean => req.accepts(['application/json', 'text/html']) === 'text/html';

function startEvents(res: Response): void {
  res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
  res.write('retry: 3000\n\n');
}

const sendState = (res: Response, state: ScanPageState): void => {
  res.write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
};

export function scanPageRoutes(services: Services): Route[] {
  const pages = new ScanPages(services.sessions, services.watcher);
  /** The session's state as opened, a completed one told as its agent stands now (as it was, if the chain is out of reach). */
  const openedNow = async (session: WatchedSession): Promise<ScanPageState> => {
    const state = openedState(session);
    if (state.stage !== 'completed' || state.agentId === undefined) return state;
    const now = await services.queries.agentById(session.network, BigInt(state.agentId)).then(
      (view) => ({ view }),
      () => undefined,
    );
    return now ? agentNowState(state, now.view) : state;
  };
  return [
    {
      method: 'get',
      path: PAGE,
      summary: 'Scan page of a session: its QR code, what it asks, and its progress live',
      description:
        'For the human, on a laptop: the QR code to scan with the identity app (and the deep link as a button, for a page opened on the phone), ' +
        'the network, mode and requested disclosures in plain words, and the stage live until the session ends (the agent id and its info ' +
        'endpoint once registered). Any kind of session; the address is scanPageUrl of the session answer. A browser (Accept: text/html) gets ' +
        'the HTML page, and refusals as pages with the same status; other clients get the page state and refusals as JSON.',
      tags: TAGS,
      params: scanPageParamsSchema,
      responses: {
        200: { description: 'The page (text/html), or its state (JSON)', schema: scanPageStateSchema, contentType: 'text/html' },
        ...refusals(true),
      },
      handler: async (req, res) => {
        hideRef(req);
        privateAnswer(res);
        const html = wantsHtml(req);
        res.vary('Accept');
        const { sessionRef } = parseWith(scanPageParamsSchema, req.params, 'path');
        try {
          const session = await pages.open(sessionRef);
          const state = await openedNow(session);
          if (!html) {
            res.json(documented(scanPageStateSchema, state));
            return;
          }
          const page = scanPageHtml(session, state, session.qr ? await qrImage(session.qr.deepLink) : undefined);
          res.set('Content-Security-Policy', contentSecurityPolicy({ script: page.live }));
          res.type('html').send(page.html);
        } catch (error) {
          const refusal = serviceErrorOf(error);
          if (!html || !refusal) throw error;
          res.set('Content-Security-Policy', contentSecurityPolicy({ script: false }));
          res.status(refusal.status).type('html').send(errorPageHtml(refusal.status, refusal.message));
        }
      },
    },
    {
      method: 'get',
      path: `${PAGE}/events`,
      summary: 'Live updates of the scan page (server-sent events)',
      description:
        'An event "state" (a ScanPageState as JSON) at once, then at each new stage, until a final one (completed, failed, expired) ends the ' +
        'stream; comments keep it open meanwhile. Driven by the session watcher: a report to any instance or the registry log wakes it, and ' +
        'the pages of one session share one watch. A stream lives at most STREAM_MAX_LIFETIME_MS (10 min; the page reconnects), and at most ' +
        'MAX_STREAMS_PER_CLIENT (8) are open per client and MAX_STREAMS_PER_SUBJECT (4) per session: 429 with Retry-After beyond.',
      tags: TAGS,
      params: scanPageParamsSchema,
      responses: {
        200: { description: 'The event stream', contentType: 'text/event-stream' },
        ...refusals(false),
        429: {
          description: 'Too many open streams for this client or session, or in all: try again when one ends (Retry-After)',
          schema: errorSchema,
        },
        503: { description: 'The service follows as many sessions as it may; try again in a few minutes' },
      },
      handler: async (req, res) => {
        hideRef(req);
        privateAnswer(res);
        const { sessionRef } = parseWith(scanPageParamsSchema, req.params, 'path');
        // refusals are JSON answers before the stream starts: the session (401, 410), the stream limits (429), the
        // session watcher's slots (503; the pages of one session share one)
        const session = await pages.open(sessionRef);
        if (res.destroyed || req.socket.destroyed) return; // the client left meanwhile
        const opened = await openedNow(session);
        if (opened.final) {
          startEvents(res);
          sendState(res, opened);
          res.end();
          return;
        }
        admitStream(services.streams, req, res, `session:${session.id}`);
        let last = opened;
        const page = pages.follow(session, sessionRef, (status) => {
          last = stateOf(session.kind, session.network, status);
          sendState(res, last);
        });
        res.once('close', page.leave);
        startEvents(res);
        sendState(res, last);
        const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
        try {
          const end = await page.end;
          // a stopped watch (the service shutting down, a stream at its longest life) sends nothing: the page
          // reconnects, to another instance too
          const final = endState(last, end);
          if (final) sendState(res, final);
        } finally {
          clearInterval(keepAlive);
          res.off('close', page.leave);
          page.leave();
          res.end();
        }
      },
    },
  ];
}
