// Deregistration sessions: the human who registered an agent proves again ("X" + config + agent address) and
// the registry burns the NFT. The chain is the source of truth: the session completes when the agent's key
// no longer resolves to the agent / its NFT is burned, whoever submitted the proof.
import { type Address, getAddress, type Hex, isAddress } from 'viem';
import { addressAgentKey } from '../core/agent-key.js';
import { configIndexFor } from '../core/disclosures.js';
import { badRequest, notFound } from '../core/errors.js';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { advancedDeregisterUserData } from '../core/user-data.js';
import { newSessionId, type SessionRecord } from '../sessions/session-record.js';
import { SessionTokens } from '../sessions/session-token.js';
import { type DisclosureRequest, parseDisclosures } from './registration.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow } from './session-flow.js';
import type { SessionView } from './session-view.js';

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

export interface DeregistrationStatus extends SessionView {
  agentId: number;
  agentAddress: Address;
  network: NetworkName;
  txHash?: Hex;
  error?: string;
}

export class DeregistrationService extends ChainSyncedSessions {
  constructor(private readonly deps: FlowDeps) {
    super(new SessionFlow(deps, 'deregister', '/api/agent/deregister'));
  }

  async start(request: DeregistrationRequest): Promise<DeregistrationSession> {
    const network = resolveNetwork(request.network ?? 'mainnet');
    if (request.agentAddress === undefined || !isAddress(request.agentAddress, { strict: false })) {
      throw badRequest('agentAddress must be a 0x-prefixed 20-byte hex address: the agent address as GET /api/agent/info reports it');
    }
    const agentAddress = getAddress(request.agentAddress);
    const disclosures = parseDisclosures(request.disclosures);
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
    const record: SessionRecord = {
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
      exportable: false,
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record);
    return { ...session, agentId: Number(agentId), agentAddress, network, configIndex };
  }

  async status(token: string): Promise<DeregistrationStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    const view = await this.flow.view(claims, synced);
    return {
      ...view,
      agentId: Number(synced.agentId),
      agentAddress: synced.agentAddress as Address,
      network: synced.network,
      ...(synced.txHash ? { txHash: synced.txHash } : {}),
      ...(synced.stage === 'failed' && synced.failureReason ? { error: synced.failureReason } : {}),
    };
  }

  /** Completed once the agent's key no longer resolves to the agent and its NFT is burned; failed on a reverted proof. */
  protected async syncWithChain(record: SessionRecord): Promise<SessionRecord> {
    if (record.stage === 'completed') return record;
    const gateway = this.deps.chains.get(record.network);
    const agentId = BigInt(record.agentId as string);
    const [keyAgent, owner] = await Promise.all([gateway.registry.agentIdOf(record.agentKey as Hex), gateway.registry.ownerOf(agentId)]);
    if (keyAgent !== agentId && owner === undefined) {
      const completedAt = this.deps.clock();
      return this.deps.sessions.update(record.id, (current) => {
        if (current.stage === 'completed') return current;
        const { failureReason: _dropped, ...rest } = current;
        return { ...rest, stage: 'completed', completedAt, ...(current.callback?.txHash ? { txHash: current.callback.txHash } : {}) };
      });
    }
    return this.flow.failIfReverted(record, 'The deregistration transaction reverted on chain');
  }
}
