// Which methods a path answers, from the route table (route-policies.ts), checked before any route reads a body:
// a path of the table asked with another method is 405 with an Allow header naming the ones it has (TRACE, PUT,
// DELETE, CONNECT... included), and OPTIONS that CORS did not answer as a preflight is 204 with that Allow header.
// A request target that is not a path (CONNECT's host:port, OPTIONS *) is about the server as a whole. A path of no
// route goes on, to the 404 at the end. Methods Node's parser does not know never get here (server-edges.ts: 501).
import type { RequestHandler } from 'express';
import { type RoutePolicies, SERVER_METHODS } from '../route-policies.js';

export function allowedMethods(policies: RoutePolicies): RequestHandler {
  return (req, res, next) => {
    const wholeServer = !req.originalUrl.startsWith('/');
    const allowed = wholeServer ? [...SERVER_METHODS] : policies.allowFor(req.path);
    if (allowed.length === 0 || (allowed.includes(req.method) && req.method !== 'OPTIONS')) {
      next();
      return;
    }
    res.setHeader('Allow', allowed.join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    const target = wholeServer ? `this server (${req.method} ${req.originalUrl.slice(0, 100)})` : req.path;
    res.status(405).json({ error: `Method ${req.method} is not allowed on ${target}: use ${allowed.join(', ')}` });
  };
}

/** RFC 9112: an HTTP/1.1 request without Host is 400 (the server leaves this check to the app, to answer JSON). */
export const requireHost: RequestHandler = (req, res, next) => {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    res.status(400).json({ error: 'Missing Host header: an HTTP/1.1 request must name the host it is sent to' });
    return;
  }
  next();
};
