// The service's express app over test chains, built the way the composition root builds it (services, then the
// REST app, the A2A agent and the MCP server side by side), with an in-memory store and (optionally) a controlled clock.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { type A2aAgent, type A2aAgentOptions, createA2aAgent } from '../../src/a2a/agent.js';
import { skills } from '../../src/a2a/agent-card.js';
import { intentChatAgent } from '../../src/a2a/chat-agent.js';
import type { ChainGateway } from '../../src/chain/gateway.js';
import { type AppDeps, createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { createMcpEndpoint, type McpEndpoint, type McpEndpointOptions } from '../../src/mcp/endpoint.js';
import { Metrics } from '../../src/metrics.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services/index.js';
import { InProcessEventBus } from '../../src/store/event-bus.js';
import type { Clock, KeyValueStore } from '../../src/store/key-value-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';

export interface TestApp {
  app: Express;
  services: Services;
  a2a: A2aAgent;
  /** The MCP endpoint (close() it when done: it holds sessions and a sweep timer). */
  mcp: McpEndpoint;
  store: KeyValueStore;
  sessionSecret: Uint8Array;
  metrics: Metrics;
}

export interface TestAppOptions {
  store?: KeyValueStore;
  sessionSecret?: Uint8Array;
  clock?: Clock;
  publicUrl?: string;
  version?: string;
  /** Default: a registry of this app's own. */
  metrics?: Metrics;
  pushPolicy?: A2aAgentOptions['pushPolicy'];
  /** Session watching (A2A tasks): status read interval and most sessions at once. */
  sessionWatch?: ServiceOptions['sessionWatch'];
  /** Open streams per client, per task or session, in all, and their longest life. */
  streamLimits?: ServiceOptions['streamLimits'];
  /** Where the app and the A2A agent log; default: silent. */
  logger?: Logger;
  /** GET /metrics on the app: open (default), behind a token, or not served. */
  metricsEndpoint?: AppDeps['metricsEndpoint'];
  /** How long a reported transaction may stay unknown to the chain before its session fails. */
  reportedTxTimeoutMs?: number;
  /** A2A push notifications: how hosts resolve, waits between attempts. */
  push?: Pick<A2aAgentOptions, 'pushResolver' | 'pushRetryDelaysMs'>;
  /** How often an open A2A stream gets a keep-alive comment (ms). */
  streamKeepAliveMs?: number;
  /** The ERC-4337 contracts per network that discovery names (default: none). */
  accountAbstraction?: ServiceOptions['accountAbstraction'];
  /** Local paymasters' deposits: under this a deposit is low, and onLowPaymasterDeposit hears of it. */
  paymasterLowDeposit?: bigint;
  onLowPaymasterDeposit?: ServiceOptions['onLowPaymasterDeposit'];
  /** Messages to the agent: rate per client, sizes (default: the service's). */
  agentMessages?: ServiceOptions['agentMessages'];
  /** How long and how much chat history is kept (default: the service's). */
  chatHistory?: ServiceOptions['chatHistory'];
  /** How long A2A tasks that follow no session are kept (default: the service's). */
  taskLifetimes?: A2aAgentOptions['taskLifetimes'];
  /** Most blocks per eth_getLogs while the followers backfill (default: the service's). */
  maxLogRange?: bigint;
  /** Time between the log followers' polls (default: the service's). */
  eventPollIntervalMs?: number;
  /** The service's signing keys (default: generated into the store). */
  signingKeys?: ServiceOptions['signingKeys'];
  /** The events port A2A task changes go through (instances sharing a store share it; default: the agent's own). */
  events?: A2aAgentOptions['events'];
  /** Signed requests per window per human, shared by the human's agents (HUMAN_QUOTA_*; default: none). */
  humanQuota?: ServiceOptions['humanQuota'];
  /** The MCP endpoint: how long tools follow sessions, this instance's id (default: random), its limits. */
  mcp?: Partial<Pick<McpEndpointOptions, 'waitMs' | 'instanceId' | 'maxSessions' | 'idleMs' | 'retryIntervalMs'>>;
}

export function testApp(chains: ChainGateway, options: TestAppOptions = {}): TestApp {
  const store = options.store ?? new MemoryStore(options.clock);
  const sessionSecret = options.sessionSecret ?? randomBytes(32);
  const metrics = options.metrics ?? new Metrics();
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:3000';
  const version = options.version ?? '0.0.0-test';
  const logger = options.logger ?? createLogger('silent');
  const services = createServices({
    chains,
    store,
    sessionSecret,
    publicUrl,
    metrics,
    deepLinkScheme: 'selfapp',
    appName: 'Agent Identity Registry',
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.sessionWatch ? { sessionWatch: options.sessionWatch } : {}),
    ...(options.maxLogRange !== undefined ? { maxLogRange: options.maxLogRange } : {}),
    ...(options.eventPollIntervalMs !== undefined ? { eventPollIntervalMs: options.eventPollIntervalMs } : {}),
    ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}),
    ...(options.reportedTxTimeoutMs !== undefined ? { reportedTxTimeoutMs: options.reportedTxTimeoutMs } : {}),
    chatAgent: intentChatAgent,
    ...(options.accountAbstraction ? { accountAbstraction: options.accountAbstraction } : {}),
    ...(options.paymasterLowDeposit !== undefined ? { paymasterLowDeposit: options.paymasterLowDeposit } : {}),
    ...(options.onLowPaymasterDeposit ? { onLowPaymasterDeposit: options.onLowPaymasterDeposit } : {}),
    ...(options.agentMessages ? { agentMessages: options.agentMessages } : {}),
    ...(options.chatHistory ? { chatHistory: options.chatHistory } : {}),
    ...(options.humanQuota ? { humanQuota: options.humanQuota } : {}),
    ...(options.signingKeys ? { signingKeys: options.signingKeys } : {}),
  });
  const a2a = createA2aAgent(services, {
    publicUrl,
    version,
    store,
    secret: sessionSecret,
    pushPolicy: options.pushPolicy ?? { allowPrivateNetworks: false },
    logger,
    ...options.push,
    ...(options.streamKeepAliveMs !== undefined ? { streamKeepAliveMs: options.streamKeepAliveMs } : {}),
    ...(options.taskLifetimes ? { taskLifetimes: options.taskLifetimes } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
  const mcp = createMcpEndpoint({
    services,
    store,
    events: options.events ?? new InProcessEventBus(),
    instanceId: randomBytes(8).toString('hex'),
    publicUrl,
    version,
    logger,
    a2aSkills: skills(),
    ...options.mcp,
  });
  const app = createApp({
    chains,
    services,
    logger,
    version,
    metrics,
    publicUrl,
    a2a,
    mcp: mcp.mount,
    ...(options.metricsEndpoint !== undefined ? { metricsEndpoint: options.metricsEndpoint } : {}),
  });
  return { app, services, a2a, mcp, store, sessionSecret, metrics };
}
