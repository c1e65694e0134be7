// The express application: the route table (every endpoint once, with its docs and policies), from which the
// express routes, the OpenAPI document and the CORS and cache headers are all derived; shared middleware once, and
// what a route needs of its own (its headers, its rate limit, its body parser) in that route's chain.
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ChainGateway } from '../chain/gateway.js';
import { A2A_PATH, DISCOVERY_PATH } from '../core/endpoints.js';
import { Metrics } from '../metrics.js';
import type { AgentQueryService } from '../services/agent-queries.js';
import type { Services } from '../services/index.js';
import type { LimitRule } from '../services/rate-limits.js';
import type { OnboardingFacts } from './llms-txt.js';
import { otherMethods, serverWide } from './middleware/allow.js';
import { unknownPathCors } from './middleware/cors.js';
import { edge, routeHeaders } from './middleware/edge.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { everyRequest } from './middleware/every-request.js';
import { httpMetrics } from './middleware/metrics.js';
import { perClientLimit } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { noStoreOnErrors } from './middleware/security.js';
import { type OpenApiDocument, openApiDocument } from './openapi/document.js';
import { allowOf, BODY_LIMIT, expressPath, type Route } from './route.js';
import { A2A_RPC_METHODS, type A2aHttpHandlers, a2aRoutes } from './routes/a2a.js';
import { aaRoutes } from './routes/aa.js';
import { credentialRoutes } from './routes/credentials.js';
import { demoRoutes } from './routes/demo.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { jwksRoutes } from './routes/jwks.js';
import { keyDirectoryRoutes } from './routes/key-directory.js';
import { type McpMount, mcpRoutes } from './routes/mcp.js';
import { type MetricsAccess, metricsRoutes } from './routes/metrics.js';
import { onboardingRoutes } from './routes/onboarding.js';
import { queryRoutes } from './routes/queries.js';
import { registrationRoutes } from './routes/registration.js';
import { scanPageRoutes } from './routes/scan-page.js';
import { sessionRoutes } from './routes/sessions.js';
import { segmentRoutes } from './segment-routers.js';
import { type ServiceEndpoints, serviceEndpoints } from './service-catalogue.js';
import { SIGNING_SCHEMES } from './signing-schemes.js';

/** A limit's allowance per minute. */
const perMinute = (rule: LimitRule): number => Math.round((rule.limit * 60_000) / rule.windowMs);

export type { A2aHttpHandlers } from './routes/a2a.js';
export type { McpHttpHandler, McpMount, ServedApi } from './routes/mcp.js';

export interface AppDeps {
  chains: ChainGateway;
  services: Services;
  logger: Logger;
  version: string;
  /** Where request, RPC and cache metrics are counted (GET /metrics); default: a registry of this app's own. */
  metrics?: Metrics;
  /** The service's public base URL, the OpenAPI document's server; default "/" (relative to the document). */
  publicUrl?: string;
  /** The A2A agent's handlers (card, JSON-RPC); absent: those paths answer 404 like any unknown path. */
  a2a?: A2aHttpHandlers;
  /** The MCP server, mounted with the OpenAPI document served here; absent: its path answers 404 like any unknown path. */
  mcp?: McpMount;
  /** GET /metrics here: open (default), behind a bearer token, or `false` when a listener of its own serves it. */
  metricsEndpoint?: MetricsAccess | false;
}

/** Tag descriptions of the OpenAPI document, in display order. */
const API_TAGS = [
  { name: 'Registration', description: 'Registration sessions: open, follow, export the key' },
  { name: 'Other sessions', description: 'Deregistration, proof refresh and identify sessions: open, follow' },
  { name: 'Public queries', description: 'What anyone may ask about an agent, without authentication' },
  {
    name: 'Discovery',
    description: "Well-known documents: service discovery, ERC-8004 registration file, agent card redirect, the service's signing keys",
  },
  { name: 'Credentials', description: 'The human-backed-agent credential (SD-JWT VC) and its status lists' },
  { name: 'A2A', description: 'Agent-to-agent JSON-RPC endpoint (A2A v1.0 and v0.3)' },
  { name: 'Demo', description: 'Agents use their identity: signed agent requests checked against the registry' },
  { name: 'Account abstraction', description: 'ERC-4337 bundler and paymaster calls through the service, for pages of allowed origins' },
  { name: 'Service', description: 'Health, metrics and this documentation' },
];

/** Every endpoint of the service, in the order express tries them. */
export function routeTable(deps: AppDeps, metrics: Metrics, extraRoutes: readonly Route[] = []): Route[] {
  const routes: Route[] = [
    ...(deps.a2a ? a2aRoutes(deps.a2a, deps.services.limits.agentMessages, deps.services.streams) : []),
    // the MCP server reads the document when a client asks for it, by then built
    ...(deps.mcp ? mcpRoutes(deps.mcp({ openApi: () => documentOf(), discovery: () => discoveryOf() }), deps.services.streams) : []),
    ...healthRoutes(
      deps.chains,
      deps.version,
      deps.services.storeHealth,
      () => deps.services.paymasterDeposits.check(),
      () => deps.services.queries.indexing(),
    ),
    ...registrationRoutes(deps.services.registration),
    ...sessionRoutes(deps.services),
    ...scanPageRoutes(deps.services),
    ...queryRoutes(deps.services.queries, () => discoveryOf()),
    ...jwksRoutes(deps.services.signingKeys),
    ...credentialRoutes(deps.services),
    ...keyDirectoryRoutes(deps.services),
    ...demoRoutes(deps.services),
    ...aaRoutes(deps.services.aa),
    ...(deps.metricsEndpoint === false ? [] : metricsRoutes(metrics, deps.metricsEndpoint)),
    ...extraRoutes,
  ];
  const base = (deps.publicUrl ?? '').replace(/\/+$/, '');
  let endpoints: ServiceEndpoints | undefined;
  const endpointsOf = (): ServiceEndpoints => (endpoints ??= serviceEndpoints(all, API_TAGS, base));
  /** The discovery document: the services' part, and where everything is and how to sign, from the route table. */
  const discoveryOf = () => ({ ...deps.services.queries.discovery(), endpoints: endpointsOf(), signingSchemes: [...SIGNING_SCHEMES] });
  const facts = (): OnboardingFacts => {
    const discovery = deps.services.queries.discovery() as ReturnType<AgentQueryService['discovery']> & { mcp?: { endpoint?: string } };
    return {
      title: documentOf().info.title,
      summary: documentOf().info.description ?? '',
      discoveryUrl: `${base}${DISCOVERY_PATH}`,
      endpoints: endpointsOf(),
      skills: deps.a2a?.skills ?? [],
      signingSchemes: SIGNING_SCHEMES,
      limits: {
        bodyLimit: BODY_LIMIT,
        sessionsPerMinute: perMinute(deps.services.limits.sessionCreation.rule),
        agentMessagesPerMinute: perMinute(deps.services.limits.agentMessages.rate.rule),
        sessionTtlMs: discovery.sessionTtlMs,
      },
      ...(discovery.mcp?.endpoint ? { mcpEndpoint: discovery.mcp.endpoint } : {}),
    };
  };
  let document: OpenApiDocument | undefined;
  const documentOf = (): OpenApiDocument =>
    (document ??= openApiDocument(
      all.filter((route) => !route.undocumented),
      {
        title: 'Agent Identity Registry',
        version: deps.version,
        publicUrl: deps.publicUrl ?? '/',
        description: 'Registers AI agents bound to a human through an on-chain proof of human, and answers questions about them.',
        tags: API_TAGS,
      },
    ));
  const all = [...routes, ...onboardingRoutes(facts, documentOf), ...docsRoutes(documentOf)];
  // built now, so an inconsistent description fails at start rather than at the first GET /openapi.json
  documentOf();
  return all;
}

/** The parts of the shared middleware stack, by name (benchmarks build the app without one to see what it costs). */
export const STACK_PARTS = ['metrics', 'request-log', 'edge', 'route-edge', 'json-body', 'etag'] as const;
export type StackPart = (typeof STACK_PARTS)[number];

/** For benchmarks: routes added after the table's, and parts of the stack left out. */
export interface AppTuning {
  extraRoutes?: readonly Route[];
  without?: readonly StackPart[];
}

/**
 * The app, on express's own router: first, for every request, one middleware for metrics, the request log and the
 * edge (security headers, Host check); then one express route per path of the table, in the table's order (on a router per first
 * path segment: segment-routers.ts), each method with its own chain (its template, CORS and cache headers, its rate limit, a body parser only where it takes a body, its
 * handler), then the path's answer to the methods it lacks (405 with Allow, OPTIONS). What no route answered gets
 * the CORS of the nearest route above its path, then the JSON 404.
 */
export function createApp(deps: AppDeps, tuning: AppTuning = {}): Express {
  const metrics = deps.metrics ?? new Metrics();
  const routes = routeTable(deps, metrics, tuning.extraRoutes);
  const on = (part: StackPart): boolean => !tuning.without?.includes(part);
  const app = express();
  app.disable('x-powered-by');
  // evaluated only where a route reads req.ip (the rate limits), not per request
  app.set('trust proxy', 'loopback');
  // express's weak ETag (a hash of the body) lets a client revalidate any GET; a route that knows its version
  // sets its own ETag, and express then skips the hash
  if (!on('etag')) app.set('etag', false);
  noStoreOnErrors(app.response);
  // counted and logged first, so that the edge's own refusals are too
  app.use(
    everyRequest({
      ...(on('metrics') ? { metrics: httpMetrics(metrics, { rpc: { route: A2A_PATH, methods: A2A_RPC_METHODS } }) } : {}),
      ...(on('request-log') ? { log: requestLog(deps.logger) } : {}),
      ...(on('edge') ? { edge } : {}),
    }),
  );

  const limits: Record<NonNullable<Route['limit']>, RequestHandler> = {
    'session-creation': perClientLimit(deps.services.limits.sessionCreation),
    'agent-messages': perClientLimit(deps.services.limits.agentMessages.rate),
  };
  const text = express.text({ type: () => true, limit: BODY_LIMIT });
  const json = express.json({ limit: BODY_LIMIT });
  // Handlers that read their own body (A2A's JSON-RPC) or need its exact text (signed requests) get it as they
  // want it; every other POST is parsed as JSON, so a malformed body is a 400 wherever a body is taken. GETs and
  // paths of no route never read one. A route with a lower limit of its own gets a parser with it.
  const parserOf = (route: Route): RequestHandler | undefined => {
    if (route.ownBody || route.method !== 'post' || (!route.textBody && !on('json-body'))) return undefined;
    if (route.bodyLimit === undefined) return route.textBody ? text : json;
    return route.textBody ? express.text({ type: () => true, limit: route.bodyLimit }) : express.json({ limit: route.bodyLimit });
  };
  const byPath = new Map<string, Route[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const routeOf = segmentRoutes(app, [...byPath.keys()]);
  for (const [template, own] of byPath) {
    const path = expressPath(template);
    const route = routeOf(template);
    for (const one of own) {
      const parser = parserOf(one);
      route[one.method](
        ...(on('route-edge') ? [routeHeaders(one, path)] : []),
        ...(one.limit ? [limits[one.limit]] : []),
        ...(parser ? [parser] : []),
        one.handler,
      );
    }
    route.all(otherMethods(allowOf(own.map((one) => one.method)), own[0]?.cors));
  }

  // what no route answered: the CORS of its path, an OPTIONS * of the server; then every answer is JSON: an unknown
  // path anywhere is a 404 {error}, never express's HTML page
  app.use(unknownPathCors(routes));
  app.use(serverWide);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
