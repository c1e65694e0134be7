// The MCP endpoint: Streamable HTTP sessions on the SDK's transport, any of them servable by any instance that
// shares the store. This is the SDK's "persistent storage" way of deploying on several nodes (a session id
// generator, and an event store every node reads): what a session needs lives on the store port (its record, its
// streams' events), and an instance that is asked about a session it does not hold takes it over by handing the
// SDK's transport an initialize request for that session id, as the client once sent it, before the request itself.
//
// The web-standard transport is used (through @hono/node-server's request listener, the adapter the SDK's own
// Node transport wraps): taking a session over needs a request that no socket carried. Each exchange runs as its
// caller's (caller.ts), so a tool counts against the per-client limits of the address that sent it. A session is
// kept in memory while used and closed here after an idle spell (its record stays: the next request takes it back).
// A resumed stream that nobody here will add to (another instance sends on it, or its answer is in) is ended once
// what was stored is replayed: the client reconnects after the retry interval the transport announces and reads on,
// wherever its request runs, until it has the answer.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type ClientCapabilities, DEFAULT_NEGOTIATED_PROTOCOL_VERSION, type Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { MCP_PATH } from '../core/endpoints.js';
import { ServiceError } from '../core/errors.js';
import type { Services } from '../services/index.js';
import { clientKeyOf } from '../services/rate-limits.js';
import type { EventBus } from '../store/event-bus.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import { asCaller } from './caller.js';
import { SessionEventStore } from './event-store.js';
import { type A2aSkill, type ApiDescription, interfaceSummary } from './interface-summary.js';
import { createMcpServer } from './server.js';
import { DEFAULT_TOOL_WAIT_MS } from './session-tools.js';

/** The handler of one HTTP exchange of the transport (POST, GET or DELETE). */
export type McpExchangeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface McpEndpoint {
  /** The endpoint as the app mounts it: given the OpenAPI document the app serves (a resource), its exchange handler. */
  mount(api: { openApi(): ApiDescription; discovery(): unknown }): McpExchangeHandler;
  /** Stops: tools that follow a session answer with where it stands, then every session here is closed (not ended). */
  close(): Promise<void>;
  /** MCP sessions held in memory here now. */
  readonly size: number;
}

export interface McpEndpointOptions {
  services: Services;
  /** Where session records and stream events are kept (shared by the instances). */
  store: KeyValueStore;
  /** Where an ended session is announced to the other instances. */
  events: EventBus;
  /** This instance among those sharing the store. */
  instanceId: string;
  publicUrl: string;
  version: string;
  logger: Logger;
  /** The A2A agent's skills, which the interface summary lists. */
  a2aSkills: readonly A2aSkill[];
  /** How long a session tool follows its session before answering; default 45 s. */
  waitMs?: number;
  /** Largest POST body in bytes; default 200 kB, the service's. */
  maxBodyBytes?: number;
  /** Sessions held in memory at most; beyond, the longest idle goes (or a new one is refused with 503). Default 1,000. */
  maxSessions?: number;
  /** A session unused this long is closed here (its record stays); default 10 minutes. */
  idleMs?: number;
  /** How soon a client reconnects to a stream the server ended (the SSE retry field); default 1 s. */
  retryIntervalMs?: number;
}

/** What a session needs to be taken over by another instance: its client, as the initialize request described it. */
interface SessionRecord {
  openedAt: number;
  client?: { info: Implementation; capabilities: ClientCapabilities };
}

interface HeldSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  events: SessionEventStore;
  lastUsed: number;
  /** HTTP exchanges under way (a stream counts until it ends). */
  exchanges: number;
  /** When its record's lifetime was last renewed. */
  renewed: number;
}

/** A session record lives this long after its last renewal: a host left open for a day keeps its session. */
const RECORD_TTL_MS = 24 * 60 * 60_000;
const RENEW_AFTER_MS = 60 * 60_000;
const DEFAULT_BODY_BYTES = 200 * 1024;
/** A resumed stream nobody here adds to is ended after this: the replay is out, the client reconnects to read on. */
const REPLAYED_STREAM_MS = 2_000;
/** At shutdown, how long tools get to answer once told to stop following. */
const CLOSE_GRACE_MS = 2_000;
const CLOSED_TOPIC = 'mcp-session-ended';

const recordKey = (id: string): string => `mcp:session:${id}`;

/** MCP's error answer: a JSON-RPC error object with id null, as the SDK's transport answers its own refusals. */
function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** `response` with its event stream ended after `ms` (the rest is left to a reconnection). */
function endingAfter(response: Response, ms: number): Response {
  const source = response.body;
  if (!source) return response;
  const reader = source.getReader();
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setTimeout(() => {
        if (ended) return;
        ended = true;
        controller.close();
        void reader.cancel().catch(() => undefined);
      }, ms);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (ended) return;
      if (done) {
        ended = true;
        clearTimeout(timer);
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      ended = true;
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { services, store, events, instanceId, logger } = options;
  const waitMs = options.waitMs ?? DEFAULT_TOOL_WAIT_MS;
  const maxSessions = options.maxSessions ?? 1_000;
  const idleMs = options.idleMs ?? 10 * 60_000;
  const retryInterval = options.retryIntervalMs ?? 1_000;
  const endpointUrl = `${options.publicUrl}${MCP_PATH}`;
  const stopping = new AbortController();
  const held = new Map<string, HeldSession>();
  const takeovers = new Map<string, Promise<HeldSession | undefined>>();
  let calls = 0;
  let api: { openApi(): ApiDescription; discovery(): unknown } | undefined;
  let summary: string | undefined;

  const documents = {
    openApi: (): ApiDescription => {
      if (!api) throw new ServiceError(503, 'The OpenAPI document is not served here');
      return api.openApi();
    },
    /** The discovery document as GET /.well-known/self-agent-id.json serves it (the services' part where none is served). */
    discovery: (): unknown => api?.discovery() ?? services.queries.discovery(),
    summary: (): string =>
      (summary ??= interfaceSummary({
        publicUrl: options.publicUrl,
        api: documents.openApi(),
        discovery: services.queries.discovery(),
        a2aSkills: options.a2aSkills,
      })),
  };

  /** Closes the sessions idle longest until there is room for one more; false when all are in use. */
  const makeRoom = async (): Promise<boolean> => {
    if (held.size < maxSessions) return true;
    const idle = [...held.values()].filter((s) => s.exchanges === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (!idle) return false;
    await idle.transport.close();
    return true;
  };

  /** A session held here: its transport (with the event store on the store port) and its MCP server. */
  const hold = async (id: string, fresh: boolean): Promise<HeldSession> => {
    const eventStore = new SessionEventStore(store, id, instanceId);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore,
      retryInterval,
      maxRequestBodySize: options.maxBodyBytes ?? DEFAULT_BODY_BYTES,
      // a new session is recorded before its id is handed out: any instance may get the next request
      ...(fresh ? { onsessioninitialized: () => store.set<SessionRecord>(recordKey(id), { openedAt: Date.now() }, RECORD_TTL_MS) } : {}),
      onsessionclosed: async () => {
        await store.delete(recordKey(id));
        await events.publish(CLOSED_TOPIC, JSON.stringify({ id, by: instanceId }));
      },
    });
    const server = createMcpServer({
      services,
      logger,
      publicUrl: options.publicUrl,
      version: options.version,
      documents,
      waitMs,
      stopping: stopping.signal,
    });
    const session: HeldSession = { transport, server, events: eventStore, lastUsed: Date.now(), exchanges: 0, renewed: Date.now() };
    if (fresh) {
      server.server.oninitialized = () => {
        const info = server.server.getClientVersion();
        const capabilities = server.server.getClientCapabilities();
        if (!info || !capabilities) return;
        void store
          .update<SessionRecord>(recordKey(id), (record) => record && { ...record, client: { info, capabilities } })
          .catch((err: unknown) => logger.warn({ err }, 'could not record the MCP client of a session'));
      };
    }
    // the client's mistakes (a wrong Accept, an unknown session): answered by the transport, not ours to log louder
    transport.onerror = (err) => logger.debug({ err, mcpSession: id }, 'MCP transport refused a request');
    transport.onclose = () => {
      if (held.get(id) === session) held.delete(id);
    };
    held.set(id, session);
    await server.connect(transport);
    return session;
  };

  /** A session another instance opened (or this one let go), from its record; undefined when there is none. */
  const takeOver = (id: string, request: Request): Promise<HeldSession | undefined> => {
    let pending = takeovers.get(id);
    if (pending) return pending;
    pending = (async () => {
      const record = await store.get<SessionRecord>(recordKey(id));
      if (!record) return undefined;
      if (!(await makeRoom()))
        throw new ServiceError(503, `This instance holds ${maxSessions} MCP sessions, its most, all in use: try again shortly`);
      const session = await hold(id, false);
      try {
        return await initialize(session, id, record, request);
      } catch (error) {
        await session.transport.close();
        throw error;
      }
    })().finally(() => takeovers.delete(id));
    takeovers.set(id, pending);
    return pending;
  };

  /**
   * `session` (new here) initialized as its client once did it: its initialize request (the version the client now
   * speaks, its record's client) and initialized notification, answers discarded; undefined if the transport refuses.
   */
  const initialize = async (session: HeldSession, id: string, record: SessionRecord, request: Request): Promise<HeldSession | undefined> => {
    const protocolVersion = request.headers.get('mcp-protocol-version') ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    const headers = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };
    const post = async (message: object, extra: Record<string, string> = {}): Promise<void> => {
      const init = { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(message) };
      await (await session.transport.handleRequest(new Request(endpointUrl, init))).text();
    };
    const clientInfo = record.client?.info ?? { name: 'unknown', version: '0' };
    await post({
      jsonrpc: '2.0',
      id: `takeover-${randomUUID()}`,
      method: 'initialize',
      params: { protocolVersion, capabilities: record.client?.capabilities ?? {}, clientInfo },
    });
    if (session.transport.sessionId !== id) {
      await session.transport.close();
      return undefined;
    }
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': protocolVersion });
    logger.info({ mcpSession: id }, 'MCP session taken over from the store');
    return session;
  };

  /** A new session: counted against the caller's MCP session limit (every request without a session id is a try). */
  const open = async (request: Request, client: string): Promise<Response> => {
    try {
      await services.limits.mcpSessions.consume(client);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      return rpcError(
        error.status,
        -32000,
        error.message,
        error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) },
      );
    }
    if (!(await makeRoom())) return rpcError(503, -32000, `This instance holds ${maxSessions} MCP sessions, its most, all in use: try again shortly`);
    const session = await hold(randomUUID(), true);
    let response: Response | undefined;
    try {
      response = await session.transport.handleRequest(request);
      return response;
    } finally {
      // not an initialize request (the transport said why), or a failure: nothing to keep
      if (response === undefined || session.transport.sessionId === undefined) await session.transport.close();
    }
  };

  /** One exchange of a session held here. */
  const serve = async (session: HeldSession, id: string, request: Request, outgoing: ServerResponse): Promise<Response> => {
    const post = request.method === 'POST';
    session.exchanges++;
    if (post) calls++;
    outgoing.once('close', () => {
      session.exchanges--;
      if (post) calls--;
      session.lastUsed = Date.now();
    });
    session.lastUsed = Date.now();
    if (session.lastUsed - session.renewed > RENEW_AFTER_MS) {
      session.renewed = session.lastUsed;
      void store.update<SessionRecord>(recordKey(id), (record) => record, RECORD_TTL_MS).catch(() => undefined);
    }
    const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null;
    const resumed = lastEventId === null ? undefined : await session.events.stateOf(lastEventId);
    const response = await session.transport.handleRequest(request);
    return resumed && (resumed.sentElsewhere || resumed.answered) ? endingAfter(response, REPLAYED_STREAM_MS) : response;
  };

  const exchange = async (request: Request, incoming: IncomingMessage, outgoing: ServerResponse): Promise<Response> => {
    const client = clientKeyOf((incoming as IncomingMessage & { ip?: string }).ip);
    return asCaller({ client }, async () => {
      try {
        const id = request.headers.get('mcp-session-id');
        if (id === null) {
          if (request.method !== 'POST')
            return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (POST initialize opens a session)');
          return await open(request, client);
        }
        const session = held.get(id) ?? (await takeOver(id, request));
        if (!session) return rpcError(404, -32001, 'Session not found: it ended or expired; open a new one with initialize');
        return await serve(session, id, request, outgoing);
      } catch (error) {
        if (error instanceof ServiceError && error.status < 500) return rpcError(error.status, -32000, error.message);
        logger.error({ err: error }, 'MCP exchange failed');
        return error instanceof ServiceError ? rpcError(error.status, -32603, error.message) : rpcError(500, -32603, 'Internal error');
      }
    });
  };

  const listener = getRequestListener((request, env) => exchange(request, env.incoming as IncomingMessage, env.outgoing as ServerResponse), {
    overrideGlobalObjects: false,
  });

  // a session ended on another instance ends here too
  const unsubscribe = events.subscribe(CLOSED_TOPIC, (message) => {
    try {
      const { id, by } = JSON.parse(message) as { id?: unknown; by?: unknown };
      if (typeof id === 'string' && by !== instanceId) void held.get(id)?.transport.close();
    } catch {
      // not a notice of ours
    }
  });
  const sweeper = setInterval(
    () => {
      const before = Date.now() - idleMs;
      for (const session of [...held.values()]) if (session.exchanges === 0 && session.lastUsed < before) void session.transport.close();
    },
    Math.min(idleMs, 60_000),
  ).unref();

  return {
    mount(served) {
      api = served;
      return (req, res) => listener(req, res);
    },
    async close() {
      stopping.abort();
      clearInterval(sweeper);
      unsubscribe();
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (calls > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await Promise.all([...held.values()].map((session) => session.transport.close()));
    },
    get size() {
      return held.size;
    },
  };
}
