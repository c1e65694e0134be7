import { type RequestHandler, Router } from 'express';
import type { z } from 'zod';
import type { RegistrationService } from '../../services/registration.js';
import type { ResponseDoc, RouteDoc } from '../openapi/route-doc.js';
import {
  challengeRequestSchema,
  challengeSchema,
  ed25519ChallengeRequestSchema,
  exportedKeySchema,
  exportRequestSchema,
  registerRequestSchema,
  registrationSessionSchema,
  registrationStatusSchema,
} from '../schemas/registration.js';
import { sessionTokenOf } from '../session-token.js';
import { parseWith } from '../validation.js';
import { chainFailure, followUpDocs, followUpRoutes, tokenErrors } from './session-follow-up.js';

/** The answer as its documented schema types it: the compiler checks that the service returns what the docs say. */
const documented = <S extends z.ZodType>(_schema: S, value: z.output<S>): z.output<S> => value;

const TAGS = ['Registration'];
const badRequest: ResponseDoc = { description: 'Invalid parameters or body; the message says what to fix' };
const tooMany: ResponseDoc = { description: 'Too many session creations from this address (10 per minute)' };

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
  ...followUpDocs('/api/agent/register', TAGS),
  ...(['get', 'post'] as const).map(
    (method): RouteDoc => ({
      method,
      path: '/api/agent/register/export',
      summary: "Export the agent's private key once the registration is completed",
      description: 'Only for keys the service generated (linked, wallet-free, ed25519, ed25519-linked).',
      tags: TAGS,
      ...(method === 'post'
        ? { body: exportRequestSchema, sessionToken: 'query-bearer-or-body' as const }
        : { sessionToken: 'query-or-bearer' as const }),
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
  followUpRoutes(router, '/api/agent/register', registration);

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

  const exportKey: RequestHandler = async (req, res) => {
    res.json(documented(exportedKeySchema, await registration.exportKey(sessionTokenOf(req, { body: true }))));
  };
  router.get('/api/agent/register/export', exportKey);
  router.post('/api/agent/register/export', exportKey);
  return router;
}
