// Deregistration, refresh and identify sessions: open one (rate-limited like registration), then its
// status, QR and the identity app's callback, each under /api/agent/<kind>.
import { type RequestHandler, Router } from 'express';
import type { z } from 'zod';
import type { Services } from '../../services/index.js';
import type { CallbackReport, SessionQr } from '../../services/session-flow.js';
import type { ResponseDoc, RouteDoc } from '../openapi/route-doc.js';
import type { callbackAckSchema } from '../schemas/registration.js';
import {
  deregisterRequestSchema,
  deregistrationSessionSchema,
  deregistrationStatusSchema,
  identifyRequestSchema,
  identifySessionSchema,
  identifyStatusSchema,
  refreshRequestSchema,
  refreshSessionSchema,
  refreshStatusSchema,
} from '../schemas/sessions.js';
import { sessionTokenOf } from '../session-token.js';
import { parseWith } from '../validation.js';
import { chainFailure, followUpDocs, followUpRoutes, tokenErrors } from './session-follow-up.js';

const TAGS = ['Other sessions'];
const badRequest: ResponseDoc = { description: 'Invalid parameters or body; the message says what to fix' };
const tooMany: ResponseDoc = { description: 'Too many session creations from this address (10 per minute)' };

/** What a flow's routes need from its service. */
interface FlowService<Start, Session, Status> {
  start(request: Start): Promise<Session>;
  status(token: string): Promise<Status>;
  qr(token: string): Promise<SessionQr>;
  callback(callbackToken: string, report: CallbackReport): Promise<{ received: true; stage: z.output<typeof callbackAckSchema>['stage'] }>;
}

interface FlowSpec<RS extends z.ZodType, SS extends z.ZodType, TS extends z.ZodType> {
  /** e.g. 'deregister': served under /api/agent/deregister. */
  kind: string;
  what: string;
  requestSchema: RS;
  sessionSchema: SS;
  statusSchema: TS;
  startErrors: Record<number, ResponseDoc>;
  statusDescription: string;
}

function flowDocs<RS extends z.ZodType, SS extends z.ZodType, TS extends z.ZodType>(spec: FlowSpec<RS, SS, TS>): RouteDoc[] {
  const base = `/api/agent/${spec.kind}`;
  return [
    {
      method: 'post',
      path: base,
      summary: `Open a ${spec.what} session`,
      description: 'Builds the proof request and returns the session token, the deep link and QR code for the identity app.',
      tags: TAGS,
      body: spec.requestSchema,
      responses: {
        200: { description: 'The session', schema: spec.sessionSchema },
        400: badRequest,
        ...spec.startErrors,
        429: tooMany,
        500: chainFailure,
      },
    },
    {
      method: 'get',
      path: `${base}/status`,
      summary: `Stage of the ${spec.what} session`,
      description: `${spec.statusDescription} Returns a refreshed token.`,
      tags: TAGS,
      sessionToken: 'query-or-bearer',
      responses: { 200: { description: 'The session', schema: spec.statusSchema }, ...tokenErrors, 500: chainFailure },
    },
    ...followUpDocs(base, TAGS),
  ];
}

function flowRoutes<RS extends z.ZodType, SS extends z.ZodType, TS extends z.ZodType>(
  router: Router,
  spec: FlowSpec<RS, SS, TS>,
  service: FlowService<z.output<RS>, z.output<SS>, z.output<TS>>,
  sessionLimit: RequestHandler,
): void {
  const base = `/api/agent/${spec.kind}`;
  followUpRoutes(router, base, service);
  router.post(base, sessionLimit, async (req, res) => {
    res.json(await service.start(parseWith(spec.requestSchema, req.body)));
  });
  router.get(`${base}/status`, async (req, res) => {
    res.json(await service.status(sessionTokenOf(req)));
  });
}

const deregistration = {
  kind: 'deregister',
  what: 'deregistration',
  requestSchema: deregisterRequestSchema,
  sessionSchema: deregistrationSessionSchema,
  statusSchema: deregistrationStatusSchema,
  startErrors: { 404: { description: 'No agent with this address on this network' } },
  statusDescription:
    'Follows the session to the chain: completed once the agent NFT is burned; failed with the reason the identity app or chain gave.',
};

const refresh = {
  kind: 'refresh',
  what: 'proof refresh',
  requestSchema: refreshRequestSchema,
  sessionSchema: refreshSessionSchema,
  statusSchema: refreshStatusSchema,
  startErrors: {
    400: {
      description: "Invalid input, an agent that cannot be refreshed, or disclosures that do not select the agent's config (the message names it)",
    },
    404: { description: 'No agent with this id on this network' },
  },
  statusDescription:
    'Follows the session to the chain: completed once the proof expiry moved (or the reported transaction refreshed this agent), with the new expiry, freshness, strength and credentials.',
};

const identify = {
  kind: 'identify',
  what: 'identify',
  requestSchema: identifyRequestSchema,
  sessionSchema: identifySessionSchema,
  statusSchema: identifyStatusSchema,
  startErrors: {},
  statusDescription:
    "Completed once the identity app reported this session's own proof transaction: the human's nullifier and agents on this network.",
};

export const sessionDocs: RouteDoc[] = [...flowDocs(deregistration), ...flowDocs(refresh), ...flowDocs(identify)];

/** Deregistration, refresh and identify sessions. */
export function sessionRoutes(services: Services, sessionLimit: RequestHandler): Router {
  const router = Router();
  flowRoutes(router, deregistration, services.deregistration, sessionLimit);
  flowRoutes(router, refresh, services.refresh, sessionLimit);
  flowRoutes(router, identify, services.identify, sessionLimit);
  return router;
}
