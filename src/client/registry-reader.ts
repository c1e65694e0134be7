// What the SDK's verifier reads of the agent registry on chain, kept for a short while so that a warm verification
// makes no RPC round trip. Only functions the deployed registry on Celo also has; the reads of one cold agent go
// out as one JSON-RPC batch where they do not depend on each other.
import { type Address, createPublicClient, type Hex, type HttpTransport, http, type PublicClient, parseAbi } from 'viem';
import type { AgentCredentials } from '../core/credentials.js';

const REGISTRY_ABI = parseAbi([
  'function getAgentId(bytes32 agentKey) view returns (uint256)',
  'function agentIdToAgentKey(uint256 agentId) view returns (bytes32)',
  'function isVerifiedAgent(bytes32 agentKey) view returns (bool)',
  'function getProofProvider(uint256 agentId) view returns (address)',
  'function selfProofProvider() view returns (address)',
  'function getHumanNullifier(uint256 agentId) view returns (uint256)',
  'function getAgentCountForHuman(uint256 nullifier) view returns (uint256)',
  'function proofExpiresAt(uint256 agentId) view returns (uint256)',
  'function maxProofAge() view returns (uint256)',
  'function getAgentCredentials(uint256 agentId) view returns ((string issuingState, string[] name, string idNumber, string nationality, string dateOfBirth, string gender, string expiryDate, uint256 olderThan, bool[3] ofac))',
]);

const PROVIDER_ABI = parseAbi(['function verificationStrength() view returns (uint8)']);

/** One agent as the registry holds it; agentId 0n: no agent has this key. */
export interface AgentState {
  agentId: bigint;
  /** Registered with a proof of human that was not revoked (expiry is proofExpiresAt's). */
  verified: boolean;
  provider: Address;
  nullifier: bigint;
  /** Live agents of the same human. */
  agentCount: bigint;
  /** Unix seconds. */
  proofExpiresAt: bigint;
  credentials: AgentCredentials;
}

export interface RegistryReaderOptions {
  rpcUrl: string;
  registry: Address;
  /** How long a read is reused; 0: never. */
  cacheTtlMs: number;
}

/** Loads once per key and reuses the value for `ttlMs`; a failed load, or a value `keep` refuses, is not reused. */
class ExpiringCache<K, V> {
  readonly #entries = new Map<K, { until: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly keep: (value: V) => boolean = () => true,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const now = Date.now();
    const cached = this.#entries.get(key);
    if (cached && cached.until > now) return cached.value;
    const value = load();
    // re-inserted at the end, so the map's order is the order of expiry: the sweep stops at the first live entry
    this.#entries.delete(key);
    this.#entries.set(key, { until: now + this.ttlMs, value });
    for (const [oldest, entry] of this.#entries) {
      if (entry.until > now && this.#entries.size <= this.maxEntries) break;
      this.#entries.delete(oldest);
    }
    const forget = () => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    };
    value.then((v) => this.keep(v) || forget(), forget);
    return value;
  }
}

const ONE = 'registry';

export class RegistryReader {
  readonly #client: PublicClient<HttpTransport, undefined>;
  readonly #registry: { address: Address; abi: typeof REGISTRY_ABI };
  // Only an accepted agent is remembered: one refused now may register or refresh its proof a moment later.
  readonly #agents: ExpiringCache<Hex, AgentState>;
  // An id's key never changes, but a burned agent's reads as zero: only found keys are kept.
  readonly #keys: ExpiringCache<bigint, Hex | undefined>;
  readonly #strengths: ExpiringCache<Address, number>;
  readonly #settings: ExpiringCache<string, bigint>;
  readonly #selfProvider: ExpiringCache<string, Address>;

  constructor(options: RegistryReaderOptions) {
    // batch: reads started together (an agent's state) share one HTTP round trip
    // no chain definition: eth_call needs none (the network only decides which chain ids a keyid may name)
    this.#client = createPublicClient({ transport: http(options.rpcUrl, { batch: true }) });
    this.#registry = { address: options.registry, abi: REGISTRY_ABI };
    const ttl = options.cacheTtlMs;
    this.#agents = new ExpiringCache(ttl, (state) => state.verified);
    this.#keys = new ExpiringCache(ttl, (key) => key !== undefined);
    this.#strengths = new ExpiringCache(ttl);
    this.#settings = new ExpiringCache(ttl);
    this.#selfProvider = new ExpiringCache(ttl);
  }

  /** The agent registered under `agentKey` (a padded address or a raw Ed25519 key). */
  agent(agentKey: Hex): Promise<AgentState> {
    return this.#agents.get(agentKey, async () => {
      const registry = this.#registry;
      const agentId = await this.#client.readContract({ ...registry, functionName: 'getAgentId', args: [agentKey] });
      if (agentId === 0n) return NO_AGENT;
      const args = [agentId] as const;
      const [verified, provider, nullifier, proofExpiresAt, credentials] = await Promise.all([
        this.#client.readContract({ ...registry, functionName: 'isVerifiedAgent', args: [agentKey] }),
        this.#client.readContract({ ...registry, functionName: 'getProofProvider', args }),
        this.#client.readContract({ ...registry, functionName: 'getHumanNullifier', args }),
        this.#client.readContract({ ...registry, functionName: 'proofExpiresAt', args }),
        this.#client.readContract({ ...registry, functionName: 'getAgentCredentials', args }),
      ]);
      const agentCount = await this.#client.readContract({ ...registry, functionName: 'getAgentCountForHuman', args: [nullifier] });
      return { agentId, verified, provider, nullifier, agentCount, proofExpiresAt, credentials };
    });
  }

  /** The key registered under `agentId`, or undefined when there is none (never minted, or burned). */
  agentKeyOf(agentId: bigint): Promise<Hex | undefined> {
    return this.#keys.get(agentId, async () => {
      const key = await this.#client.readContract({ ...this.#registry, functionName: 'agentIdToAgentKey', args: [agentId] });
      return BigInt(key) === 0n ? undefined : key;
    });
  }

  /** The provider the registry records for agents proved through its identity hub. */
  selfProofProvider(): Promise<Address> {
    return this.#selfProvider.get(ONE, () => this.#client.readContract({ ...this.#registry, functionName: 'selfProofProvider' }));
  }

  /** A proof provider's verification strength, 0 to 100. */
  providerStrength(provider: Address): Promise<number> {
    return this.#strengths.get(provider.toLowerCase() as Address, async () =>
      Number(await this.#client.readContract({ address: provider, abi: PROVIDER_ABI, functionName: 'verificationStrength' })),
    );
  }

  /** The registry's maximum proof age in seconds: a proof's expiry is at most this long after it was made. */
  maxProofAgeS(): Promise<bigint> {
    return this.#settings.get('maxProofAge', () => this.#client.readContract({ ...this.#registry, functionName: 'maxProofAge' }));
  }
}

const NO_AGENT: AgentState = Object.freeze({
  agentId: 0n,
  verified: false,
  provider: '0x0000000000000000000000000000000000000000',
  nullifier: 0n,
  agentCount: 0n,
  proofExpiresAt: 0n,
  credentials: {
    issuingState: '',
    name: [],
    idNumber: '',
    nationality: '',
    dateOfBirth: '',
    gender: '',
    expiryDate: '',
    olderThan: 0n,
    ofac: [false, false, false] as const,
  },
});
