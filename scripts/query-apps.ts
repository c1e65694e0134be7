// What the query profile uses: the real app (createApp with the real services, the A2A agent included, behind the
// response cache as main.ts serves it) over a local chain with one registered agent, listening on loopback in this
// process, plus a trivial route behind the app's whole middleware stack. It runs the sources (the profile reads their
// names), or the build in dist/ as `npm start` does. (npm run bench:queries measures the started service itself.)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createA2aAgent } from '../src/a2a/agent.js';
import { ChainGateway, createNetworkGateway } from '../src/chain/gateway.js';
import { type AppTuning, createApp } from '../src/http/app.js';
import { ExpressMessages } from '../src/http/express-messages.js';
import { ResponseCache } from '../src/http/response-cache.js';
import type { Route } from '../src/http/route.js';
import { createLogger, logDestination } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import type { AgentQueryService } from '../src/services/agent-queries.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { type LocalSystem, registerLinkedAgent, startLocalSystem } from './local-system.js';

import { CHAIN_ID } from './query-requests.js';

export { queryRequests } from './query-requests.js';
export const REFERENCE_PATH = '/ref';
const REFERENCE_BODY = { ok: true, service: 'reference' };

/**
 * The trivial route as an entry of the route table, with the policies of the agent reads (public CORS, one-second
 * cache), so that "behind the middleware" costs what verify's stack costs, without the query.
 */
const referenceRoute: Route = {
  method: 'get',
  path: REFERENCE_PATH,
  summary: 'Benchmark reference',
  tags: ['Service'],
  cors: 'public',
  cache: 'agent',
  undocumented: true,
  responses: { 200: { description: 'A constant' } },
  handler: (_req, res) => {
    res.json(REFERENCE_BODY);
  },
};

export interface Listening {
  server: Server;
  base: string;
}

export const listen = async (listener: RequestListener, options: ServerOptions = {}): Promise<Listening> => {
  const server = createServer(options, listener).listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

export interface Instance extends Listening {
  metrics: Metrics;
}

export interface InstanceOptions {
  /** Its query service's log followers run (agent reads cached, as in production); else every read goes to the chain. */
  cached: boolean;
  tuning?: AppTuning;
  /** An app in this process runs the build in dist/ (as `npm start` does) instead of the sources. */
  built?: boolean;
}

export interface QueryApps {
  system: LocalSystem;
  agentId: bigint;
  /** A listening app in this process. */
  instance(options: InstanceOptions): Promise<Instance>;
  stop(): Promise<void>;
}

/** The service's code an instance is made of: the sources (in this process, through tsx), or the build in dist/. */
interface ServiceCode {
  createApp: typeof createApp;
  ExpressMessages: typeof ExpressMessages;
  ResponseCache: typeof ResponseCache;
  createServices: typeof createServices;
  createA2aAgent: typeof createA2aAgent;
  Metrics: typeof Metrics;
  SqliteStore: typeof SqliteStore;
  createLogger: typeof createLogger;
  logDestination: typeof logDestination;
  ChainGateway: typeof ChainGateway;
  createNetworkGateway: typeof createNetworkGateway;
}

const SOURCES: ServiceCode = {
  createApp,
  ExpressMessages,
  ResponseCache,
  createServices,
  createA2aAgent,
  Metrics,
  SqliteStore,
  createLogger,
  logDestination,
  ChainGateway,
  createNetworkGateway,
};

/**
 * The compiled service (`npm run build`, as `npm start` runs it): what an isolated process serves, so that the
 * figures are those of the JavaScript that runs in production, not of tsx's transform of the sources (which names
 * every closure as it is made, per request).
 */
async function builtCode(): Promise<ServiceCode> {
  const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
  const [app, messages, responseCache, services, agent, metrics, sqlite, logger, gateway] = await Promise.all([
    import(dist('http/app.js')) as Promise<typeof import('../src/http/app.js')>,
    import(dist('http/express-messages.js')) as Promise<typeof import('../src/http/express-messages.js')>,
    import(dist('http/response-cache.js')) as Promise<typeof import('../src/http/response-cache.js')>,
    import(dist('services/index.js')) as Promise<typeof import('../src/services/index.js')>,
    import(dist('a2a/agent.js')) as Promise<typeof import('../src/a2a/agent.js')>,
    import(dist('metrics.js')) as Promise<typeof import('../src/metrics.js')>,
    import(dist('store/sqlite-store.js')) as Promise<typeof import('../src/store/sqlite-store.js')>,
    import(dist('logger.js')) as Promise<typeof import('../src/logger.js')>,
    import(dist('chain/gateway.js')) as Promise<typeof import('../src/chain/gateway.js')>,
  ]);
  return {
    createApp: app.createApp,
    ExpressMessages: messages.ExpressMessages,
    ResponseCache: responseCache.ResponseCache,
    createServices: services.createServices,
    createA2aAgent: agent.createA2aAgent,
    Metrics: metrics.Metrics,
    SqliteStore: sqlite.SqliteStore,
    createLogger: logger.createLogger,
    logDestination: logger.logDestination,
    ChainGateway: gateway.ChainGateway,
    createNetworkGateway: gateway.createNetworkGateway,
  };
}

/** The service's own logger (src/logger.ts), writing nowhere. */
const benchLogger = (code: ServiceCode, level: string): Logger => code.createLogger(level, code.logDestination('/dev/null'));

/** The real app with the real services and the A2A agent, over `chains`, listening on loopback. */
async function startInstance(
  code: ServiceCode,
  gateway: LocalSystem['gateway'],
  logger: Logger,
  { cached, tuning = {} }: InstanceOptions,
  dataRoot: string,
) {
  const { createApp, ExpressMessages, ResponseCache, createServices, createA2aAgent, Metrics, SqliteStore } = code;
  const metrics = new Metrics();
  const chains = gateway(() => metrics.rpcRequest('testnet'));
  // the store the service keeps by default (sqlite, in a directory of its own that goes with the process)
  const store = new SqliteStore(join(mkdtempSync(join(dataRoot, 'app-')), 'store.sqlite'));
  const publicUrl = 'http://127.0.0.1';
  const secret = randomBytes(32);
  const services = createServices({
    chains,
    store,
    sessionSecret: secret,
    publicUrl,
    deepLinkScheme: 'selfapp',
    appName: 'bench',
    metrics,
    // one load generator is one client: its messages are counted as any client's are, but never refused
    agentMessages: { perMinute: 1_000_000_000 },
  });
  if (cached) await services.queries.start();
  const a2a = createA2aAgent(services, { publicUrl, version: 'bench', store, secret, pushPolicy: { allowPrivateNetworks: false }, logger });
  const app = createApp(
    { chains, services, logger, version: 'bench', metrics, publicUrl, a2a },
    { ...tuning, extraRoutes: [...(tuning.extraRoutes ?? []), referenceRoute] },
  );
  const responses = new ResponseCache({ maxEntries: 10_000, metrics, logger });
  services.queries.onChange((key) => responses.drop(key));
  // requests built with the app's prototypes, as main.ts builds them
  const messages = new ExpressMessages();
  messages.adopt(app);
  const server = await listen(responses.front(app), { IncomingMessage: messages.IncomingMessage, ServerResponse: messages.ServerResponse });
  return { ...server, metrics, queries: services.queries, store };
}

/** A local chain with one registered agent; the apps log every request at `logLevel` to /dev/null, as in production. */
export async function startQueryApps(logLevel: string): Promise<QueryApps> {
  const system = await startLocalSystem(CHAIN_ID);
  const servers: Server[] = [];
  const queryServices: AgentQueryService[] = [];
  const stores: SqliteStore[] = [];
  // the instances' stores, removed with the run
  const dataRoot = mkdtempSync(join(tmpdir(), 'query-apps-'));
  const { agentId } = await registerLinkedAgent(system);
  const logger = benchLogger(SOURCES, logLevel);
  const instance = async (options: InstanceOptions): Promise<Instance> => {
    const code = options.built ? await builtCode() : SOURCES;
    const started = await startInstance(code, system.gateway, options.built ? benchLogger(code, logLevel) : logger, options, dataRoot);
    servers.push(started.server);
    queryServices.push(started.queries);
    stores.push(started.store);
    return started;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(queryServices.map((q) => q.stop().catch(() => undefined)));
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    await system.chain.stop();
    await Promise.all(stores.map((store) => store.close()));
    rmSync(dataRoot, { recursive: true, force: true });
  };
  return { system, agentId, instance, stop };
}
