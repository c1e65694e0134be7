// Response headers that every route shares, set once here: security headers (helmet), CORS, and the
// Cache-Control policy. Which CORS group and cache policy a path has comes from the route table
// (route-policies.ts); what the groups and policies mean is written here.
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
//   agent       public, max-age=1      agent reads (info, agents, agents-by-nullifier, verify, cards,
//                                      reputation, verify-status): the server cache is invalidated by the
//                                      registry's events, so an answer is at most one block stale; one
//                                      second (a Celo block) keeps that bound for clients and shared caches
//                                      too, while collapsing bursts on hot agents into one request a second
//   static      public, max-age=86400  the docs page's script, style and icon files (pinned swagger-ui-dist)
//   revalidate  no-cache               the docs page itself: may be stored, revalidated on each use
//   none        no-store               sessions (their answers carry tokens), health, metrics, errors
// A route may still set its own with res.set('Cache-Control', ...) or cacheFor(policy).
import type { RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { CACHE_POLICIES, type CachePolicy } from '../route.js';
import type { RoutePolicies } from '../route-policies.js';

/** Sets `policy` now and turns it into `no-store` if the answer turns out to be an error (status >= 400). */
function applyCachePolicy(res: Response, policy: CachePolicy): void {
  res.setHeader('Cache-Control', CACHE_POLICIES[policy]);
  if (policy === 'none') return;
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
    if (status >= 400) this.setHeader('Cache-Control', CACHE_POLICIES.none);
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}

/** Cache-Control of every answer, from the route table. */
export function cachePolicy(policies: RoutePolicies): RequestHandler {
  return (req, res, next) => {
    applyCachePolicy(res, policies.cacheFor(req.method, req.path));
    next();
  };
}

/** A route's own policy (errors are still `no-store`). */
export function cacheFor(policy: CachePolicy): RequestHandler {
  return (_req, res, next) => {
    applyCachePolicy(res, policy);
    next();
  };
}

/** 24 hours: browsers cap it lower anyway (Chrome: 2 h). */
const PREFLIGHT_MAX_AGE = '86400';

/**
 * CORS on the covered paths: every answer (errors included) allows any origin and exposes the request id
 * and Retry-After; an OPTIONS preflight is answered here with 204 and the allowed methods and headers (which
 * browsers read only from a preflight, so the other answers do not repeat them).
 */
export function cors(policies: RoutePolicies): RequestHandler {
  return (req, res, next) => {
    const set = policies.corsFor(req.path);
    if (!set) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method !== 'OPTIONS') {
      res.setHeader('Access-Control-Expose-Headers', set.expose);
      next();
      return;
    }
    // what OPTIONS answers anyway: the methods of the path, when it is one of the table
    const allow = policies.allowFor(req.path);
    if (allow.length > 0) res.setHeader('Allow', allow.join(', '));
    res.setHeader('Access-Control-Allow-Methods', set.methods);
    res.setHeader('Access-Control-Allow-Headers', set.headers);
    res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
    res.status(204).end();
  };
}

/**
 * helmet's headers, with a Content-Security-Policy that lets the /docs page run: its scripts and styles
 * are files served by this service ('self'); Swagger UI sets inline styles and uses data: images. Answers
 * of the API are JSON, which a CSP does not affect. No upgrade-insecure-requests: the service also runs
 * on plain http on a local machine. Cross-Origin-Resource-Policy is cross-origin, since the API (and the
 * QR images) are meant to be used by other origins. Plus the Permissions-Policy of the reference service.
 */
export function securityHeaders(): RequestHandler {
  const headers = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        scriptSrcAttr: ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
  });
  return (req, res, next) => {
    res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
    headers(req, res, next);
  };
}
