import { Router } from 'express';
import type { RegistrationService } from '../../services/registration.js';
import {
  callbackReportSchema,
  challengeRequestSchema,
  ed25519ChallengeRequestSchema,
  registerRequestSchema,
} from '../schemas/registration.js';
import { sessionTokenOf } from '../session-token.js';
import { parseWith } from '../validation.js';
import type { RequestHandler } from 'express';

/** POST /api/agent/register and the session's status, QR, callback and export. */
export function registrationRoutes(registration: RegistrationService, sessionLimit: RequestHandler): Router {
  const router = Router();
  router.use('/api/agent/register', (_req, res, next) => {
    res.set('Cache-Control', 'no-store'); // every answer carries a session token
    next();
  });

  router.post('/api/agent/register', sessionLimit, async (req, res) => {
    res.json(await registration.start(parseWith(registerRequestSchema, req.body)));
  });

  router.post('/api/agent/register/challenge', sessionLimit, async (req, res) => {
    res.json(await registration.challenge(parseWith(challengeRequestSchema, req.body)));
  });

  router.post('/api/agent/register/ed25519-challenge', sessionLimit, async (req, res) => {
    res.json(await registration.ed25519Challenge(parseWith(ed25519ChallengeRequestSchema, req.body)));
  });

  router.get('/api/agent/register/status', async (req, res) => {
    res.json(await registration.status(sessionTokenOf(req)));
  });

  router.get('/api/agent/register/qr', async (req, res) => {
    const qr = await registration.qr(sessionTokenOf(req));
    if (req.query['format'] === 'png') {
      res.type('png').send(Buffer.from(qr.qrImageBase64, 'base64'));
      return;
    }
    res.json(qr);
  });

  router.post('/api/agent/register/callback', async (req, res) => {
    res.json(await registration.callback(sessionTokenOf(req), parseWith(callbackReportSchema, req.body, 'callback body')));
  });

  const exportKey: RequestHandler = async (req, res) => {
    res.json(await registration.exportKey(sessionTokenOf(req, { body: true })));
  };
  router.get('/api/agent/register/export', exportKey);
  router.post('/api/agent/register/export', exportKey);
  return router;
}
