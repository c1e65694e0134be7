// Typed reads of the agent registry. Everything here uses only functions the registry deployed on Celo
// also has, so the same code serves Celo and our local chains.
import { type Address, BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, type Hex } from 'viem';
import { agentRegistryAbi, humanProofProviderAbi } from '../contracts/artifacts/index.js';
import type { AgentCredentials } from '../core/credentials.js';
import {
  findRegistrationTransaction,
  type ProofSubmission,
  type RegistryTransaction,
  readProofExpiry,
  readProofSubmission,
  readRegistryTransaction,
} from './actions/registry-transactions.js';
import type { ChainClient } from './clients.js';

/** A call the contract refused or does not have (as opposed to an RPC failure). */
const reverted = (error: unknown): boolean =>
  error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !== null;

/** One agent as the registry holds it. */
export interface AgentRecord {
  agentId: bigint;
  owner: Address;
  agentKey: Hex;
  hasHumanProof: boolean;
  humanNullifier: bigint;
  proofProvider: Address;
  /** Block number of the mint. */
  registeredAtBlock: bigint;
  /** Unix seconds; 0 when there is no proof. */
  proofExpiresAt: bigint;
  isProofFresh: boolean;
  configId: Hex;
  credentials: AgentCredentials;
  metadata: string;
}

export interface ProviderInfo {
  name: string;
  verificationStrength: number;
}

export class RegistryGateway {
  constructor(
    private readonly client: ChainClient,
    readonly address: Address,
  ) {}

  private get registry() {
    return { address: this.address, abi: agentRegistryAbi } as const;
  }

  /** Everything about one agent in a single multicall (one RPC round trip); null if never minted or burned. */
  async readAgent(agentId: bigint): Promise<AgentRecord | null> {
    const args = [agentId] as const;
    const [owner, agentKey, hasHumanProof, humanNullifier, proofProvider, registeredAt, expiresAt, fresh, configId, credentials, metadata] =
      await this.client.multicall({
        allowFailure: true,
        contracts: [
          { ...this.registry, functionName: 'ownerOf', args },
          { ...this.registry, functionName: 'agentIdToAgentKey', args },
          { ...this.registry, functionName: 'hasHumanProof', args },
          { ...this.registry, functionName: 'getHumanNullifier', args },
          { ...this.registry, functionName: 'getProofProvider', args },
          { ...this.registry, functionName: 'agentRegisteredAt', args },
          { ...this.registry, functionName: 'proofExpiresAt', args },
          { ...this.registry, functionName: 'isProofFresh', args },
          { ...this.registry, functionName: 'agentConfigId', args },
          { ...this.registry, functionName: 'getAgentCredentials', args },
          { ...this.registry, functionName: 'getAgentMetadata', args },
        ],
      });
    // ownerOf reverts for an unminted or burned token: that is the one expected failure. Any other (the chain did
    // not answer: multicall reports it per call) must not read as "no such agent".
    if (owner.status === 'failure') {
      if (reverted(owner.error)) return null;
      throw owner.error;
    }
    const value = <T>(result: { status: 'success'; result: T } | { status: 'failure'; error: Error }): T => {
      if (result.status === 'failure') throw result.error;
      return result.result;
    };
    return {
      agentId,
      owner: owner.result,
      agentKey: value(agentKey),
      hasHumanProof: value(hasHumanProof),
      humanNullifier: value(humanNullifier),
      proofProvider: value(proofProvider),
      registeredAtBlock: value(registeredAt),
      proofExpiresAt: value(expiresAt),
      isProofFresh: value(fresh),
      configId: value(configId),
      credentials: value(credentials),
      metadata: value(metadata),
    };
  }

  /** The agent id of an agent key (padded address or raw Ed25519 key); 0n when unknown. */
  agentIdOf(agentKey: Hex, blockNumber?: bigint): Promise<bigint> {
    return this.client.readContract({
      ...this.registry,
      functionName: 'getAgentId',
      args: [agentKey],
      ...(blockNumber !== undefined ? { blockNumber } : {}),
    });
  }

  /**
   * The Ed25519 key an agent's derived address stands for, or undefined. Only our registry has this getter
   * (Celo's deployment does not): a failing call means "not known here", not an error.
   */
  async ed25519KeyForAddress(derived: Address): Promise<Hex | undefined> {
    try {
      const key = await this.client.readContract({ ...this.registry, functionName: 'ed25519KeyForAddress', args: [derived] });
      return BigInt(key) === 0n ? undefined : key;
    } catch (error) {
      if (reverted(error)) return undefined;
      throw error;
    }
  }

  /** The owner of an agent NFT, or undefined when never minted or burned. */
  async ownerOf(agentId: bigint): Promise<Address | undefined> {
    try {
      return await this.client.readContract({ ...this.registry, functionName: 'ownerOf', args: [agentId] });
    } catch (error) {
      if (reverted(error)) return undefined;
      throw error;
    }
  }

  isVerifiedAgent(agentKey: Hex): Promise<boolean> {
    return this.client.readContract({ ...this.registry, functionName: 'isVerifiedAgent', args: [agentKey] });
  }

  /** Nonce of the ECDSA registration challenge for an agent address. */
  registrationNonce(agent: Address): Promise<bigint> {
    return this.client.readContract({ ...this.registry, functionName: 'agentNonces', args: [agent] });
  }

  /**
   * Whether `signer` signed the 32 raw bytes `hash` as a personal message: ECDSA for an account with a key,
   * ERC-1271 for a deployed smart account, ERC-6492 for one not deployed yet (viem's universal validator, one
   * eth_call). False for a signature that does not verify; an RPC failure throws.
   */
  personalSignatureIsValid(signer: Address, hash: Hex, signature: Hex): Promise<boolean> {
    return this.client.verifyMessage({ address: signer, message: { raw: hash }, signature });
  }

  ed25519Nonce(publicKey: Hex): Promise<bigint> {
    return this.client.readContract({ ...this.registry, functionName: 'ed25519Nonce', args: [publicKey] });
  }

  agentsForNullifier(nullifier: bigint): Promise<readonly bigint[]> {
    return this.client.readContract({ ...this.registry, functionName: 'getAgentsForNullifier', args: [nullifier] });
  }

  agentCountForHuman(nullifier: bigint): Promise<bigint> {
    return this.client.readContract({ ...this.registry, functionName: 'getAgentCountForHuman', args: [nullifier] });
  }

  /** The six hub config ids, index = config digit. */
  async configIds(): Promise<readonly Hex[]> {
    return this.client.multicall({
      allowFailure: false,
      contracts: [0n, 1n, 2n, 3n, 4n, 5n].map((i) => ({ ...this.registry, functionName: 'configIds', args: [i] }) as const),
    });
  }

  selfProofProvider(): Promise<Address> {
    return this.client.readContract({ ...this.registry, functionName: 'selfProofProvider' });
  }

  maxAgentsPerHuman(): Promise<bigint> {
    return this.client.readContract({ ...this.registry, functionName: 'maxAgentsPerHuman' });
  }

  /** proofExpiresAt(agentId): unix seconds, 0 without a proof. */
  proofExpiresAt(agentId: bigint): Promise<bigint> {
    return readProofExpiry(this.client, { registry: this.address, agentId });
  }

  /** What a mined transaction did at this registry; undefined while it is not mined. */
  transaction(hash: Hex): Promise<RegistryTransaction | undefined> {
    return readRegistryTransaction(this.client, { registry: this.address, hash });
  }

  /** Whether a transaction submitted a proof to this registry, and for whom. */
  proofSubmission(hash: Hex): Promise<ProofSubmission> {
    return readProofSubmission(this.client, { registry: this.address, hash });
  }

  /** The transaction that minted `agentId`, from the Registered logs of `block` (the agent's registeredAtBlock). */
  registrationTransaction(agentId: bigint, block: bigint): Promise<Hex | undefined> {
    return findRegistrationTransaction(this.client, { registry: this.address, agentId, block });
  }

  async providerInfo(provider: Address): Promise<ProviderInfo> {
    const [name, strength] = await this.client.multicall({
      allowFailure: false,
      contracts: [
        { address: provider, abi: humanProofProviderAbi, functionName: 'providerName' },
        { address: provider, abi: humanProofProviderAbi, functionName: 'verificationStrength' },
      ],
    });
    return { name, verificationStrength: Number(strength) };
  }
}
