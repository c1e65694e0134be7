// The headers every answer carries (what they mean: security.ts).
// - edge(): before every route (every-request.ts): the security headers from a list computed once, and the Host
//   check.
// - routeHeaders(): first in each route's own chain, so it runs only when express has matched that route: the
//   route's template (route-label.ts), its Cache-Control and its CORS headers, all computed once per route when the
//   app is built.
// A request that matches no route (404, 405, OPTIONS, preflights) gets its CORS and Allow headers from allow.ts and
// cors.ts instead. A handler may still set its own headers (a page with its own Content-Security-Policy, a
// Cache-Control of its own): these are set before it runs.
import type { Request, RequestHandler, Response } from 'express';
import { CACHE_POLICIES, CORS_GROUPS, type Route } from '../route.js';
import { tagRoute } from './route-label.js';
import { SECURITY_HEADERS } from './security.js';

const NAMES = SECURITY_HEADERS.map(([name]) => name);
const VALUES = SECURITY_HEADERS.map(([, value]) => value);

/**
 * Security headers on every answer; an HTTP/1.1 request without Host is 400 (RFC 9112), answered as JSON here (no
 * CORS headers: a browser always sends Host). True when the request goes on; false when it has been answered.
 */
export function edge(req: Request, res: Response): boolean {
  for (let i = 0; i < NAMES.length; i++) res.setHeader(NAMES[i] as string, VALUES[i] as string);
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    res.setHeader('Cache-Control', CACHE_POLICIES.none);
    res.status(400).json({ error: 'Missing Host header: an HTTP/1.1 request must name the host it is sent to' });
    return false;
  }
  return true;
}

/**
 * The route's template, Cache-Control and CORS headers (a GET's policy serves HEAD too; other methods are never
 * stored; errors never are either: security.ts noStoreOnErrors). Expose-Headers only: the other CORS headers are
 * for preflights, which no route answers (allow.ts).
 */
export function routeHeaders(route: Route, template: string): RequestHandler {
  const cacheControl = CACHE_POLICIES[route.method === 'get' ? (route.cache ?? 'none') : 'none'];
  const expose = route.cors ? CORS_GROUPS[route.cors].expose : undefined;
  return (_req, res, next) => {
    tagRoute(res, template);
    res.setHeader('Cache-Control', cacheControl);
    if (expose !== undefined) res.setHeader('Access-Control-Allow-Origin', '*').setHeader('Access-Control-Expose-Headers', expose);
    next();
  };
}
