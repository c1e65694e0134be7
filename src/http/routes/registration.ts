import { Router, type RequestHandler } from 'express';
import type { z } from 'zod';
import type { RegistrationService } from '../../services/registration.js';
import type { ResponseDoc, RouteDoc } from '../openapi/route-doc.js';
import {
  callbackAckSchema,
  callbackReportSchema,
  challengeRequestSchema,
  challengeSchema,
  ed25519ChallengeRequestSchema,
  exportedKeySchema,
  exportRequestSchema,
  qrQuerySchema,
  registerRequestSchema,
  registrationQrSchema,
  registrationSessionSchema,
  registrationStatusSchema,
} from '../schemas/registration.js';
import { sessionTokenOf } from '../session-token.js';
import { parseWith } from '../validation.js';

/** The answer as its documented schema types it: the compiler checks that the service returns what the docs say. */
const documented = <S extends z.ZodType>(_schema: S, value: z.output<S>): z.output<S> => value;

const TAGS = ['Registration'];
const badRequest: ResponseDoc = { description: 'Invalid parameters or body; the message says what to fix' };
const tooMany: ResponseDoc = { description: 'Too many session creations from this address (10 per minute)' };
const chainFailure: ResponseDoc = { description: 'The chain RPC failed' };
/** The answers every call with a session token can give. */
const tokenErrors: Record<number, ResponseDoc> = {
  400: { description: 'No session token, or a token of another kind of session' },
  401: { description: 'The session token is invalid or altered' },
  410: { description: 'The session expired (30 minutes)' },
};

export const registrationDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/api/agent/register',
    summary: 'Open a registration session',
    description:
      'Generates (or accepts) the agent key, builds the proof request and returns the session token, the deep link and QR code for the identity app.',
    tags: TAGS,
    body: registerRequestSchema,
    responses: {
      200: { description: 'The session', schema: registrationSessionSchema },
      400: badRequest,
      409: { description: 'The agent key is already registered' },
      429: tooMany,
      500: chainFailure,
    },
  },
  {
    method: 'post',
    path: '/api/agent/register/challenge',
    summary: 'Challenge for a wallet-held agent key (privy, smartwallet)',
    description: 'The hash the agent key signs before the session is opened with agentSignature.',
    tags: TAGS,
    body: challengeRequestSchema,
    responses: { 200: { description: 'The challenge', schema: challengeSchema }, 400: badRequest, 429: tooMany, 500: chainFailure },
  },
  {
    method: 'post',
    path: '/api/agent/register/ed25519-challenge',
    summary: 'Challenge for an Ed25519 agent key (ed25519, ed25519-linked)',
    tags: TAGS,
    body: ed25519ChallengeRequestSchema,
    responses: { 200: { description: 'The challenge', schema: challengeSchema }, 400: badRequest, 429: tooMany, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/agent/register/status',
    summary: 'Stage of the registration session',
    description: 'Follows the session to the chain: completed once the registry knows the agent key. Returns a refreshed token.',
    tags: TAGS,
    sessionToken: 'query-or-bearer',
    responses: { 200: { description: 'The session', schema: registrationStatusSchema }, ...tokenErrors, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/agent/register/qr',
    summary: 'QR code and deep link of the session, while it waits for the human',
    tags: TAGS,
    query: qrQuerySchema,
    sessionToken: 'query-or-bearer',
    responses: {
      200: { description: 'JSON, or the PNG image with format=png', schema: registrationQrSchema, contentType: 'image/png' },
      ...tokenErrors,
      409: { description: 'The session no longer waits for the human' },
    },
  },
  {
    method: 'post',
    path: '/api/agent/register/callback',
    summary: "The identity app's report of the proof it submitted",
    description: 'Called by the identity app with the callback token of the deep link. Idempotent.',
    tags: TAGS,
    body: callbackReportSchema,
    sessionToken: 'query-or-bearer',
    responses: { 200: { description: 'Received', schema: callbackAckSchema }, ...tokenErrors, 500: chainFailure },
  },
  ...(['get', 'post'] as const).map(
    (method): RouteDoc => ({
      method,
      path: '/api/agent/register/export',
      summary: "Export the agent's private key once the registration is completed",
      description: 'Only for keys the service generated (linked, wallet-free, ed25519, ed25519-linked).',
      tags: TAGS,
      ...(method === 'post' ? { body: exportRequestSchema, sessionToken: 'query-bearer-or-body' as const } : { sessionToken: 'query-or-bearer' as const }),
      responses: {
        200: { description: 'The key', schema: exportedKeySchema },
        ...tokenErrors,
        409: { description: 'The registration is not completed yet' },
        500: chainFailure,
      },
    }),
  ),
];

/** POST /api/agent/register and the session's status, QR, callback and export. */
export function registrationRoutes(registration: RegistrationService, sessionLimit: RequestHandler): Router {
  const router = Router();
  router.use('/api/agent/register', (_req, res, next) => {
    res.set('Cache-Control', 'no-store'); // every answer carries a session token
    next();
  });

  router.post('/api/agent/register', sessionLimit, async (req, res) => {
    res.json(documented(registrationSessionSchema, await registration.start(parseWith(registerRequestSchema, req.body))));
  });

  router.post('/api/agent/register/challenge', sessionLimit, async (req, res) => {
    res.json(documented(challengeSchema, await registration.challenge(parseWith(challengeRequestSchema, req.body))));
  });

  router.post('/api/agent/register/ed25519-challenge', sessionLimit, async (req, res) => {
    res.json(documented(challengeSchema, await registration.ed25519Challenge(parseWith(ed25519ChallengeRequestSchema, req.body))));
  });

  router.get('/api/agent/register/status', async (req, res) => {
    res.json(documented(registrationStatusSchema, await registration.status(sessionTokenOf(req))));
  });

  router.get('/api/agent/register/qr', async (req, res) => {
    const { format } = parseWith(qrQuerySchema, req.query, 'query');
    const qr = await registration.qr(sessionTokenOf(req));
    if (format === 'png') {
      res.type('png').send(Buffer.from(qr.qrImageBase64, 'base64'));
      return;
    }
    res.json(documented(registrationQrSchema, qr));
  });

  router.post('/api/agent/register/callback', async (req, res) => {
    const ack = await registration.callback(sessionTokenOf(req), parseWith(callbackReportSchema, req.body, 'callback body'));
    res.json(documented(callbackAckSchema, ack));
  });

  const exportKey: RequestHandler = async (req, res) => {
    res.json(documented(exportedKeySchema, await registration.exportKey(sessionTokenOf(req, { body: true }))));
  };
  router.get('/api/agent/register/export', exportKey);
  router.post('/api/agent/register/export', exportKey);
  return router;
}
