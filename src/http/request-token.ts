import type { Request } from 'express';
import { badRequest } from '../core/errors.js';

/**
 * The session token of a request: `Authorization: Bearer <token>`, `?token=<token>`, or (where the route
 * allows it, e.g. export) a JSON body `{"token": ...}` — the transports deployments use (interface: Versioning).
 */
export function sessionTokenOf(req: Request, options: { body?: boolean } = {}): string {
  const header = req.headers.authorization;
  const bearer = header && /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (bearer) return bearer;
  const query = req.query['token'];
  if (typeof query === 'string' && query !== '') return query;
  const body = (req.body as { token?: unknown } | undefined)?.token;
  if (options.body && typeof body === 'string' && body !== '') return body;
  throw badRequest(
    `Missing session token: send it as ?token=<sessionToken> or Authorization: Bearer <sessionToken>${options.body ? ', or as {"token": ...} in the body' : ''}`,
  );
}
