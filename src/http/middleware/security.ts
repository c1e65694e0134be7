// Response headers that every route shares, set once here: security headers (helmet), CORS, and the
// Cache-Control policy.
//
// CORS. Every endpoint a browser app may call answers any origin (`Access-Control-Allow-Origin: *`):
// the public reads, discovery, the OpenAPI document, and the session endpoints. `*` is safe because the
// service never uses cookies or other ambient credentials: a session token travels only in the query
// string, an Authorization header or the body, where the calling page put it itself, and
// `Access-Control-Allow-Credentials` is never sent. A foreign page can therefore do nothing that it could
// not do with curl. Not covered: /api/aa/* (origin-restricted by its own allow-list) and /api/demo/*
// (server-to-server, signed headers), /metrics and /docs.
//
// Cache-Control, by path, in one table (CACHE_RULES) for GET and HEAD; everything else is `no-store`, and
// so is every answer with a status of 400 or more, whatever its path:
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

export const CACHE_POLICIES = {
  discovery: 'public, max-age=3600',
  agent: 'public, max-age=1',
  static: 'public, max-age=86400',
  revalidate: 'no-cache',
  none: 'no-store',
} as const;

export type CachePolicy = keyof typeof CACHE_POLICIES;

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

/** Path prefixes (a trailing slash: anything below; none: that path exactly) and their policy; first match wins. */
const CACHE_RULES: readonly [prefix: string, policy: CachePolicy][] = [
  ['/api/agent/info/', 'agent'],
  ['/api/agent/agents/', 'agent'],
  ['/api/agent/agents-by-nullifier/', 'agent'],
  ['/api/agent/verify/', 'agent'],
  ['/api/cards/', 'agent'],
  ['/api/reputation/', 'agent'],
  ['/api/verify-status/', 'agent'],
  ['/.well-known/a2a/', 'discovery'],
  ['/.well-known/self-agent-id.json', 'discovery'],
  ['/.well-known/agent-registration.json', 'discovery'],
  ['/openapi.json', 'discovery'],
  ['/docs/assets/', 'static'],
  ['/docs', 'revalidate'],
];

export function cachePolicyFor(method: string, path: string): CachePolicy {
  if (method !== 'GET' && method !== 'HEAD') return 'none';
  for (const [prefix, policy] of CACHE_RULES) {
    if (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix) return policy;
  }
  return 'none';
}

/** Cache-Control of every answer, from CACHE_RULES. */
export function cachePolicy(): RequestHandler {
  return (req, res, next) => {
    applyCachePolicy(res, cachePolicyFor(req.method, req.path));
    next();
  };
}

/** A route's own policy, overriding the table (errors are still `no-store`). */
export function cacheFor(policy: CachePolicy): RequestHandler {
  return (_req, res, next) => {
    applyCachePolicy(res, policy);
    next();
  };
}

/** The CORS answer of a group of paths. */
interface CorsSet {
  methods: string;
  headers: string;
}

const PUBLIC: CorsSet = { methods: 'GET, HEAD, OPTIONS', headers: 'Content-Type, Accept' };
const SESSION: CorsSet = { methods: 'GET, POST, OPTIONS', headers: 'Content-Type, Accept, Authorization' };
const A2A: CorsSet = { methods: 'POST, OPTIONS', headers: 'Content-Type, Accept, Authorization, X-Agent-Id' };

/** First match wins; `null`: no CORS headers at all. */
const CORS_RULES: readonly [prefix: string, set: CorsSet | null][] = [
  ['/api/agent/register', SESSION],
  ['/api/agent/deregister', SESSION],
  ['/api/agent/identify', SESSION],
  ['/api/agent/refresh', SESSION],
  ['/api/a2a', A2A],
  ['/api/aa/', null],
  ['/api/demo/', null],
  ['/api/', PUBLIC],
  ['/.well-known/', PUBLIC],
  ['/openapi.json', PUBLIC],
];

const startsWithSegment = (path: string, prefix: string): boolean =>
  prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`);

export function corsSetFor(path: string): CorsSet | null {
  for (const [prefix, set] of CORS_RULES) if (startsWithSegment(path, prefix)) return set;
  return null;
}

/** 24 hours: browsers cap it lower anyway (Chrome: 2 h). */
const PREFLIGHT_MAX_AGE = '86400';

/**
 * CORS on the covered paths: every answer (errors included) allows any origin and exposes the request id
 * and Retry-After; an OPTIONS preflight is answered here with 204 and the allowed methods and headers (which
 * browsers read only from a preflight, so the other answers do not repeat them).
 */
export function cors(): RequestHandler {
  return (req, res, next) => {
    const set = corsSetFor(req.path);
    if (!set) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method !== 'OPTIONS') {
      res.setHeader('Access-Control-Expose-Headers', 'X-Request-Id, Retry-After');
      next();
      return;
    }
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
