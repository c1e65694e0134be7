// CORS answers (what the groups mean and why `*` is safe: security.ts). A route of the table sets its group's headers
// in its own chain (edge.ts routeHeaders); here are a preflight's answer, and the CORS of a path that no route has,
// which takes the group of the nearest route above it (an unknown path under a session endpoint answers like the
// session endpoints), else the defaults below.
import express, { type RequestHandler, type Response, type Router } from 'express';
import { CACHE_POLICIES, CORS_GROUPS, type CorsGroup, type Route, staticPrefix } from '../route.js';
import { PREFLIGHT_MAX_AGE } from './security.js';

/** Paths below no route: first match wins; null: no CORS headers. */
const DEFAULT_CORS: readonly (readonly [prefix: string, group: CorsGroup | null])[] = [
  // the account-abstraction proxy: its own origin allow-list
  ['/api/aa', null],
  // a page may read the 404 of an unknown API or discovery path
  ['/api', 'public'],
  ['/.well-known', 'public'],
];

/** The headers of an answer in `group` that a page may read: any origin, and what it may see. */
export function exposeTo(res: Response, group: CorsGroup): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', CORS_GROUPS[group].expose);
}

/**
 * A preflight of a path in `group`: 204 with the methods and headers a page may send, which browsers read only from
 * a preflight (other answers do not repeat them); `allow`, the path's Allow header, when it is a path of the table.
 */
export function answerPreflight(res: Response, group: CorsGroup, allow?: string): void {
  const cors = CORS_GROUPS[group];
  res.setHeader('Cache-Control', CACHE_POLICIES.none);
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (allow !== undefined) res.setHeader('Allow', allow);
  res.setHeader('Access-Control-Allow-Methods', cors.methods);
  res.setHeader('Access-Control-Allow-Headers', cors.headers);
  res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
  res.status(204).end();
}

/**
 * For requests no route answered: each route's static prefix mounted, longest first, then the defaults; the first
 * that matches sets its group's headers (a preflight is answered here) and leaves the router (next('router')), so
 * that a shorter prefix does not override it. What it does not answer goes on to the 404.
 */
export function unknownPathCors(routes: readonly Route[]): Router {
  const prefixes = new Map<string, CorsGroup | null>();
  for (const route of routes) {
    const prefix = staticPrefix(route.path);
    if (prefix !== '' && !prefixes.has(prefix)) prefixes.set(prefix, route.cors ?? null);
  }
  const nearestFirst = [...prefixes].sort(([a], [b]) => b.length - a.length);
  const router = express.Router();
  for (const [prefix, group] of [...nearestFirst, ...DEFAULT_CORS]) router.use(prefix, corsOfUnknown(group));
  return router;
}

const corsOfUnknown =
  (group: CorsGroup | null): RequestHandler =>
  (req, res, next) => {
    if (group !== null) {
      if (req.method === 'OPTIONS') {
        answerPreflight(res, group);
        return;
      }
      exposeTo(res, group);
    }
    next('router');
  };
