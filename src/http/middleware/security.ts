// What the response headers every route shares mean: security headers, CORS, and the Cache-Control policy.
// Which CORS group and cache policy a path has comes from its route in the route table; edge.ts, allow.ts and
// cors.ts set them; what the groups and policies mean is written here.
//
// CORS. Every endpoint a browser app may call answers any origin (`Access-Control-Allow-Origin: *`):
// the public reads, discovery, the OpenAPI document, and the session endpoints. `*` is safe because the
// service never uses cookies or other ambient credentials: a session token travels only in the query
// string, an Authorization header or the body, where the calling page put it itself, and
// `Access-Control-Allow-Credentials` is never sent. A foreign page can therefore do nothing that it could
// not do with curl. The demo endpoints too: what authorizes a call there is the agent's signature, which a page
// can only send if it holds the agent's key, and a signed answer's headers are exposed so the page can check
// them. Not covered: /api/aa/* (origin-restricted by its own allow-list), /metrics and /docs.
//
// Cache-Control, per route of the table for GET and HEAD; everything else is `no-store`, and so is every
// answer with a status of 400 or more, whatever its path:
//   discovery   public, max-age=3600   /.well-known/* documents and the A2A card redirect, /openapi.json:
//                                      they change only with a deploy
//   keys        public, max-age=300    the JWKS: a rotation is seen within 5 minutes, and a verifier that
//                                      meets a kid it does not hold fetches it again
//   status      public, max-age=60     credential status lists: a revocation reaches a caching verifier
//                                      within a minute, while its checks stay offline in between
//   agent       public, max-age=1      agent reads (info, agents, agents-by-nullifier, verify, cards,
//                                      reputation, verify-status): the server cache is invalidated by the
//                                      registry's events, so an answer is at most one block stale; one
//                                      second (a Celo block) keeps that bound for clients and shared caches
//                                      too, while collapsing bursts on hot agents into one request a second
//   static      public, max-age=86400  the docs page's script, style and icon files (pinned swagger-ui-dist)
//   revalidate  no-cache               the docs page itself: may be stored, revalidated on each use
//   none        no-store               sessions (their answers carry tokens), health, metrics, errors
// A route may still set its own with res.set('Cache-Control', ...) or cacheFor(policy).
import type { ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { CACHE_POLICIES, type CachePolicy } from '../route.js';

const NO_STORE = CACHE_POLICIES.none;

/** Sets `policy` now and turns it into `no-store` if the answer turns out to be an error (status >= 400). */
function applyCachePolicy(res: Response, policy: CachePolicy): void {
  res.setHeader('Cache-Control', CACHE_POLICIES[policy]);
  if (policy === 'none') return;
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
    if (status >= 400) this.setHeader('Cache-Control', NO_STORE);
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}

/** A route's own policy (errors are still `no-store`), for a handler mounted outside the app's route table. */
export function cacheFor(policy: CachePolicy): RequestHandler {
  return (_req, res, next) => {
    applyCachePolicy(res, policy);
    next();
  };
}

/**
 * Every error answer (status >= 400) of an app is `no-store`, whatever policy its route set: installed once on the
 * app's response prototype (express's `app.response`), instead of wrapping each response's writeHead. Node's
 * implicit headers (res.end without writeHead) go through writeHead too.
 */
export function noStoreOnErrors(response: ServerResponse): void {
  const writeHead = response.writeHead as (this: ServerResponse, status: number, message?: unknown, headers?: unknown) => ServerResponse;
  // its documented arguments passed as they came (an absent status message is undefined, as Node reads it), without
  // gathering them in an array on every answer
  response.writeHead = function (this: ServerResponse, status: number, message?: unknown, headers?: unknown) {
    if (status >= 400) this.setHeader('Cache-Control', NO_STORE);
    return writeHead.call(this, status, message, headers);
  } as ServerResponse['writeHead'];
}

/** 24 hours: browsers cap it lower anyway (Chrome: 2 h). */
export const PREFLIGHT_MAX_AGE = '86400';

/**
 * The Content-Security-Policy: it lets the /docs page run: its scripts and styles are files served by this service
 * ('self'); Swagger UI sets inline styles and uses data: images. Answers of the API are JSON, which a CSP does not
 * affect. No upgrade-insecure-requests: the service also runs on plain http on a local machine. A handler that
 * serves a page of its own may set its own (res.setHeader replaces this one).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "script-src-attr 'none'",
].join(';');

/**
 * The security headers of every answer, computed once: what helmet 8 sets by default, with the CSP above, a
 * Cross-Origin-Resource-Policy of cross-origin (the API and the QR images are meant to be used by other origins),
 * frames denied, and strict-origin-when-cross-origin referrers; plus the Permissions-Policy of the reference
 * service. Set by the edge middleware (edge.ts) from this list rather than by helmet's chain of one middleware per
 * header. X-Powered-By is never sent (app.ts disables it).
 */
export const SECURITY_HEADERS: readonly (readonly [name: string, value: string])[] = [
  ['Content-Security-Policy', CONTENT_SECURITY_POLICY],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'cross-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'strict-origin-when-cross-origin'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'DENY'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
  ['Permissions-Policy', 'camera=(), microphone=(), geolocation=()'],
];
