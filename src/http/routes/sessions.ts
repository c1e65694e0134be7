// Deregistration, refresh and identify sessions: open one (rate-limited like registration), then its
// status, QR and the identity app's callback, each under /api/agent/<kind>.
import type { z } from 'zod';
import { SESSION_BASE_PATHS } from '../../core/endpoints.js';
import type { SessionType } from '../../core/session-types.js';
import type { Services } from '../../services/index.js';
import type { CallbackReport, SessionQr } from '../../sessions/session-flow.js';
import type { ResponseDoc } from '../openapi/route-doc.js';
import { sessionTokenOf } from '../request-token.js';
import type { Route } from '../route.js';
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
import { parseWith } from '../validation.js';
import { badRequest, chainFailure, followUpRoutes, tokenErrors, tooMany } from './session-follow-up.js';

const TAGS = ['Other sessions'];

/** What a flow's routes need from its service. */
interface FlowService<Start, Session, Status> {
  start(request: Start): Promise<Session>;
  status(token: string): Promise<Status>;
  qr(token: string): Promise<SessionQr>;
  callback(callbackToken: string, report: CallbackReport): Promise<{ received: true; stage: z.output<typeof callbackAckSchema>['stage'] }>;
}

interface FlowSpec<RS extends z.ZodType, SS extends z.ZodType, TS extends z.ZodType> {
  /** e.g. 'deregister': served under its base path (core/endpoints.ts). */
  kind: Exclude<SessionType, 'register'>;
  what: string;
  requestSchema: RS;
  sessionSchema: SS;
  statusSchema: TS;
  startErrors: Record<number, ResponseDoc>;
  statusDescription: string;
}

function flowRoutes<RS extends z.ZodType, SS extends z.ZodType, TS extends z.ZodType>(
  spec: FlowSpec<RS, SS, TS>,
  service: FlowService<z.output<RS>, z.output<SS>, z.output<TS>>,
): Route[] {
  const base = SESSION_BASE_PATHS[spec.kind];
  return [
    {
      method: 'post',
      path: base,
      summary: `Open a ${spec.what} session`,
      description: 'Builds the proof request and returns the session token, the deep link and QR code for the identity app.',
      tags: TAGS,
      body: spec.requestSchema,
      cors: 'session',
      limit: 'session-creation',
      responses: {
        200: { description: 'The session', schema: spec.sessionSchema },
        400: badRequest,
        ...spec.startErrors,
        429: tooMany,
        500: chainFailure,
      },
      handler: async (req, res) => {
        res.json(await service.start(parseWith(spec.requestSchema, req.body)));
      },
    },
    {
      method: 'get',
      path: `${base}/status`,
      summary: `Stage of the ${spec.what} session`,
      description: `${spec.statusDescription} Returns a refreshed token.`,
      tags: TAGS,
      sessionToken: 'query-or-bearer',
      cors: 'session',
      responses: { 200: { description: 'The session', schema: spec.statusSchema }, ...tokenErrors, 500: chainFailure },
      handler: async (req, res) => {
        res.json(await service.status(sessionTokenOf(req)));
      },
    },
    ...followUpRoutes(base, TAGS, service),
  ];
}

const deregistration = {
  kind: 'deregister' as const,
  what: 'deregistration',
  requestSchema: deregisterRequestSchema,
  sessionSchema: deregistrationSessionSchema,
  statusSchema: deregistrationStatusSchema,
  startErrors: { 404: { description: 'No agent with this address on this network' } },
  statusDescription:
    'Follows the session to the chain: completed once the agent NFT is burned; failed with the reason the identity app or chain gave.',
};

const refresh = {
  kind: 'refresh' as const,
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
  kind: 'identify' as const,
  what: 'identify',
  requestSchema: identifyRequestSchema,
  sessionSchema: identifySessionSchema,
  statusSchema: identifyStatusSchema,
  startErrors: {},
  statusDescription:
    "Completed once the identity app reported this session's own proof transaction: the human's nullifier and agents on this network.",
};

/** Deregistration, refresh and identify sessions. */
export function sessionRoutes(services: Services): Route[] {
  return [
    ...flowRoutes(deregistration, services.deregistration),
    ...flowRoutes(refresh, services.refresh),
    ...flowRoutes(identify, services.identify),
  ];
}
