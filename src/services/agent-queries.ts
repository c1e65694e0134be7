// The public queries: agent info, agents per human wallet or nullifier, verification, reputation, verification
// status, the agent card, the A2A card redirect, the discovery document and the service's ERC-8004 registration
// file. Agent reads go through AgentLens (one eth_call each) and a per-network cache that the registry's own
// events invalidate (agent-cache.ts explains why no answer lags the chain by more than about one block).
//
// Decisions:
// - isVerified (info, verify) and verified (verify-status) mean "has a proof that has not expired"; an expired
//   agent keeps its provider, strength and nullifier in the answers. Reputation's hasProof means a proof is on
//   record, expired or not.
// - An agent never minted or burned is 404 for info, card and reputation; verify and verify-status answer their
//   no-proof bodies instead, as the interface says.
// - Agent lists (by human, by nullifier) are in ascending id order.
// - The log followers are started by the composition root (start()); if nothing started them, the first
//   agents-by-human request starts its network's follower (until stop() is called).
// - The per-agent answers (info, verify, card, reputation, verify-status) are built once per cached view and kept
//   with it (agent-cache.ts): REST routes and A2A intents share them, and the registry's events, provider checks and
//   reorganisations drop them with the view. Their representations (JSON, ETags) are the adapters' business.
// - Answers say how long they may be reused (answer-reuse.ts): while the cache holds what they were built from, and
//   the follower is live. Every drop is announced to onChange's listeners, in the tick it happens.
// - The card is signed when it is built (card-signer.ts) and kept with the kid that signed it; when the key that
//   signs changes, every kept card is signed again at its next request, and the change is announced (the signing
//   key's answer key) so that kept responses go too. The ERC-8004 registration file is signed once per key.
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { type Address, getAddress, type Hex, zeroAddress } from 'viem';
import type { AgentView } from '../chain/agent-lens.js';
import type { ChainGateway, NetworkGateway } from '../chain/gateway.js';
import type { IndexingProgress, RegistryEventFollower } from '../chain/registry-events.js';
import { AGENT_CREDENTIAL_VCT } from '../core/agent-credential.js';
import { agentAddressOfKey } from '../core/agent-key.js';
import { type InterfaceCredentials, publicCredentials } from '../core/credentials.js';
import {
  A2A_PATH,
  agentCardPath,
  CREDENTIAL_PATH,
  JWKS_PATH,
  MCP_PATH,
  proofOfHumanExtensionUri,
  SIGNED_REGISTRATION_FILE_PATH,
  STATUS_LIST_PATH,
} from '../core/endpoints.js';
import { notFound, ServiceError } from '../core/errors.js';
import { DEFAULT_NETWORK, NETWORK_NAMES, NETWORKS, type NetworkName } from '../core/networks.js';
import { type ProofType, proofTypeOf, type StrengthLabel, strengthLabelOf } from '../core/proof-type.js';
import { REGISTRATION_MODES, type RegistrationMode } from '../core/registration-modes.js';
import type { IndexWriterState, Metrics } from '../metrics.js';
import { SessionTokens } from '../sessions/session-token.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { AgentCache, type AgentRecord, type PreparedAnswer } from './agent-cache.js';
import { type AgentCard, buildAgentCard, PROOF_OF_HUMAN_EXTENSION_DESCRIPTION } from './agent-card.js';
import { answerKeys, ChangeFeed, type ChangeListener, type Reusable, UNTIL_SIGNING_KEY_CHANGES } from './answer-reuse.js';
import type { CardSigner, Signed } from './card-signer.js';
import { HumanAgentIndex, type HumanAgentIndexOptions } from './human-agent-index.js';
import { RecentRegistrations } from './recent-registrations.js';
import { StoredAgentIndex, type StoredCheckpoint } from './stored-agent-index.js';

export interface AgentInfo {
  agentId: number;
  chainId: number;
  agentAddress: Address;
  isVerified: boolean;
  proofProvider: Address;
  verificationStrength: number;
  strengthLabel: StrengthLabel;
  credentials: InterfaceCredentials;
  /** Unix seconds of the block the agent was minted in. */
  registeredAt: number;
  network: NetworkName;
}

export interface AgentsByHuman {
  agents: number[];
  chainId: number;
  humanAddress: Address;
}

export interface AgentsByNullifier {
  nullifier: string;
  agents: number[];
  chainId: number;
}

export interface VerifyResult {
  agentId: number;
  chainId: number;
  isVerified: boolean;
  proofProvider: Address;
  isSelfProvider: boolean;
  verificationStrength: number;
  strengthLabel: StrengthLabel;
  humanNullifier: string;
  agentCountForHuman: number;
}

/** Proof freshness of an agent (A2A `freshness` intent): fresh now, and when the proof expires. */
export interface Freshness {
  agentId: number;
  chainId: number;
  hasProof: boolean;
  /** The registry's isProofFresh, and the wall clock has not passed proofExpiresAt since the read. */
  isProofFresh: boolean;
  /** Unix seconds; 0 without a proof. */
  proofExpiresAt: number;
  /** Seconds until the expiry (0 once expired or without a proof). */
  secondsRemaining: number;
}

export interface Reputation {
  score: number;
  hasProof: boolean;
  providerName: string;
  proofType: ProofType;
}

export type VerifyStatus = { verified: false } | { verified: boolean; proofType: ProofType; registeredAtBlock: string; providerAddress: Address };

/** The answers built from one agent's view alone (and its network), by shape. */
export interface AgentAnswers {
  info: AgentInfo;
  verify: VerifyResult;
  card: AgentCard;
  reputation: Reputation;
  'verify-status': VerifyStatus;
}
export type AgentAnswerShape = keyof AgentAnswers;

const DEFAULT_AGENT_CACHE_SIZE = 10_000;

export const DISCOVERY_CAPABILITIES = ['register', 'deregister', 'verify', 'credentials', 'agent-card', 'a2a'] as const;

/** What an ERC-4337 client needs to use the account-abstraction proxy on one network. */
export interface AccountAbstractionContracts {
  entryPoint: Address;
  /** The factory of the smartwallet mode's passkey accounts, where the service runs one. */
  accountFactory?: Address;
  paymaster?: Address;
  /** SimpleAccountFactory v0.7, where the service runs one, and the implementation its accounts proxy to. */
  simpleAccountFactory?: Address;
  simpleAccountImplementation?: Address;
}

/**
 * One kind of smart account a network's factories deploy, named by `kind` so a client picks the one its SDK builds
 * (`simple`: viem's or permissionless' `toSimpleSmartAccount` with `factoryAddress`). The paymaster sponsors every
 * kind alike.
 */
export type SmartAccountKind =
  | { kind: 'passkey'; factory: Address; description: string }
  | { kind: 'simple'; factory: Address; implementation: Address; version: '0.7'; description: string };

export interface AccountAbstractionDiscovery {
  chainId: number;
  entryPointVersion: '0.7';
  entryPoint: Address;
  /** The passkey factory, as `accounts` names it too: kept for clients written before `accounts`. */
  accountFactory?: Address;
  paymaster?: Address;
  /** What the passkey factory deploys (with `accountFactory`). */
  account?: string;
  /** Every kind of account this network's factories deploy; absent where the service runs none (a hosted provider). */
  accounts?: SmartAccountKind[];
  /** The proxy: a token first, then bundler and paymaster calls with it. */
  tokenUrl: string;
  bundlerUrl: string;
  paymasterUrl: string;
}

export interface DiscoveryDocument {
  name: string;
  version: string;
  apiBase: string;
  networks: NetworkName[];
  registrationModes: RegistrationMode[];
  capabilities: (typeof DISCOVERY_CAPABILITIES)[number][];
  sessionTtlMs: number;
  /** The service's signing keys (JWKS): what its signed cards and credentials verify against. */
  jwksUri: string;
  /** The human-backed-agent credential: where a signed request gets one, its type, and where its status lists are. */
  agentCredential: AgentCredentialDiscovery;
  /** The A2A extension URI under which signed cards carry the proof of human (authoritative over the top-level block). */
  proofOfHumanExtension: string;
  /** The compact JWS of the ERC-8004 registration file (its payload is the file, byte for byte). */
  signedRegistrationFile: string;
  /** Per network where the proxy has a bundler: the smartwallet mode's ERC-4337 stack (beyond the interface's fields). */
  accountAbstraction?: Partial<Record<NetworkName, AccountAbstractionDiscovery>>;
  /** The MCP server: its Streamable HTTP endpoint and the protocol revision it speaks (the SDK's latest). */
  mcp: { endpoint: string; transport: 'streamable-http'; protocolVersion: string };
  /** Per network, the chain and the registry on it: what a verifier given only this service's URL reads. */
  chains: Record<NetworkName, ChainDiscovery>;
}

export interface ChainDiscovery {
  chainId: number;
  registry: Address;
  /** The RPC of a chain the service runs itself; none for an external RPC. */
  rpcUrl?: string;
}

const PASSKEY_ACCOUNT =
  'PasskeyAccount: ERC-1167 clone owned by one WebAuthn P-256 passkey; ERC-7821 batched execute, ERC-1271 signatures with ERC-7739 (bound to the account and chain); factory createAccount(bytes32 x, bytes32 y, uint256 salt)';
const SIMPLE_ACCOUNT =
  'SimpleAccount v0.7 (@account-abstraction/contracts 0.7.0): ERC-1967 proxy owned by one ECDSA key, which signs the UserOperation hash (EIP-191); execute and executeBatch; no ERC-1271, so it cannot be a smartwallet guardian; factory createAccount(address owner, uint256 salt)';

export const ERC8004_REGISTRATION_TYPE = 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1';

/** ERC-8004 registration file (registration-v1) of the service itself. */
export interface RegistrationFile {
  type: typeof ERC8004_REGISTRATION_TYPE;
  name: string;
  description: string;
  services: { name: string; endpoint: string; version?: string }[];
  x402Support: boolean;
  active: boolean;
  /** Empty: the service itself is not registered as an agent in any registry. */
  registrations: { agentId: number; agentRegistry: string }[];
  supportedTrust: string[];
}

/** The registry's proof-of-human extension, as the URL that identifies it describes it. */
export interface ProofOfHumanExtensionDescription {
  uri: string;
  name: string;
  description: string;
  jwksUri: string;
}

/** Where and how an agent gets its human-backed-agent credential, and where its status lists are. */
export interface AgentCredentialDiscovery {
  endpoint: string;
  format: 'dc+sd-jwt';
  vct: string;
  /** A URI template: {listId} as a credential's status names it. */
  statusListUri: string;
}

/** The version of the discovery document's shape. */
export const DISCOVERY_VERSION = '1.0.0';

export interface AgentQueryOptions {
  chains: ChainGateway;
  metrics: Metrics;
  clock: Clock;
  publicUrl: string;
  appName: string;
  /** Signs the cards and the registration file with the service's current key. */
  signer: CardSigner;
  /** Log polling interval; default 1,000 ms for an external RPC (Celo's block time), 200 ms for an embedded chain. */
  eventPollIntervalMs?: number;
  /** Most blocks per eth_getLogs while backfilling (halved on refusals); default 50,000. */
  maxLogRange?: bigint;
  /** How long agents-by-human waits for a follower that is still backfilling before answering 503. */
  indexWaitMs?: number;
  /** Called with a follower's failed polls (it retries at the next interval). */
  onFollowerError?: (network: NetworkName, error: unknown) => void;
  /**
   * Where each network's agents-by-human index is kept with the block it is valid at, so a start resumes from it
   * (stored-agent-index.ts); without one, every start reads the registry's logs from its deploy block.
   */
  store?: KeyValueStore;
  /** This instance, as the stored index's writer lease names it; default a random id. */
  instanceId?: string;
  /** How long the stored index's writer lease outlives its last renewal; default 15 s. */
  indexLeaseMs?: number;
  /** Opens the database a live network's index moves to; default a temporary sqlite database (disk-value-table.ts). */
  indexDatabase?: (network: NetworkName) => ReturnType<NonNullable<HumanAgentIndexOptions['openDatabase']>>;
  /** Most agents whose answers each network's cache keeps (least recently used go first); default 10,000. */
  agentCacheSize?: number;
  /** The ERC-4337 contracts per network the proxy serves (discovery). */
  accountAbstraction?: Partial<Record<NetworkName, AccountAbstractionContracts>>;
}

interface NetworkQueries {
  gateway: NetworkGateway;
  follower: RegistryEventFollower;
  /** Whether the follower is live: answers of this network may be reused only then. */
  live: () => boolean;
  cache: AgentCache;
  index: HumanAgentIndex;
  registrations: RecentRegistrations;
  /** The index as stored (when the service has a store). */
  stored: StoredAgentIndex | undefined;
  /** Where the stored index's keys start. */
  storePrefix: string;
  /** The stored index loaded (or not) before the follower's first start. */
  resumed?: Promise<boolean>;
}

/** The progress of a backfill whose target is not read yet. */
const NOT_YET_KNOWN: IndexingProgress = { blocksDone: 0, blocksToGo: 0, blocksPerSecond: 0, etaSeconds: null };

const NO_PROOF = {
  isVerified: false,
  proofProvider: zeroAddress,
  isSelfProvider: false,
  verificationStrength: 0,
  strengthLabel: 'None',
  humanNullifier: '0',
  agentCountForHuman: 0,
} as const satisfies Omit<VerifyResult, 'agentId' | 'chainId'>;

export class AgentQueryService {
  readonly #options: AgentQueryOptions;
  readonly #networks: Record<NetworkName, NetworkQueries>;
  readonly #changes = new ChangeFeed();
  /** stop() was called: nothing restarts the followers until start(). */
  #stopped = false;
  /** The registration file signed by the current key. */
  readonly #signedRegistrationFile: () => Promise<string>;
  readonly #instanceId: string;

  constructor(options: AgentQueryOptions) {
    this.#options = options;
    this.#instanceId = options.instanceId ?? crypto.randomUUID();
    this.#networks = Object.fromEntries(options.chains.all().map((gateway) => [gateway.network, this.#setUp(gateway)])) as Record<
      NetworkName,
      NetworkQueries
    >;
    // kept cards are signed again at their next request (#preparedFrom); what others keep is dropped now
    options.signer.onKeyChange(() => this.#changes.changed(answerKeys.signingKey()));
    this.#signedRegistrationFile = options.signer.perKey(() =>
      options.signer.signCompact(JSON.stringify(this.registrationFile()), 'application/json'),
    );
  }

  #setUp(gateway: NetworkGateway): NetworkQueries {
    const { metrics, clock } = this.#options;
    const follower = gateway.followRegistry({
      intervalMs: this.#options.eventPollIntervalMs ?? (gateway.embedded ? 200 : 1_000),
      ...(this.#options.maxLogRange !== undefined ? { maxLogRange: this.#options.maxLogRange } : {}),
      clock,
      onError: (error) => this.#options.onFollowerError?.(gateway.network, error),
    });
    const { network } = gateway;
    // Until the follower has caught up since its start (or a start over), nobody keeps an answer of this network
    // (they are kept only while it is live; a start over announces the network): its changes are not announced one by
    // one, thousands a second in a backfill, but the network's own key once it has caught up, so that what was
    // built from an older state (a credential's status) is looked at again.
    const changed = (key: string) => {
      if (follower.caughtUp) this.#changes.changed(key);
    };
    follower.onCaughtUp(() => this.#changes.changed(answerKeys.network(network)));
    const cache = new AgentCache({
      network,
      lens: gateway.lens,
      blockTimestamp: (blockNumber) => gateway.blockTimestamp(blockNumber),
      agentIdOf: (agentKey, blockNumber) => gateway.registry.agentIdOf(agentKey, blockNumber),
      follower,
      metrics,
      maxEntries: this.#options.agentCacheSize ?? DEFAULT_AGENT_CACHE_SIZE,
      onChange: changed,
    });
    const { indexDatabase } = this.#options;
    const index = new HumanAgentIndex(
      (address) => {
        if (follower.caughtUp) changed(answerKeys.human(network, address));
      },
      {
        // the temporary database failed under the live index: rebuilt from the logs, in memory until live again
        onDiskFailure: (error) => {
          this.#options.onFollowerError?.(network, error);
          void follower.startOver();
        },
        ...(indexDatabase ? { openDatabase: () => indexDatabase(network) } : {}),
      },
    );
    follower.subscribe((logs, toBlock, head) => index.apply(logs, toBlock, head));
    // a backfill fills the index in memory, fast; once live it moves to a temporary database, so that the process's
    // memory does not grow with the registry (disk-value-table.ts); sqlite failing leaves it in memory
    follower.onCaughtUp(() => {
      index.moveToDisk().catch((error: unknown) => this.#options.onFollowerError?.(network, error));
    });
    const registrations = new RecentRegistrations();
    follower.subscribe((logs) => registrations.note(logs));
    const { store } = this.#options;
    const prefix = `agent-index:${network}:${gateway.chainId}:${gateway.contracts.registry.toLowerCase()}:`;
    const stored = store
      ? new StoredAgentIndex({
          store,
          prefix,
          index,
          follower,
          instanceId: this.#instanceId,
          ...(this.#options.indexLeaseMs !== undefined ? { leaseMs: this.#options.indexLeaseMs } : {}),
          clock,
          onError: (error) => this.#options.onFollowerError?.(network, error),
        })
      : undefined;
    // a restarted local chain that lost blocks the follower had seen, or a reorganisation deeper than the follower
    // keeps track of: rebuild both from the logs again (cache.clear() announces the whole network)
    follower.onRewind(() => {
      cache.clear();
      index.clear();
      registrations.clear();
    });
    // a reorganisation dropped blocks after `ancestor`: no cached read may come from them (the cache keeps no
    // block per entry, so all go), and the index undoes their changes; their new branch's logs follow
    follower.onReorg((ancestor) => {
      cache.clear();
      index.rewindTo(ancestor);
      registrations.clear();
    });
    return { gateway, follower, live: () => follower.isLive(), cache, index, registrations, stored, storePrefix: prefix };
  }

  /** Starts a network's follower, after the stored index (if any) is loaded and the follower set to resume from it. */
  #startFollower(queries: NetworkQueries): Promise<void> {
    queries.resumed ??= (queries.stored?.resume() ?? Promise.resolve(false)).catch((error: unknown) => {
      // a store that does not answer: the index is read from the chain
      this.#options.onFollowerError?.(queries.gateway.network, error);
      return false;
    });
    return queries.resumed.then(() => queries.follower.start());
  }

  /** Whether each network's index was loaded from the store at its start (diagnostics and tests). */
  async resumedFromStore(network: NetworkName): Promise<boolean> {
    return (await this.#networks[network].resumed) ?? false;
  }

  /** What a network's agent cache holds (diagnostics and tests). */
  cacheSize(network: NetworkName): AgentCache['size'] {
    return this.#networks[network].cache.size;
  }

  /** Where each network's agents-by-human index is held now: in memory until live, then on disk (metrics, tests). */
  indexStorage(): Record<NetworkName, HumanAgentIndex['storage']> {
    return Object.fromEntries(Object.entries(this.#networks).map(([network, { index }]) => [network, index.storage])) as Record<
      NetworkName,
      HumanAgentIndex['storage']
    >;
  }

  /** A network's stored index, when the service keeps one (diagnostics and tests). */
  storedIndex(network: NetworkName): StoredAgentIndex | undefined {
    return this.#networks[network].stored;
  }

  /**
   * Per network with a stored index: whether this instance writes it, under which token, and the checkpoint stored
   * (read from the store now, so every instance reports the one the current writer stored) — for the metrics.
   */
  async indexWriters(): Promise<IndexWriterState[]> {
    const { store } = this.#options;
    const states = Object.entries(this.#networks).map(async ([network, { stored, storePrefix }]) => {
      if (!store || !stored) return [];
      // the checkpoint record of stored-agent-index.ts's layout
      const checkpoint = await store.get<StoredCheckpoint>(`${storePrefix}checkpoint`);
      const last = checkpoint?.checkpoints.at(-1);
      return [
        {
          network,
          writing: stored.writing,
          token: stored.token,
          checkpoint: checkpoint && last ? { block: BigInt(last[0]), token: checkpoint.token } : undefined,
        },
      ];
    });
    return (await Promise.all(states)).flat();
  }

  /**
   * Starts every network's log follower (cache invalidation and the agents-by-human index). Resolves when all
   * have caught up with their chain once (on Celo the first run backfills the index from the deploy block).
   */
  async start(): Promise<void> {
    this.#stopped = false;
    await Promise.all(Object.values(this.#networks).map((queries) => this.#startFollower(queries)));
  }

  /** Per network whose follower is still on its first backfill: how far it is (answers meanwhile read the chain). */
  indexing(): Partial<Record<NetworkName, IndexingProgress>> {
    const progress: Partial<Record<NetworkName, IndexingProgress>> = {};
    for (const [network, { follower, resumed }] of Object.entries(this.#networks) as [NetworkName, NetworkQueries][]) {
      // started but before its first read of the head (the stored index loading, the first poll under way): the
      // index is not live yet, how far it has to go not known yet
      const now = follower.indexing() ?? (resumed !== undefined && !follower.caughtUp ? NOT_YET_KNOWN : undefined);
      if (now) progress[network] = now;
    }
    return progress;
  }

  /** Stops the followers; the cache is bypassed from then on. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(
      Object.values(this.#networks).map(async ({ follower, stored }) => {
        await follower.stop();
        await stored?.stop();
      }),
    );
  }

  /**
   * Calls `listener` after each block range in which `network`'s registry logged something (registrations,
   * deregistrations, refreshes), starting that network's follower if nothing has. Returns the unsubscribe.
   * Session followers use it to look at the chain when it changed instead of on a fast timer.
   * With the node's WebSocket, the log's announcement calls it first, a poll's round trips sooner; the follower's
   * delivery of the same block calls it again (a node behind a load balancer may announce a block before the
   * node that answers the read has it, and a dropped socket announces nothing).
   */
  onRegistryActivity(network: NetworkName, listener: () => void): () => void {
    const queries = this.#networks[network];
    const { follower } = queries;
    if (!follower.running && !this.#stopped) void this.#startFollower(queries);
    const fromFollower = follower.subscribe((logs) => {
      if (logs.length > 0) listener();
    });
    const fromSocket = queries.gateway.registryLogs?.((logs) => {
      queries.registrations.note(logs);
      listener();
    });
    return () => {
      fromFollower();
      fromSocket?.();
    };
  }

  /** The transaction that minted `agentId`, when the service saw its Registered log (recent registrations only). */
  registrationTransaction(network: NetworkName, agentId: bigint): Hex | undefined {
    return this.#networks[network].registrations.transactionOf(agentId);
  }

  /** Processes the logs up to the latest block now (tests; normally the followers' timers do this). */
  async syncNow(): Promise<void> {
    await Promise.all(Object.values(this.#networks).map(({ follower }) => follower.syncNow()));
  }

  /**
   * Calls `listener` with the key (answer-reuse.ts) of every answer that stops being current, synchronously, in the
   * tick the service learns it. Returns the unsubscribe.
   */
  onChange(listener: ChangeListener): () => void {
    return this.#changes.listen(listener);
  }

  /** The follower of a network, for diagnostics and tests. */
  follower(network: NetworkName): RegistryEventFollower {
    return this.#networks[network].follower;
  }

  #isVerified(view: AgentView): boolean {
    // isProofFresh was true at the read's block, and the wall clock has not passed the expiry since
    return view.exists && view.hasHumanProof && view.isProofFresh && this.#options.clock() / 1000 < Number(view.proofExpiresAt);
  }

  async #existing(queries: NetworkQueries, agentId: bigint): Promise<AgentView> {
    const view = await queries.cache.agent(agentId);
    if (!view.exists) throw this.#notFound(queries, agentId);
    return view;
  }

  /**
   * An agent answer, built once per cached view (A2A and REST share it) and rebuilt when it turns stale by the
   * clock (a proof's expiry). Not cached while the follower is not live: then built at every request.
   */
  async #prepared<S extends AgentAnswerShape>(shape: S, network: NetworkName, agentId: bigint): Promise<PreparedAnswer<AgentAnswers[S]>> {
    const queries = this.#networks[network];
    return this.#preparedFrom(shape, queries, agentId, await queries.cache.agentRecord(agentId));
  }

  async #preparedFrom<S extends AgentAnswerShape>(
    shape: S,
    queries: NetworkQueries,
    agentId: bigint,
    record: AgentRecord,
  ): Promise<PreparedAnswer<AgentAnswers[S]>> {
    // the record is the agent's and the network's; nothing else of the request goes into these answers, so the
    // shape alone keys them (an answer depending on another parameter would need it in the key)
    const known = record.answers.get(shape) as PreparedAnswer<AgentAnswers[S]> | undefined;
    if (known && this.#options.clock() < known.validUntilMs && (known.signedWith === undefined || known.signedWith === this.#options.signer.kid)) {
      return known;
    }
    const { view } = record;
    const validUntilMs = this.#isVerified(view) ? Number(view.proofExpiresAt) * 1000 : Number.POSITIVE_INFINITY;
    const prepared: PreparedAnswer<AgentAnswers[S]> =
      shape === 'card'
        ? await this.#signedCard(queries, agentId, view).then(({ value, kid }) => ({
            value: value as AgentAnswers[S],
            validUntilMs,
            signedWith: kid,
          }))
        : { value: (await this.#build(shape, queries, agentId, view)) as AgentAnswers[S], validUntilMs };
    record.answers.set(shape, prepared);
    return prepared;
  }

  /**
   * An agent answer (info, verify, card, reputation, verify-status) and how long it may be reused: while the cache
   * holds the view it was built from (its drop is announced), until the proof's expiry. Throws as the answer would
   * (404). Callers share the value: read it, never change it.
   */
  async answer<S extends AgentAnswerShape>(shape: S, network: NetworkName, agentId: bigint): Promise<Reusable<AgentAnswers[S]>> {
    const queries = this.#networks[network];
    const record = await queries.cache.agentRecord(agentId);
    const { value, validUntilMs } = await this.#preparedFrom(shape, queries, agentId, record);
    // a record read while the follower was not live, or dropped meanwhile, is not the cache's: its drop would go unheard
    if (!queries.follower.isLive() || !queries.cache.holds(agentId, record)) return { value };
    const keys = [network, answerKeys.agent(network, agentId), ...(shape === 'card' ? [answerKeys.signingKey()] : [])];
    return { value, reuse: { keys, validUntilMs, live: queries.live } };
  }

  /** An answer that is not signed: built from the view alone. */
  #build(
    shape: Exclude<AgentAnswerShape, 'card'>,
    queries: NetworkQueries,
    agentId: bigint,
    view: AgentView,
  ): Promise<AgentAnswers[AgentAnswerShape]> | AgentAnswers[AgentAnswerShape] {
    switch (shape) {
      case 'info':
        return this.#info(queries, agentId, view);
      case 'verify':
        return this.#verify(queries, agentId, view);
      case 'reputation':
        return this.#reputation(queries, agentId, view);
      case 'verify-status':
        return this.#verifyStatus(view);
    }
  }

  /** Callers share the answer object: read it, never change it. */
  async info(network: NetworkName, agentId: bigint): Promise<AgentInfo> {
    return (await this.#prepared('info', network, agentId)).value;
  }

  #notFound(queries: NetworkQueries, agentId: bigint): ServiceError {
    return notFound(`Agent ${agentId} not found on chain ${queries.gateway.chainId}`);
  }

  async #info(queries: NetworkQueries, agentId: bigint, view: AgentView): Promise<AgentInfo> {
    if (!view.exists) throw this.#notFound(queries, agentId);
    // The registry stores the mint's block number; its timestamp costs one more round trip the first time a
    // block is seen (then it is cached forever).
    const registeredAt = view.registeredAtBlock > 0n ? await queries.cache.blockTimestamp(view.registeredAtBlock) : 0;
    const proof = proofFields(view);
    return {
      agentId: Number(agentId),
      chainId: queries.gateway.chainId,
      agentAddress: agentAddressOfKey(view.agentKey),
      isVerified: this.#isVerified(view),
      proofProvider: proof.provider,
      verificationStrength: proof.strength,
      strengthLabel: strengthLabelOf(view.hasHumanProof, proof.strength),
      credentials: interfaceCredentials(view),
      registeredAt,
      network: queries.gateway.network,
    };
  }

  /**
   * The agent an agent key names, with its public state and whether it has a proof that has not expired; none
   * for a key never registered or deregistered. Warm (key and agent cached), it costs no RPC.
   */
  async agentByKey(network: NetworkName, agentKey: Hex): Promise<{ agentId: bigint; view: AgentView; isVerified: boolean } | undefined> {
    const { cache } = this.#networks[network];
    const agentId = await cache.agentIdOf(agentKey);
    if (agentId === 0n) return undefined;
    const view = await cache.agent(agentId);
    return view.exists ? { agentId, view, isVerified: this.#isVerified(view) } : undefined;
  }

  /** Agent `agentId`'s public state, or none for an id never minted or burned. Warm, it costs no RPC. */
  async agentById(network: NetworkName, agentId: bigint): Promise<AgentView | undefined> {
    const view = await this.#networks[network].cache.agent(agentId);
    return view.exists ? view : undefined;
  }

  /**
   * Whether agent `agentId` holds its NFT now (never burned) under `agentAddress`: the address guards against an id
   * issued again on a chain that lost blocks. Warm, it costs no RPC; reads made together share one round trip.
   */
  async isRegistered(network: NetworkName, agentId: bigint, agentAddress: string): Promise<boolean> {
    const view = await this.#networks[network].cache.agent(agentId);
    return view.exists && agentAddressOfKey(view.agentKey).toLowerCase() === agentAddress.toLowerCase();
  }

  /**
   * Agents whose NFT the address owns or whose guardian it is, in id order (human-agent-index.ts); reusable while the
   * follower is live, until a log changes the address's agents.
   */
  async agentsByHuman(network: NetworkName, address: Address): Promise<Reusable<AgentsByHuman>> {
    const queries = this.#networks[network];
    await this.#indexReady(queries);
    const value = { agents: queries.index.agentsOf(address).map(Number), chainId: queries.gateway.chainId, humanAddress: getAddress(address) };
    if (!queries.follower.isLive()) return { value };
    return {
      value,
      reuse: { keys: [network, answerKeys.human(network, address)], validUntilMs: Number.POSITIVE_INFINITY, live: queries.live },
    };
  }

  /**
   * The live agents of a human nullifier, in id order: from the index while the follower is live (reusable until a
   * log changes the nullifier's list), else from the chain through the cache (reusable while the cache holds the list).
   */
  async agentsByNullifier(network: NetworkName, nullifier: bigint): Promise<Reusable<AgentsByNullifier>> {
    const queries = this.#networks[network];
    if (queries.follower.isLive()) {
      const agents = queries.index.agentsOfNullifier(nullifier).map(Number);
      return {
        value: { nullifier: nullifier.toString(), agents, chainId: queries.gateway.chainId },
        reuse: { keys: [network, answerKeys.nullifier(network, nullifier)], validUntilMs: Number.POSITIVE_INFINITY, live: queries.live },
      };
    }
    const ids = await queries.cache.agentsForNullifier(nullifier);
    const value = {
      nullifier: nullifier.toString(),
      agents: [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(Number),
      chainId: queries.gateway.chainId,
    };
    if (!queries.follower.isLive() || !queries.cache.holdsList(nullifier, ids)) return { value };
    return {
      value,
      reuse: {
        keys: [network, answerKeys.nullifier(network, nullifier)],
        validUntilMs: Number.POSITIVE_INFINITY,
        live: queries.live,
      },
    };
  }

  /** One eth_call when not cached, none when cached. Callers share the answer object: read it, never change it. */
  async verify(network: NetworkName, agentId: bigint): Promise<VerifyResult> {
    return (await this.#prepared('verify', network, agentId)).value;
  }

  #verify(queries: NetworkQueries, agentId: bigint, view: AgentView): VerifyResult {
    const ids = { agentId: Number(agentId), chainId: queries.gateway.chainId };
    if (!view.exists || !view.hasHumanProof) return { ...ids, ...NO_PROOF };
    const proof = proofFields(view);
    return {
      ...ids,
      isVerified: this.#isVerified(view),
      proofProvider: proof.provider,
      isSelfProvider: view.isSelfProvider,
      verificationStrength: proof.strength,
      strengthLabel: strengthLabelOf(true, proof.strength),
      humanNullifier: view.nullifier.toString(),
      agentCountForHuman: Number(view.agentCountForHuman),
    };
  }

  /** One eth_call when not cached, none when cached; 404 for an agent that does not exist. */
  async freshness(network: NetworkName, agentId: bigint): Promise<Freshness> {
    const queries = this.#networks[network];
    const view = await this.#existing(queries, agentId);
    const expiresAt = view.hasHumanProof ? Number(view.proofExpiresAt) : 0;
    return {
      agentId: Number(agentId),
      chainId: queries.gateway.chainId,
      hasProof: view.hasHumanProof,
      isProofFresh: this.#isVerified(view),
      proofExpiresAt: expiresAt,
      secondsRemaining: Math.max(0, Math.floor(expiresAt - this.#options.clock() / 1000)),
    };
  }

  async reputation(network: NetworkName, agentId: bigint): Promise<Reputation> {
    return (await this.#prepared('reputation', network, agentId)).value;
  }

  #reputation(queries: NetworkQueries, agentId: bigint, view: AgentView): Reputation {
    if (!view.exists) throw this.#notFound(queries, agentId);
    const proof = proofFields(view);
    return {
      score: proof.strength,
      hasProof: view.hasHumanProof,
      providerName: view.hasHumanProof ? view.providerName : '',
      proofType: proofTypeOf(proof.strength),
    };
  }

  async verifyStatus(network: NetworkName, agentId: bigint): Promise<VerifyStatus> {
    return (await this.#prepared('verify-status', network, agentId)).value;
  }

  #verifyStatus(view: AgentView): VerifyStatus {
    if (!view.exists || !view.hasHumanProof) return { verified: false };
    return {
      verified: this.#isVerified(view),
      proofType: proofTypeOf(view.verificationStrength),
      registeredAtBlock: view.registeredAtBlock.toString(),
      providerAddress: view.proofProvider,
    };
  }

  async card(network: NetworkName, agentId: bigint): Promise<AgentCard> {
    return (await this.#prepared('card', network, agentId)).value;
  }

  /** The card, signed by the current key. */
  #signedCard(queries: NetworkQueries, agentId: bigint, view: AgentView): Promise<Signed<AgentCard>> {
    return this.#options.signer.signCard(this.#card(queries, agentId, view));
  }

  #card(queries: NetworkQueries, agentId: bigint, view: AgentView): AgentCard {
    if (!view.exists) throw this.#notFound(queries, agentId);
    const { gateway } = queries;
    const proof = proofFields(view);
    return buildAgentCard({
      metadata: view.metadata,
      serviceA2aUrl: `${this.#options.publicUrl}${A2A_PATH}`,
      networkLabel: NETWORKS[gateway.network].label,
      extensionUri: proofOfHumanExtensionUri(this.#options.publicUrl),
      proofOfHuman: {
        agentId: Number(agentId),
        registry: gateway.contracts.registry,
        chainId: gateway.chainId,
        network: gateway.network,
        agentAddress: agentAddressOfKey(view.agentKey),
        isVerified: this.#isVerified(view),
        proofProvider: proof.provider,
        providerName: view.hasHumanProof ? view.providerName : '',
        verificationStrength: proof.strength,
        strengthLabel: strengthLabelOf(view.hasHumanProof, proof.strength),
        proofExpiresAt: Number(view.proofExpiresAt),
        credentials: interfaceCredentials(view),
      },
    });
  }

  /** Where /.well-known/a2a/{agentId} sends the caller: the agent's card (network default: mainnet). */
  cardLocation(agentId: bigint, network: NetworkName = DEFAULT_NETWORK): string {
    return agentCardPath(NETWORKS[network].chainId, agentId);
  }

  discovery(): DiscoveryDocument {
    return {
      name: this.#options.appName,
      version: DISCOVERY_VERSION,
      apiBase: `${this.#options.publicUrl}/api/agent`,
      networks: [...NETWORK_NAMES],
      registrationModes: [...REGISTRATION_MODES],
      capabilities: [...DISCOVERY_CAPABILITIES],
      sessionTtlMs: SessionTokens.LIFETIME_MS,
      jwksUri: `${this.#options.publicUrl}${JWKS_PATH}`,
      agentCredential: {
        endpoint: `${this.#options.publicUrl}${CREDENTIAL_PATH}`,
        format: 'dc+sd-jwt',
        vct: AGENT_CREDENTIAL_VCT,
        statusListUri: `${this.#options.publicUrl}${STATUS_LIST_PATH}`,
      },
      proofOfHumanExtension: proofOfHumanExtensionUri(this.#options.publicUrl),
      signedRegistrationFile: `${this.#options.publicUrl}${SIGNED_REGISTRATION_FILE_PATH}`,
      chains: Object.fromEntries(
        this.#options.chains
          .all()
          .map((gateway) => [
            gateway.network,
            { chainId: gateway.chainId, registry: gateway.contracts.registry, ...(gateway.localRpcUrl ? { rpcUrl: gateway.localRpcUrl } : {}) },
          ]),
      ) as Record<NetworkName, ChainDiscovery>,
      ...(this.#options.accountAbstraction ? { accountAbstraction: this.#accountAbstractionDiscovery(this.#options.accountAbstraction) } : {}),
      mcp: { endpoint: `${this.#options.publicUrl}${MCP_PATH}`, transport: 'streamable-http', protocolVersion: LATEST_PROTOCOL_VERSION },
    };
  }

  #accountAbstractionDiscovery(
    contracts: Partial<Record<NetworkName, AccountAbstractionContracts>>,
  ): Partial<Record<NetworkName, AccountAbstractionDiscovery>> {
    const proxy = (route: string, chainId: number) => `${this.#options.publicUrl}/api/aa/${route}?chainId=${chainId}`;
    const entries = Object.entries(contracts).map(([network, c]) => {
      const { chainId } = NETWORKS[network as NetworkName];
      const accounts: SmartAccountKind[] = [
        ...(c.accountFactory ? [{ kind: 'passkey' as const, factory: c.accountFactory, description: PASSKEY_ACCOUNT }] : []),
        ...(c.simpleAccountFactory && c.simpleAccountImplementation
          ? [
              {
                kind: 'simple' as const,
                factory: c.simpleAccountFactory,
                implementation: c.simpleAccountImplementation,
                version: '0.7' as const,
                description: SIMPLE_ACCOUNT,
              },
            ]
          : []),
      ];
      // field by field: the contracts a caller passes may carry more than this document shows
      const discovery: AccountAbstractionDiscovery = {
        chainId,
        entryPointVersion: '0.7',
        entryPoint: c.entryPoint,
        ...(c.accountFactory ? { accountFactory: c.accountFactory } : {}),
        ...(c.paymaster ? { paymaster: c.paymaster } : {}),
        ...(c.accountFactory ? { account: PASSKEY_ACCOUNT } : {}),
        ...(accounts.length > 0 ? { accounts } : {}),
        tokenUrl: proxy('token', chainId),
        bundlerUrl: proxy('bundler', chainId),
        paymasterUrl: proxy('paymaster', chainId),
      };
      return [network, discovery];
    });
    return Object.fromEntries(entries);
  }

  registrationFile(): RegistrationFile {
    const { publicUrl, appName } = this.#options;
    return {
      type: ERC8004_REGISTRATION_TYPE,
      name: appName,
      description:
        'Registers AI agents bound to a human through an on-chain proof-of-human check, and answers who stands behind an ' +
        'agent: verification, credentials, agent cards and A2A.',
      services: [
        { name: 'web', endpoint: publicUrl },
        { name: 'A2A', endpoint: `${publicUrl}${A2A_PATH}`, version: '0.3.0' },
        { name: 'MCP', endpoint: `${publicUrl}${MCP_PATH}`, version: LATEST_PROTOCOL_VERSION },
      ],
      x402Support: false,
      active: true,
      registrations: [],
      supportedTrust: [],
    };
  }

  /** What the registry's proof-of-human extension is, as its URI describes it. */
  proofOfHumanExtension(): ProofOfHumanExtensionDescription {
    const { publicUrl } = this.#options;
    return {
      uri: proofOfHumanExtensionUri(publicUrl),
      name: 'Proof of human',
      description:
        `${PROOF_OF_HUMAN_EXTENSION_DESCRIPTION}. The per-agent cards of this registry (${publicUrl}/api/cards/{chainId}/{agentId}) ` +
        "declare it in capabilities.extensions with the claims as its params: the agent's registry, chain and address, " +
        'whether its proof is fresh, the provider, its strength and the expiry, and the credentials the human disclosed. ' +
        "Verify the card's signature (A2A v1.0 section 8.4) with the keys at jwksUri before trusting them.",
      jwksUri: `${publicUrl}${JWKS_PATH}`,
    };
  }

  /**
   * The registration file as a compact JWS that carries it (its payload is byte for byte what
   * /.well-known/agent-registration.json serves), signed once per key; reusable until the key that signs changes.
   */
  async signedRegistrationFile(): Promise<Reusable<string>> {
    const value = await this.#signedRegistrationFile();
    return { value, reuse: UNTIL_SIGNING_KEY_CHANGES };
  }

  async #indexReady(queries: NetworkQueries): Promise<void> {
    const { follower, gateway } = queries;
    if (!follower.running) {
      if (this.#stopped) throw new ServiceError(503, `The agent index of ${gateway.network} is stopped; the service is shutting down`);
      // Not started by the composition root (e.g. an app built by a test): start this network's follower now.
      void this.#startFollower(queries);
    }
    if (follower.isLive()) return;
    const waitMs = this.#options.indexWaitMs ?? 10_000;
    const timedOut = await follower.ready(AbortSignal.timeout(waitMs)).then(
      () => false,
      () => true,
    );
    if (timedOut) {
      throw new ServiceError(503, `The agent index of ${gateway.network} is still reading the registry's logs; retry shortly`);
    }
  }
}

/** Provider and strength, zero when there is no proof. */
function proofFields(view: AgentView): { provider: Address; strength: number } {
  return view.hasHumanProof ? { provider: view.proofProvider, strength: view.verificationStrength } : { provider: zeroAddress, strength: 0 };
}

export function interfaceCredentials(view: AgentView): InterfaceCredentials {
  const shown = publicCredentials(view.credentials);
  return { ...shown, nationality: shown.nationality ?? '' };
}
