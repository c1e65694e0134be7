// Typed reads through AgentLens, run as a deployless call (viem's readContract with `code`): the lens's creation
// code travels in the eth_call, so nothing is deployed on any chain, and one agent's whole public state comes
// back in one RPC round trip. The lens reads only registry functions the Celo deployment also has.
import type { Address, Hex } from 'viem';
import { agentLensAbi, agentLensBytecode } from '../contracts/artifacts/index.js';
import type { AgentCredentials } from '../core/credentials.js';
import type { ChainClient } from './clients.js';

/** An agent's public state as one block saw it. */
export interface AgentView {
  agentId: bigint;
  /** False for an id never minted or already burned (every other field is then zero or empty). */
  exists: boolean;
  owner: Address;
  agentKey: Hex;
  hasHumanProof: boolean;
  nullifier: bigint;
  proofProvider: Address;
  /** Empty when there is no provider, or it does not answer. */
  providerName: string;
  /** 0 to 100; 0 when there is no provider. */
  verificationStrength: number;
  /** The provider is the registry's own (hub) provider. */
  isSelfProvider: boolean;
  /** Live agents sharing this agent's nullifier; 0 without a nullifier. */
  agentCountForHuman: bigint;
  /** Block number of the mint. */
  registeredAtBlock: bigint;
  /** Unix seconds; 0 when there is no proof. */
  proofExpiresAt: bigint;
  isProofFresh: boolean;
  guardian: Address;
  /** The owner-set agent card JSON (updateAgentMetadata); empty when none. */
  metadata: string;
  credentials: AgentCredentials;
}

/** What answers show of a proof provider: its name and strength, as one block saw them. */
export interface ProviderView {
  address: Address;
  name: string;
  strength: number;
}

/** A read and the block it was read at (what cache invalidation compares with the log follower's progress). */
export interface AtBlock<T> {
  blockNumber: bigint;
  value: T;
}

/** The lens returns the strength as a uint8 (a number already); everything else maps one to one. */
const toView = (raw: Omit<AgentView, 'verificationStrength'> & { verificationStrength: number | bigint }): AgentView => ({
  ...raw,
  verificationStrength: Number(raw.verificationStrength),
});

export class AgentLens {
  constructor(
    private readonly client: ChainClient,
    readonly registry: Address,
  ) {}

  private get lens() {
    return { abi: agentLensAbi, code: agentLensBytecode } as const;
  }

  /** One agent in one eth_call. */
  async agent(agentId: bigint): Promise<AtBlock<AgentView>> {
    const [blockNumber, raw] = await this.client.readContract({
      ...this.lens,
      functionName: 'agentView',
      args: [this.registry, agentId],
    });
    return { blockNumber, value: toView(raw) };
  }

  /** The agent registered under `agentKey` in one eth_call; agentId 0 and exists false when the key has none. */
  async agentOfKey(agentKey: Hex): Promise<AtBlock<AgentView>> {
    const [blockNumber, raw] = await this.client.readContract({
      ...this.lens,
      functionName: 'agentViewOfKey',
      args: [this.registry, agentKey],
    });
    return { blockNumber, value: toView(raw) };
  }

  /** Several agents in one eth_call, in the order given. */
  async agents(agentIds: readonly bigint[]): Promise<AtBlock<AgentView[]>> {
    const [blockNumber, raws] = await this.client.readContract({
      ...this.lens,
      functionName: 'agentsView',
      args: [this.registry, agentIds],
    });
    return { blockNumber, value: raws.map(toView) };
  }

  /**
   * The name and strength of each provider at `blockNumber` (as `agent` reads them: "" and 0 for a provider that has
   * no code or does not answer), in the order given; one eth_call.
   */
  async providers(providers: readonly Address[], blockNumber: bigint): Promise<AtBlock<ProviderView[]>> {
    const [at, names, strengths] = await this.client.readContract({
      ...this.lens,
      functionName: 'providersView',
      args: [providers],
      blockNumber,
    });
    return { blockNumber: at, value: providers.map((address, i) => ({ address, name: names[i] ?? '', strength: Number(strengths[i] ?? 0) })) };
  }

  /** The live agents of a nullifier, in registry order. */
  async agentsForNullifier(nullifier: bigint): Promise<AtBlock<readonly bigint[]>> {
    const [blockNumber, agentIds] = await this.client.readContract({
      ...this.lens,
      functionName: 'agentsForNullifier',
      args: [this.registry, nullifier],
    });
    return { blockNumber, value: agentIds };
  }
}
