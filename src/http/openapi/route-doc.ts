// Each route module describes its endpoints with the same zod schemas it validates with; the OpenAPI
// document is generated from these descriptions, so it cannot drift from what the routes accept.
import type { z } from 'zod';

export interface ResponseDoc {
  description: string;
  /** JSON body; absent for bodies that are not JSON (images, redirects) or empty. */
  schema?: z.ZodType;
  /** Content type when the body is not JSON, e.g. image/png. */
  contentType?: string;
  /** Response headers worth documenting (e.g. ETag), by name. */
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

export interface RouteDoc {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path template, e.g. /api/agent/info/{chainId}/{agentId}. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers the route reads besides the security schemes' (e.g. If-None-Match), as header parameters. */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** Which session token transports apply (documented as security alternatives, the token being required in one). */
  sessionToken?: 'query-or-bearer' | 'query-bearer-or-body';
  /** 'required': a signed agent request (x-svc-agent-* headers); 'optional': signed or anonymous. */
  signedRequest?: 'required' | 'optional';
  /** Needs the account-abstraction proxy's token (header x-aa-proxy-token). */
  proxyToken?: boolean;
  /**
   * The handler reads its own body and documents its own answers to one it cannot read. Otherwise a POST's body goes
   * through the app's JSON or text parser, whose refusals (too large, an undecodable charset or encoding) the
   * document adds to the operation.
   */
  ownBody?: boolean;
  /** Largest body in bytes, where below the app's 200 kB (paths that take unauthenticated writes). */
  bodyLimit?: number;
  responses: Record<number, ResponseDoc>;
}
