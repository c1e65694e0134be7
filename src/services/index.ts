// Builds the use cases from their ports; shared by the composition root and the tests.
import { hkdfSync, randomBytes } from 'node:crypto';
import type { LocalAccount } from 'viem';
import { type AaProxyOptions, AaProxyService } from '../aa/aa-proxy.js';
import { DEFAULT_MINIMUM_DEPOSIT, type PaymasterOnChain } from '../aa/paymaster-deposit.js';
import { type LowDepositReport, PaymasterDeposits } from '../aa/paymaster-deposits.js';
import type { DemoVerifierGateway } from '../chain/demo-verifier-gateway.js';
import type { ChainGateway } from '../chain/gateway.js';
import { JWKS_PATH } from '../core/endpoints.js';
import { ServiceError } from '../core/errors.js';
import type { QuotaInput } from '../core/human-quota.js';
import type { NetworkName } from '../core/networks.js';
import { DemoAgentToAgentService } from '../demo/agent-to-agent.js';
import { DemoCensusService } from '../demo/census.js';
import { DemoChainVerifyService } from '../demo/chain-verify.js';
import { type ChatBackend, type ChatHistoryOptions, DEFAULT_CHAT_HISTORY, DemoChatService, externalChatBackend } from '../demo/chat.js';
import { DemoVerifyService } from '../demo/verify.js';
import { Metrics } from '../metrics.js';
import { DeregistrationService } from '../sessions/deregistration.js';
import { IdentifyService } from '../sessions/identify.js';
import { RefreshService } from '../sessions/refresh.js';
import { RegistrationService } from '../sessions/registration.js';
import { SessionRepository } from '../sessions/session-repository.js';
import { SessionTokens } from '../sessions/session-token.js';
import { SessionWatcher } from '../sessions/session-watch.js';
import { Sessions } from '../sessions/sessions.js';
import { WatchLeases } from '../sessions/watch-leases.js';
import { type EventBus, InProcessEventBus } from '../store/event-bus.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { AgentCredentialService } from './agent-credentials.js';
import { type AgentMessageLimitOptions, AgentMessageLimits, DEFAULT_AGENT_MESSAGE_LIMITS } from './agent-message-limits.js';
import type { AccountAbstractionContracts, AgentQueryOptions } from './agent-queries.js';
import { AgentQueryService } from './agent-queries.js';
import { CardSigner } from './card-signer.js';
import { CredentialStatus } from './credential-status.js';
import { KeyDirectories } from './key-directories.js';
import { MCP_SESSIONS, PUSH_CONFIG_WRITES, RateLimiter, SESSION_CREATION } from './rate-limits.js';
import { SignedRequestVerifier } from './signed-requests.js';
import { ServiceSigningKeys, type SigningKeys } from './signing-keys.js';
import { type StoreHealth, storeHealthProbe } from './store-health.js';
import { type StreamLimitRules, StreamLimits } from './stream-limits.js';

export interface ServiceOptions {
  chains: ChainGateway;
  store: KeyValueStore;
  /**
   * Notices between the instances sharing `store` (a session's record changed): Redis pub/sub when several run;
   * default in-process, for one instance. A failed publish is reported to `onEventError` (the watches' polls catch up).
   */
  events?: EventBus;
  onEventError?: (error: unknown) => void;
  /** This instance among those sharing `store` (which one follows each open A2A task); default a random id. */
  instanceId?: string;
  /** Agents whose reads and answers each network's cache holds (least recently used go first); default 10,000. */
  agentCacheSize?: number;
  sessionSecret: Uint8Array;
  /** The service's signing keys; default: generated into `store`, whose ring holds them (tests, one process). */
  signingKeys?: SigningKeys;
  publicUrl: string;
  deepLinkScheme: string;
  appName: string;
  clock?: Clock;
  /** Where cache hits and misses are counted; default: a registry of the services' own. */
  metrics?: Metrics;
  /** Registry log polling (cache invalidation, agents-by-human); default 1 s for an external RPC, 200 ms embedded. */
  eventPollIntervalMs?: number;
  /** Most blocks per eth_getLogs while backfilling (halved on refusals); default 50,000. */
  maxLogRange?: bigint;
  /** How long the stored agent index's writer lease outlives its last renewal (agent-queries.ts); default 15 s. */
  indexLeaseMs?: number;
  /** Opens the database a live network's agents-by-human index moves to (agent-queries.ts); default a temporary one. */
  indexDatabase?: AgentQueryOptions['indexDatabase'];
  /** Failed log polls (retried at the next interval), e.g. to log them. */
  onFollowerError?: (network: NetworkName, error: unknown) => void;
  /**
   * How long a transaction the identity app reports may stay unknown to the chain before its session fails;
   * default 60 s on embedded chains, 5 min on external RPCs (sessions/reported-transaction.ts).
   */
  reportedTxTimeoutMs?: number;
  /** Following open sessions (sessions/session-watch.ts): longest pause between status reads, most sessions at once. */
  sessionWatch?: { pollIntervalMs?: number; maxWatches?: number };
  /** Long-lived streams: open per client, per task or session, in all, and their longest life (stream-limits.ts). */
  streamLimits?: Partial<StreamLimitRules>;
  /** The @authority values RFC 9421 signatures may name; empty: loopback names only (SignedRequestVerifier). */
  signatureAuthorities?: readonly string[];
  /** Signed requests per window per human, over all of the human's agents and signed endpoints (SignedRequestVerifier). */
  humanQuota?: QuotaInput;
  /** The service's demo agent per network (POST /api/demo/agent-to-agent). */
  demoAgents?: Partial<Record<NetworkName, LocalAccount>>;
  /** The demo verifier contract per network with the relayer that sends to it (POST /api/demo/chain-verify). */
  demoVerifiers?: Partial<Record<NetworkName, DemoVerifierGateway>>;
  demoVerifiersEd25519?: Partial<Record<NetworkName, DemoVerifierGateway>>;
  /** The chat demo's built-in agent (the A2A agent's answers), made once the services exist. */
  chatAgent?: (services: Services) => ChatBackend;
  /** An external agent service for the chat demo instead (CHAT_AGENT_URL). */
  chatAgentUrl?: string;
  /** Messages to the agent (A2A messages, chat queries): per-client rate and sizes; default DEFAULT_AGENT_MESSAGE_LIMITS. */
  agentMessages?: Partial<AgentMessageLimitOptions>;
  /** How long and how much of a chat conversation is kept; default DEFAULT_CHAT_HISTORY. */
  chatHistory?: Partial<ChatHistoryOptions>;
  /**
   * The account-abstraction proxy: token secret, upstreams per network, origin rule, limits. Absent: no upstreams
   * (503) and a token secret of this process only.
   */
  aa?: AaProxyOptions;
  /** The ERC-4337 contracts per network, named by the discovery document (embedded chains: our own stack). */
  accountAbstraction?: Partial<Record<NetworkName, AccountAbstractionContracts>>;
  /** Wei under which a local paymaster's deposit is low (health, metrics, onLowPaymasterDeposit); default 10 native. */
  paymasterLowDeposit?: bigint;
  /** A local paymaster's deposit went under paymasterLowDeposit (once, until it is topped up). */
  onLowPaymasterDeposit?: (report: LowDepositReport) => void;
}

/** The per-client limits, each counted once whichever adapter a request comes through. */
export interface Limits {
  sessionCreation: RateLimiter;
  pushConfigWrites: RateLimiter;
  /** MCP sessions opened. */
  mcpSessions: RateLimiter;
  /** A2A messages and chat queries: one per-client rate, and their sizes. */
  agentMessages: AgentMessageLimits;
}

export interface Services {
  registration: RegistrationService;
  deregistration: DeregistrationService;
  refresh: RefreshService;
  identify: IdentifyService;
  /** Public queries; start() / stop() run its registry log followers. */
  queries: AgentQueryService;
  /** Every kind of session by token: status, opening under the creation limit. */
  sessions: Sessions;
  /** Follows open sessions until they end. */
  watcher: SessionWatcher;
  limits: Limits;
  /** The open streams (A2A, scan-page events) per client, per task or session, and in all. */
  streams: StreamLimits;
  /** Who signed a request, and whether that agent is backed by a human now. */
  signedRequests: SignedRequestVerifier;
  /** The key the service signs with, and the JWKS of the keys a verifier may still need. */
  signingKeys: SigningKeys;
  /** Signs cards and documents with the current key, and tells when that key changes; stop() at shutdown. */
  cardSigner: CardSigner;
  /** The human-backed-agent credential: issuance (SD-JWT VC) and its revocation (token status lists). */
  credentials: AgentCredentialService;
  credentialStatus: CredentialStatus;
  /** Ed25519 agents' Web Bot Auth key directories, with the signatures their agents publish. */
  keyDirectories: KeyDirectories;
  /** The demo endpoints' use cases. */
  demo: {
    verify: DemoVerifyService;
    census: DemoCensusService;
    agentToAgent: DemoAgentToAgentService;
    chainVerify: DemoChainVerifyService;
    chainVerifyEd25519: DemoChainVerifyService;
    chat: DemoChatService;
  };
  /** The account-abstraction proxy: tokens, and bundler and paymaster calls forwarded upstream. */
  aa: AaProxyService;
  /** Whether the store answers (the health endpoint shows it beside the chains). */
  storeHealth: () => Promise<StoreHealth>;
  /** The deposits of the paymasters the service runs itself (health, metrics, a warning when low). */
  paymasterDeposits: PaymasterDeposits;
}

export function createServices(options: ServiceOptions): Services {
  const clock = options.clock ?? Date.now;
  const tokens = new SessionTokens(options.sessionSecret, clock);
  const records = new SessionRepository(options.store, clock, {
    bus: options.events ?? new InProcessEventBus(),
    ...(options.onEventError ? { onPublishError: options.onEventError } : {}),
  });
  const flowDeps = {
    chains: options.chains,
    sessions: records,
    tokens,
    clock,
    publicUrl: options.publicUrl,
    deepLinkScheme: options.deepLinkScheme,
    appName: options.appName,
    ...(options.reportedTxTimeoutMs !== undefined ? { reportedTxTimeoutMs: options.reportedTxTimeoutMs } : {}),
  };
  const deregistration = new DeregistrationService(flowDeps);
  const refresh = new RefreshService(flowDeps);
  const identify = new IdentifyService(flowDeps);
  const signingKeys = options.signingKeys ?? new ServiceSigningKeys({ store: options.store, source: { kind: 'store' }, clock });
  const cardSigner = new CardSigner({ keys: signingKeys, jwksUrl: `${options.publicUrl}${JWKS_PATH}` });
  const queries = new AgentQueryService({
    chains: options.chains,
    metrics: options.metrics ?? new Metrics(),
    clock,
    publicUrl: options.publicUrl,
    appName: options.appName,
    signer: cardSigner,
    store: options.store,
    ...(options.instanceId ? { instanceId: options.instanceId } : {}),
    ...(options.agentCacheSize !== undefined ? { agentCacheSize: options.agentCacheSize } : {}),
    ...(options.accountAbstraction ? { accountAbstraction: options.accountAbstraction } : {}),
    ...(options.eventPollIntervalMs !== undefined ? { eventPollIntervalMs: options.eventPollIntervalMs } : {}),
    ...(options.maxLogRange !== undefined ? { maxLogRange: options.maxLogRange } : {}),
    ...(options.indexLeaseMs !== undefined ? { indexLeaseMs: options.indexLeaseMs } : {}),
    ...(options.indexDatabase ? { indexDatabase: options.indexDatabase } : {}),
    ...(options.onFollowerError ? { onFollowerError: options.onFollowerError } : {}),
  });
  const registration = new RegistrationService({
    ...flowDeps,
    registrationTransaction: (network, agentId) => queries.registrationTransaction(network, agentId),
  });
  // which instance writes each network's stored index, and where it stands, at each scrape
  options.metrics?.observeIndexWriters(() => queries.indexWriters());
  options.metrics?.observeIndexStorage(() => queries.indexStorage());
  const limits: Limits = {
    sessionCreation: new RateLimiter(options.store, SESSION_CREATION),
    pushConfigWrites: new RateLimiter(options.store, PUSH_CONFIG_WRITES),
    mcpSessions: new RateLimiter(options.store, MCP_SESSIONS),
    agentMessages: new AgentMessageLimits({ ...DEFAULT_AGENT_MESSAGE_LIMITS, ...options.agentMessages }),
  };
  const sessions = new Sessions(tokens, { register: registration, deregister: deregistration, refresh, identify }, limits.sessionCreation);
  const watcher = new SessionWatcher({
    sessions,
    registryActivity: (network, listener) => queries.onRegistryActivity(network, listener),
    sessionActivity: (sessionId, listener) => records.onChange(sessionId, listener),
    leases: new WatchLeases({ store: options.store, ...(options.instanceId ? { instanceId: options.instanceId } : {}) }),
    ...options.sessionWatch,
  });
  const signedRequests = new SignedRequestVerifier(queries, options.store, clock, options.signatureAuthorities ?? [], options.humanQuota);
  const credentialStatus = new CredentialStatus({ store: options.store, queries, signingKeys, publicUrl: options.publicUrl, clock });
  credentialStatus.start();
  const credentials = new AgentCredentialService({
    signedRequests,
    status: credentialStatus,
    signingKeys,
    chains: options.chains,
    publicUrl: options.publicUrl,
    pseudonymSecret: pseudonymSecretOf(options.sessionSecret),
    clock,
  });
  const demo = {
    verify: new DemoVerifyService(signedRequests, options.store),
    census: new DemoCensusService(signedRequests, options.store, queries, clock),
    agentToAgent: new DemoAgentToAgentService(signedRequests, queries, options.store, options.demoAgents ?? {}),
    chainVerify: new DemoChainVerifyService('secp256k1', signedRequests, queries, options.store, options.chains, options.demoVerifiers ?? {}),
    chainVerifyEd25519: new DemoChainVerifyService(
      'ed25519',
      signedRequests,
      queries,
      options.store,
      options.chains,
      options.demoVerifiersEd25519 ?? {},
    ),
  };
  let chat: ChatBackend | undefined;
  const chatBackend = (): ChatBackend => {
    chat ??= options.chatAgentUrl
      ? externalChatBackend(options.chatAgentUrl)
      : options.chatAgent
        ? options.chatAgent(services)
        : { reply: () => Promise.reject(new ServiceError(503, 'No chat agent here: the service was built without one (set CHAT_AGENT_URL)')) };
    return chat;
  };
  const services: Services = {
    registration,
    deregistration,
    refresh,
    identify,
    queries,
    sessions,
    watcher,
    limits,
    streams: new StreamLimits(options.streamLimits),
    signedRequests,
    signingKeys,
    cardSigner,
    credentials,
    credentialStatus,
    keyDirectories: new KeyDirectories(queries, options.store, clock),
    demo: {
      ...demo,
      chat: new DemoChatService(
        signedRequests,
        options.store,
        chatBackend,
        limits.agentMessages,
        { ...DEFAULT_CHAT_HISTORY, ...options.chatHistory },
        clock,
      ),
    },
    aa: new AaProxyService(options.store, options.aa ?? { tokenSecret: randomBytes(32) }, clock),
    storeHealth: storeHealthProbe(options.store),
    paymasterDeposits: new PaymasterDeposits({
      chains: options.chains,
      paymasters: Object.fromEntries(
        Object.entries(options.accountAbstraction ?? {}).flatMap(([network, contracts]) =>
          contracts.paymaster ? [[network, { entryPoint: contracts.entryPoint, paymaster: contracts.paymaster } satisfies PaymasterOnChain]] : [],
        ),
      ),
      lowThreshold: options.paymasterLowDeposit ?? DEFAULT_MINIMUM_DEPOSIT,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.onLowPaymasterDeposit ? { onLow: options.onLowPaymasterDeposit } : {}),
    }),
  };
  return services;
}

/**
 * The key of the credentials' pairwise pseudonyms: HKDF-SHA256 of the session secret under a label of its own, so it
 * is kept (and shared by instances) like that secret, and neither key tells anything of the other.
 */
export const pseudonymSecretOf = (sessionSecret: Uint8Array): Uint8Array =>
  new Uint8Array(hkdfSync('sha256', sessionSecret, new Uint8Array(0), 'agent-credential pairwise subject v1', 32));
