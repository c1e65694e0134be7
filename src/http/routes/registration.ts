import type { RequestHandler } from 'express';
import { SESSION_BASE_PATHS } from '../../core/endpoints.js';
import type { RegistrationService } from '../../sessions/registration.js';
import { sessionTokenOf } from '../request-token.js';
import type { Route } from '../route.js';
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
import { documented, parseWith } from '../validation.js';
import { badRequest, chainFailure, followUpRoutes, tokenErrors, tooMany } from './session-follow-up.js';

const TAGS = ['Registration'];
const BASE = SESSION_BASE_PATHS.register;

/** POST /api/agent/register, its challenges, and the session's status, QR, callback and export. */
export function registrationRoutes(registration: RegistrationService): Route[] {
  const opening = { method: 'post', tags: TAGS, cors: 'session', limit: 'session-creation' } as const;
  const exportKey: RequestHandler = async (req, res) => {
    res.json(documented(exportedKeySchema, await registration.exportKey(sessionTokenOf(req, { body: true }))));
  };
  return [
    {
      ...opening,
      path: BASE,
      summary: 'Open a registration session',
      description:
        'Generates (or accepts) the agent key, builds the proof request and returns the session token, the deep link and QR code for the identity app.',
      body: registerRequestSchema,
      responses: {
        200: { description: 'The session', schema: registrationSessionSchema },
        400: badRequest,
        409: { description: 'The agent key is already registered' },
        429: tooMany,
        500: chainFailure,
      },
      handler: async (req, res) => {
        res.json(documented(registrationSessionSchema, await registration.start(parseWith(registerRequestSchema, req.body))));
      },
    },
    {
      ...opening,
      path: `${BASE}/challenge`,
      summary: 'Challenge for a wallet-held agent key (privy, smartwallet)',
      description:
        'The hash the agent key signs before the session is opened with agentSignature; in smartwallet mode the smart account (humanAddress) signs it too, as guardianSignature.',
      body: challengeRequestSchema,
      responses: { 200: { description: 'The challenge', schema: challengeSchema }, 400: badRequest, 429: tooMany, 500: chainFailure },
      handler: async (req, res) => {
        res.json(documented(challengeSchema, await registration.challenge(parseWith(challengeRequestSchema, req.body))));
      },
    },
    {
      ...opening,
      path: `${BASE}/ed25519-challenge`,
      summary: 'Challenge for an Ed25519 agent key (ed25519, ed25519-linked)',
      body: ed25519ChallengeRequestSchema,
      responses: { 200: { description: 'The challenge', schema: challengeSchema }, 400: badRequest, 429: tooMany, 500: chainFailure },
      handler: async (req, res) => {
        res.json(documented(challengeSchema, await registration.ed25519Challenge(parseWith(ed25519ChallengeRequestSchema, req.body))));
      },
    },
    {
      method: 'get',
      path: `${BASE}/status`,
      summary: 'Stage of the registration session',
      description: 'Follows the session to the chain: completed once the registry knows the agent key. Returns a refreshed token.',
      tags: TAGS,
      sessionToken: 'query-or-bearer',
      cors: 'session',
      responses: { 200: { description: 'The session', schema: registrationStatusSchema }, ...tokenErrors, 500: chainFailure },
      handler: async (req, res) => {
        res.json(documented(registrationStatusSchema, await registration.status(sessionTokenOf(req))));
      },
    },
    ...followUpRoutes(BASE, TAGS, registration),
    ...(['get', 'post'] as const).map(
      (method): Route => ({
        method,
        path: `${BASE}/export`,
        summary: "Export the agent's private key once the registration is completed",
        description:
          'Only for keys the service generated (linked, wallet-free, ed25519, ed25519-linked), and once: the first export that succeeds is the only one; any later one, with any token of the session, is 409. Needs the session token (a watch token from the scan link is 401).',
        tags: TAGS,
        cors: 'session',
        ...(method === 'post'
          ? { body: exportRequestSchema, sessionToken: 'query-bearer-or-body' as const }
          : { sessionToken: 'query-or-bearer' as const }),
        responses: {
          200: { description: 'The key', schema: exportedKeySchema },
          ...tokenErrors,
          401: { description: 'The session token is invalid or altered, or a watch token (it can only watch the session)' },
          409: { description: 'The registration is not completed yet, or the key was already exported (it is handed out once)' },
          500: chainFailure,
        },
        handler: exportKey,
      }),
    ),
  ];
}
