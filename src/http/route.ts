// One entry of the route table: what the OpenAPI document says about an endpoint (RouteDoc), the policies the
// middleware applies to it (cache, CORS, rate limit, body parsing) and its handler. Express routes, the OpenAPI
// document and the CORS and cache headers are all derived from the same entries (app.ts), so they cannot drift.
import type { RequestHandler } from 'express';
import type { RouteDoc } from './openapi/route-doc.js';

/** Largest request body: the interface's limit (200 kB). */
export const BODY_LIMIT = '200kb';

/** A body limit in bytes as messages and the document say it: "32kb", or "1000 bytes" when not whole kilobytes. */
export const bodyLimitText = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024}kb` : `${bytes} bytes`);

/** Cache-Control values by policy (middleware/security.ts explains each). */
export const CACHE_POLICIES = {
  discovery: 'public, max-age=3600',
  keys: 'public, max-age=300',
  status: 'public, max-age=60',
  agent: 'public, max-age=1',
  static: 'public, max-age=86400',
  revalidate: 'no-cache',
  none: 'no-store',
} as const;
export type CachePolicy = keyof typeof CACHE_POLICIES;

/** Who may call an endpoint from a browser page of another origin, and with which headers. */
const EXPOSED = 'X-Request-Id, Retry-After';
const AGENT_SIGNATURE =
  'x-svc-agent-signature, x-svc-agent-timestamp, x-svc-agent-address, x-svc-agent-keytype, x-svc-agent-key, ' +
  'Signature-Input, Signature, Signature-Agent, Content-Digest';

export const CORS_GROUPS = {
  public: { methods: 'GET, HEAD, OPTIONS', headers: 'Content-Type, Accept', expose: EXPOSED },
  session: { methods: 'GET, POST, OPTIONS', headers: 'Content-Type, Accept, Authorization', expose: EXPOSED },
  a2a: { methods: 'POST, OPTIONS', headers: 'Content-Type, Accept, Authorization, X-Agent-Id', expose: EXPOSED },
  /** Signed agent requests: the page sends the signature headers, and reads the ones a signed answer carries. */
  signed: { methods: 'GET, POST, OPTIONS', headers: `Content-Type, Accept, ${AGENT_SIGNATURE}`, expose: `${EXPOSED}, ${AGENT_SIGNATURE}` },
  /** MCP's Streamable HTTP: the session and protocol headers both ways, and Last-Event-ID to resume a stream. */
  mcp: {
    methods: 'GET, POST, DELETE, OPTIONS',
    headers: 'Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
    expose: `${EXPOSED}, Mcp-Session-Id`,
  },
} as const;
export type CorsGroup = keyof typeof CORS_GROUPS;

export interface Route extends RouteDoc {
  /** Cache-Control of its successful GET/HEAD answers; errors are always no-store. Default none (no-store). */
  cache?: CachePolicy;
  /** Its CORS group; absent: no CORS headers. */
  cors?: CorsGroup;
  /** Counted against this per-client limit before anything else (the body is not read yet). */
  limit?: 'session-creation' | 'agent-messages';
  /** The handler reads its own body (the A2A SDK's JSON-RPC handler); otherwise a route with `body` gets express.json. */
  ownBody?: boolean;
  /** The handler gets the raw body text (a signature covers its exact bytes); parsed JSON would lose them. */
  textBody?: boolean;
  /** Served, but not part of the API document (the docs page's asset files). */
  undocumented?: boolean;
  handler: RequestHandler;
}

/** /api/agent/info/:chainId/:agentId for /api/agent/info/{chainId}/{agentId}. */
export const expressPath = (template: string): string => template.replace(/\{([^}]+)\}/g, ':$1');

/** The literal part of a template before its first parameter, without a trailing slash: /api/agent/info for /api/agent/info/{chainId}/{agentId}. */
export const staticPrefix = (template: string): string => {
  const brace = template.indexOf('{');
  return (brace < 0 ? template : template.slice(0, brace)).replace(/\/$/, '');
};

/** The methods the service answers at all, in the order an Allow header lists them (DELETE: ending an MCP session). */
export const SERVER_METHODS = ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'] as const;

/** The Allow header of a path whose routes have `methods`: HEAD with GET (express answers it), and OPTIONS. */
export function allowOf(methods: Iterable<Route['method']>): string {
  const own = new Set<string>([...methods].map((method) => method.toUpperCase()));
  if (own.has('GET')) own.add('HEAD');
  own.add('OPTIONS');
  return SERVER_METHODS.filter((method) => own.has(method)).join(', ');
}
