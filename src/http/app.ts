// The express application: shared middleware once, then one router per resource.
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { RegistryAgentExecutor } from '../a2a/executor.js';
import type { PushTargetPolicy } from '../a2a/push-destination.js';
import type { WebhookPushSender } from '../a2a/push-sender.js';
import { type A2aOptions, a2aDocs, a2aRoutes } from '../a2a/server.js';
import type { ChainGateway } from '../chain/gateway.js';
import { Metrics } from '../metrics.js';
import type { Services } from '../services/index.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { httpMetrics } from './middleware/metrics.js';
import { perIpLimit } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { cachePolicy, cors, securityHeaders } from './middleware/security.js';
import { openApiDocument } from './openapi/document.js';
import type { RouteDoc } from './openapi/route-doc.js';
import { docsDocs, docsRoutes } from './routes/docs.js';
import { healthDocs, healthRoutes } from './routes/health.js';
import { metricsDocs, metricsRoutes } from './routes/metrics.js';
import { queryDocs, queryRoutes } from './routes/queries.js';
import { registrationDocs, registrationRoutes } from './routes/registration.js';
import { sessionDocs, sessionRoutes } from './routes/sessions.js';
import { SESSION_CREATION_LIMIT } from './session-limit.js';

export interface AppDeps {
  chains: ChainGateway;
  services: Services;
  /** Where rate-limit counters live. */
  store: KeyValueStore;
  logger: Logger;
  version: string;
  clock?: Clock;
  /** Where request, RPC and cache metrics are counted (GET /metrics); default: a registry of this app's own. */
  metrics?: Metrics;
  /** The service's public base URL, the OpenAPI document's server; default "/" (relative to the document). */
  publicUrl?: string;
  /** The service secret (also the session tokens'): seals what must be kept encrypted at rest. */
  secret: Uint8Array;
  /** Where A2A push notifications may go; default: public https destinations only. */
  pushPolicy?: PushTargetPolicy;
  /** A2A tuning for tests: task polling, open-task cap, push resolver and retry waits. */
  a2a?: Pick<A2aOptions, 'pollIntervalMs' | 'maxOpenTasks' | 'pushResolver' | 'pushRetryDelaysMs'>;
}

/** Tag descriptions of the OpenAPI document, in display order. */
const API_TAGS = [
  { name: 'Registration', description: 'Registration sessions: open, follow, export the key' },
  { name: 'Other sessions', description: 'Deregistration, proof refresh and identify sessions: open, follow' },
  { name: 'Public queries', description: 'What anyone may ask about an agent, without authentication' },
  { name: 'Discovery', description: 'Well-known documents: service discovery, ERC-8004 registration file, agent card redirect' },
  { name: 'A2A', description: 'Agent-to-agent JSON-RPC endpoint (A2A v1.0 and v0.3)' },
  { name: 'Service', description: 'Health, metrics and this documentation' },
];

export { SESSION_CREATION_LIMIT } from './session-limit.js';

const A2A_EXECUTOR = 'a2aExecutor';
const A2A_PUSH = 'a2aPush';

/** The app's A2A executor, to stop its open tasks' session polling at shutdown. */
export const a2aExecutorOf = (app: Express): RegistryAgentExecutor | undefined => app.locals[A2A_EXECUTOR] as RegistryAgentExecutor | undefined;
/** The app's push notification sender, to let deliveries under way finish at shutdown. */
export const a2aPushOf = (app: Express): WebhookPushSender | undefined => app.locals[A2A_PUSH] as WebhookPushSender | undefined;

export function createApp(deps: AppDeps): Express {
  const metrics = deps.metrics ?? new Metrics();
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(httpMetrics(metrics));
  app.use(requestLog(deps.logger));
  app.use(securityHeaders());
  app.use(cors());
  app.use(cachePolicy());
  // The A2A SDK's handlers parse their own JSON-RPC bodies: mounted before express.json()
  const a2a = a2aRoutes(deps.services, {
    publicUrl: deps.publicUrl ?? 'http://localhost',
    version: deps.version,
    store: deps.store,
    secret: deps.secret,
    pushPolicy: deps.pushPolicy ?? { allowPrivateNetworks: false },
    logger: deps.logger,
    ...deps.a2a,
  });
  app.use(a2a.router);
  // open register / deregister tasks stop following their sessions when the server closes (main.ts)
  app.locals[A2A_EXECUTOR] = a2a.executor;
  app.locals[A2A_PUSH] = a2a.push;
  app.use(express.json({ limit: '200kb' }));

  const sessionLimit = perIpLimit({
    store: deps.store,
    name: 'session-creation',
    what: 'session creations',
    limit: SESSION_CREATION_LIMIT,
    windowMs: 60_000,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });

  app.use(healthRoutes(deps.chains, deps.version));
  app.use(registrationRoutes(deps.services.registration, sessionLimit));
  app.use(sessionRoutes(deps.services, sessionLimit));
  app.use(queryRoutes(deps.services.queries));
  app.use(metricsRoutes(metrics));

  // Every router's RouteDoc[]: the OpenAPI document covers exactly these (test/api/openapi.test.ts checks
  // that no route is missing).
  const routeDocs: RouteDoc[] = [...a2aDocs, ...healthDocs, ...registrationDocs, ...sessionDocs, ...queryDocs, ...metricsDocs, ...docsDocs];
  const document = openApiDocument(routeDocs, {
    title: 'Agent Identity Registry',
    version: deps.version,
    publicUrl: deps.publicUrl ?? '/',
    description: 'Registers AI agents bound to a human through an on-chain proof of human, and answers questions about them.',
    tags: API_TAGS,
  });
  app.use(docsRoutes(document));

  app.use('/api', notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
