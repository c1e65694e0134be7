// What a request that no route answered gets, from the route table (route-policies.ts); mounted after every route,
// before the JSON 404. Never stored (Cache-Control: no-store).
// - CORS: where it applies to the path (a path of no route takes the group of the nearest route above it), any
//   origin; an OPTIONS preflight is answered here with 204 and the allowed methods and headers (which browsers read
//   only from a preflight, so the other answers do not repeat them).
// - Methods: a path of the table asked with another method is 405 with an Allow header naming the ones it has
//   (TRACE, PUT, DELETE, CONNECT... included); no route reads its body, since none matched. OPTIONS that CORS did
//   not answer as a preflight is 204 with that Allow header. A request target that is not a path (CONNECT's
//   host:port, OPTIONS *) is about the server as a whole. A path of no route goes on, to the 404.
// Methods Node's parser does not know never get here (server-edges.ts: 501).
import type { RequestHandler } from 'express';
import { CACHE_POLICIES } from '../route.js';
import { type RoutePolicies, SERVER_METHODS } from '../route-policies.js';
import { PREFLIGHT_MAX_AGE } from './security.js';

export function unmatched(policies: RoutePolicies): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Cache-Control', CACHE_POLICIES.none);
    const wholeServer = !req.originalUrl.startsWith('/');
    const allowed = wholeServer ? [...SERVER_METHODS] : policies.allowFor(req.path);
    const cors = wholeServer ? null : policies.corsFor(req.path);
    if (cors) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      if (req.method === 'OPTIONS') {
        if (allowed.length > 0) res.setHeader('Allow', allowed.join(', '));
        res.setHeader('Access-Control-Allow-Methods', cors.methods);
        res.setHeader('Access-Control-Allow-Headers', cors.headers);
        res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
        res.status(204).end();
        return;
      }
      res.setHeader('Access-Control-Expose-Headers', cors.expose);
    }
    // no route of this path, or one that passed the request on: the 404
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
