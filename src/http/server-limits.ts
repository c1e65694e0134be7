// The main HTTP server with limits a slow or greedy client cannot hold it past: the whole request (headers and body)
// must arrive within requestTimeoutMs and its headers within headersTimeoutMs (Node answers 408 and closes the
// connection), an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS, and connections beyond
// maxConnections are closed as they arrive, those carrying a stream not counted (connection-governor.ts; streams
// have limits of their own per client and task, and a longest lifetime: services/stream-limits.ts).
// Whatever the server answers by itself (a request it cannot parse, a timeout, CONNECT) is JSON: server-edges.ts.
import { createServer, type Server } from 'node:http';
import { governConnections } from './connection-governor.js';
import { canBuildWithPrototypes, type ExpressMessages } from './express-messages.js';
import { answerServerEdges } from './server-edges.js';

export interface ServerLimits {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** 0: no cap. */
  maxConnections: number;
}

/** Node's default: shorter than any proxy's idle timeout that would reuse the connection. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** `messages`: the classes requests and responses are built from (express-messages.ts); default node:http's own. */
export function createLimitedServer(limits: ServerLimits, messages?: ExpressMessages): Server {
  const server = createServer({
    ...(messages && canBuildWithPrototypes ? { IncomingMessage: messages.IncomingMessage, ServerResponse: messages.ServerResponse } : {}),
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // how often Node looks for requests past their timeouts (default 30 s, which would stretch a 10 s limit to 40)
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    // the app refuses a request without Host with a JSON 400 (Node's own answer has no body)
    requireHostHeader: false,
  });
  governConnections(server, limits.maxConnections);
  answerServerEdges(server);
  return server;
}
