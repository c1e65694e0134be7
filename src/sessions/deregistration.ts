// Deregistration sessions: the human who registered an agent proves again ("X" + config + agent address) and
// the registry burns the NFT. The chain is the source of truth: the session completes when the agent's key
// no longer resolves to the agent / its NFT is burned, whoever submitted the proof.
import type { Address, Hex } from 'viem';
import { parseAccountAddress } from '../core/addresses.js';
import { addressAgentKey } from '../core/agent-key.js';
import { configIndexFor, type DisclosureRequest, requestedDisclosures } from '../core/disclosures.js';
import { notFound } from '../core/errors.js';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { advancedDeregisterUserData } from '../core/user-data.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow, type StatusBase } from './session-flow.js';
import { type DeregistrationRecord, newSessionId } from './session-record.js';
import { SessionTokens } from './session-token.js';

export interface DeregistrationRequest {
  network?: string;
  agentAddress?: string;
  disclosures?: DisclosureRequest;
}

export interface DeregistrationSession extends OpenedSession {
  agentId: number;
  agentAddress: Address;
  network: NetworkName;
  configIndex: number;
}

export interface DeregistrationStatus extends StatusBase {
  agentId: number;
  agentAddress: Address;
}

export class DeregistrationService extends ChainSyncedSessions<'deregister', DeregistrationStatus> {
  constructor(private readonly deps: FlowDeps) {
    super(new SessionFlow(deps, 'deregister'));
  }

  async start(request: DeregistrationRequest): Promise<DeregistrationSession> {
    const network = resolveNetwork(request.network ?? 'mainnet');
    const agentAddress = parseAccountAddress(request.agentAddress, 'agentAddress', 'the agent address as GET /api/agent/info reports it');
    const disclosures = requestedDisclosures(request.disclosures);
    const configIndex = configIndexFor(disclosures);
    const gateway = this.deps.chains.get(network);

    // A padded-address key (ECDSA agents), else the Ed25519 key the derived address stands for (our registry only).
    let agentKey: Hex = addressAgentKey(agentAddress);
    let agentId = await gateway.registry.agentIdOf(agentKey);
    if (agentId === 0n) {
      const ed25519Key = await gateway.registry.ed25519KeyForAddress(agentAddress);
      if (ed25519Key) {
        agentKey = ed25519Key;
        agentId = await gateway.registry.agentIdOf(ed25519Key);
      }
    }
    const owner = agentId === 0n ? undefined : await gateway.registry.ownerOf(agentId);
    if (!owner) throw notFound(`Agent ${agentAddress} is not registered on ${network}`);

    const now = this.deps.clock();
    const record: DeregistrationRecord = {
      id: newSessionId(),
      type: 'deregister',
      stage: 'qr-ready',
      network,
      agentAddress,
      agentKey,
      agentId: agentId.toString(),
      userId: owner,
      userDefinedData: advancedDeregisterUserData({ configIndex, agent: agentAddress }),
      configIndex,
      disclosures,
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record);
    return { ...session, agentId: Number(agentId), agentAddress, network, configIndex };
  }

  async status(token: string): Promise<DeregistrationStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    return { ...(await this.flow.statusBase(claims, synced)), agentId: Number(synced.agentId), agentAddress: synced.agentAddress };
  }

  /** Completed once the agent's key no longer resolves to the agent and its NFT is burned; failed on a reverted proof. */
  protected async syncWithChain(record: DeregistrationRecord): Promise<DeregistrationRecord> {
    if (record.stage === 'completed') return record;
    const gateway = this.deps.chains.get(record.network);
    const agentId = BigInt(record.agentId);
    const [keyAgent, owner] = await Promise.all([gateway.registry.agentIdOf(record.agentKey), gateway.registry.ownerOf(agentId)]);
    if (keyAgent !== agentId && owner === undefined) return this.flow.complete(record);
    return (await this.flow.followReport(record, 'The deregistration transaction reverted on chain')).record;
  }
}
