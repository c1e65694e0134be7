// The MCP server's endpoint as entries of the route table: one path, three methods of MCP's Streamable HTTP transport
// (POST a message, GET the session's event stream or resume one, DELETE to end the session). The handler is the MCP
// server's (src/mcp), handed over by the composition root; it reads its own body, as the SDK's transport does. Not in
// the OpenAPI document: the protocol is MCP's (JSON-RPC messages, event streams), named by the discovery document.
// A GET holds a long-lived stream, so it takes a ticket from the stream limits first, like A2A's streams.
import type { Request, RequestHandler, Response } from 'express';
import { MCP_PATH } from '../../core/endpoints.js';
import { ServiceError } from '../../core/errors.js';
import type { StreamLimits } from '../../services/stream-limits.js';
import type { OpenApiDocument } from '../openapi/document.js';
import type { Route } from '../route.js';
import { admitStream } from '../stream-admission.js';

/** The MCP server's handler of one HTTP exchange of its transport (POST, GET or DELETE). */
export type McpHttpHandler = (req: Request, res: Response) => Promise<void>;

/** What the app tells the MCP server about itself: the OpenAPI and discovery documents it serves (MCP resources). */
export interface ServedApi {
  openApi(): OpenApiDocument;
  discovery(): unknown;
}

/** The MCP server as the composition root hands it over: mounted with the served API, its exchange handler. */
export type McpMount = (api: ServedApi) => McpHttpHandler;

/** MCP's own error shape, a JSON-RPC error object with id null, as the transport answers its refusals. */
const mcpError = (res: Response, status: number, message: string): void => {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
};

const TAGS = ['MCP'];

export function mcpRoutes(handle: McpHttpHandler, streams: StreamLimits): Route[] {
  const forward: RequestHandler = (req, res, next) => {
    handle(req, res).catch(next);
  };
  const shared = { path: MCP_PATH, tags: TAGS, cors: 'mcp', ownBody: true, undocumented: true } as const;
  return [
    {
      ...shared,
      method: 'post',
      summary: 'MCP Streamable HTTP: a JSON-RPC message (initialize opens a session)',
      responses: { 200: { description: 'The answer: JSON, or an event stream' }, 202: { description: 'A notification or response was taken' } },
      handler: forward,
    },
    {
      ...shared,
      method: 'get',
      summary: "MCP Streamable HTTP: the session's event stream, or a stream resumed after Last-Event-ID",
      responses: { 200: { description: 'An event stream', contentType: 'text/event-stream' } },
      handler: (req, res, next) => {
        // express routes HEAD to GET: an event stream has no head
        if (req.method === 'HEAD') {
          res.setHeader('Allow', 'GET, POST, DELETE, OPTIONS');
          mcpError(res, 405, 'HEAD has no meaning here: GET opens an event stream');
          return;
        }
        const session = req.header('mcp-session-id');
        try {
          admitStream(streams, req, res, session ? `mcp:${session.slice(0, 100)}` : undefined);
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
          mcpError(res, error.status, error.message);
          return;
        }
        forward(req, res, next);
      },
    },
    {
      ...shared,
      method: 'delete',
      summary: 'MCP Streamable HTTP: end the session (header Mcp-Session-Id)',
      responses: { 200: { description: 'The session is ended' } },
      handler: forward,
    },
  ];
}
