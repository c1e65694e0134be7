// Builds the use cases from their ports; shared by the composition root and the tests.
import type { ChainGateway } from '../chain/gateway.js';
import type { NetworkName } from '../core/networks.js';
import { Metrics } from '../metrics.js';
import { SessionRepository } from '../sessions/session-repository.js';
import { SessionTokens } from '../sessions/session-token.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { AgentQueryService } from './agent-queries.js';
import { DeregistrationService } from './deregistration.js';
import { IdentifyService } from './identify.js';
import { RefreshService } from './refresh.js';
import { RegistrationService } from './registration.js';

export interface ServiceOptions {
  chains: ChainGateway;
  store: KeyValueStore;
  sessionSecret: Uint8Array;
  publicUrl: string;
  deepLinkScheme: string;
  appName: string;
  clock?: Clock;
  /** Where cache hits and misses are counted; default: a registry of the services' own. */
  metrics?: Metrics;
  /** Registry log polling (cache invalidation, agents-by-human); default 1 s for an external RPC, 200 ms embedded. */
  eventPollIntervalMs?: number;
  /** Failed log polls (retried at the next interval), e.g. to log them. */
  onFollowerError?: (network: NetworkName, error: unknown) => void;
}

export interface Services {
  registration: RegistrationService;
  deregistration: DeregistrationService;
  refresh: RefreshService;
  identify: IdentifyService;
  /** Public queries; start() / stop() run its registry log followers. */
  queries: AgentQueryService;
}

export function createServices(options: ServiceOptions): Services {
  const clock = options.clock ?? Date.now;
  const tokens = new SessionTokens(options.sessionSecret, clock);
  const sessions = new SessionRepository(options.store, clock);
  const flowDeps = {
    chains: options.chains,
    sessions,
    tokens,
    clock,
    publicUrl: options.publicUrl,
    deepLinkScheme: options.deepLinkScheme,
    appName: options.appName,
  };
  return {
    registration: new RegistrationService(flowDeps),
    deregistration: new DeregistrationService(flowDeps),
    refresh: new RefreshService(flowDeps),
    identify: new IdentifyService(flowDeps),
    queries: new AgentQueryService({
      chains: options.chains,
      metrics: options.metrics ?? new Metrics(),
      clock,
      publicUrl: options.publicUrl,
      appName: options.appName,
      ...(options.eventPollIntervalMs !== undefined ? { eventPollIntervalMs: options.eventPollIntervalMs } : {}),
      ...(options.onFollowerError ? { onFollowerError: options.onFollowerError } : {}),
    }),
  };
}
