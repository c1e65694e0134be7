// What every kind of session offers after it is opened, the same way under /api/agent/<kind>: the QR again
// while the session waits, and the identity app's callback. Session answers carry tokens: never cached.
import type { z } from 'zod';
import type { SessionType } from '../../core/session-types.js';
import type { ChainSyncedSessions } from '../../sessions/session-flow.js';
import type { ResponseDoc } from '../openapi/route-doc.js';
import { sessionTokenOf } from '../request-token.js';
import type { Route } from '../route.js';
import { callbackAckSchema, callbackReportSchema, qrQuerySchema, registrationQrSchema } from '../schemas/registration.js';
import { parseWith } from '../validation.js';

export const chainFailure: ResponseDoc = { description: 'The chain RPC failed' };
export const badRequest: ResponseDoc = { description: 'Invalid parameters or body; the message says what to fix' };
export const tooMany: ResponseDoc = { description: 'Too many session creations from this address (10 per minute)' };
export const tokenErrors: Record<number, ResponseDoc> = {
  400: { description: 'No session token, or a token of another kind of session' },
  401: { description: 'The session token is invalid or altered' },
  410: { description: 'The session expired (30 minutes)' },
};

/** `${base}/qr` and `${base}/callback` of a kind of session. */
export function followUpRoutes(base: string, tags: string[], service: Pick<ChainSyncedSessions<SessionType>, 'qr' | 'callback'>): Route[] {
  return [
    {
      method: 'get',
      path: `${base}/qr`,
      summary: 'QR code and deep link of the session, while it waits for the human',
      tags,
      query: qrQuerySchema,
      sessionToken: 'query-or-bearer',
      cors: 'session',
      responses: {
        200: { description: 'JSON, or the PNG image with format=png', schema: registrationQrSchema, contentType: 'image/png' },
        ...tokenErrors,
        409: { description: 'The session no longer waits for the human' },
      },
      handler: async (req, res) => {
        const { format } = parseWith(qrQuerySchema, req.query, 'query');
        const qr = await service.qr(sessionTokenOf(req));
        if (format === 'png') {
          res.type('png').send(Buffer.from(qr.qrImageBase64, 'base64'));
          return;
        }
        res.json(qr satisfies z.output<typeof registrationQrSchema>);
      },
    },
    {
      method: 'post',
      path: `${base}/callback`,
      summary: "The identity app's report of the proof it submitted",
      description: 'Called by the identity app with the callback token of the deep link. Idempotent.',
      tags,
      body: callbackReportSchema,
      sessionToken: 'query-or-bearer',
      cors: 'session',
      responses: { 200: { description: 'Received', schema: callbackAckSchema }, ...tokenErrors, 500: chainFailure },
      handler: async (req, res) => {
        const ack = await service.callback(sessionTokenOf(req), parseWith(callbackReportSchema, req.body, 'callback body'));
        res.json(ack satisfies z.output<typeof callbackAckSchema>);
      },
    },
  ];
}
