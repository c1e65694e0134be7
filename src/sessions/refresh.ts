// Proof refresh sessions: the human behind an agent proves again ("F" + the agent's own config digit +
// agentId, hex form) and the registry renews the proof in place. The chain is the source of truth: the
// session completes when proofExpiresAt(agentId) moved past the value seen at start, or the reported
// transaction carries HumanProofRefreshed for this agent.
// The registry stores the newest proof's credentials in place of the old ones, so a refresh that did not ask for
// a disclosed credential erases it: by default a refresh asks again for what the agent shows, and a session
// always says which credentials it will erase (replacesCredentials).
import {
  credentialsDroppedBy,
  type DisclosedCredential,
  disclosuresKeeping,
  type PublicCredentials,
  publicCredentials,
} from '../core/credentials.js';
import {
  type ConfigIndex,
  configIndexFor,
  type DisclosureRequest,
  disclosuresForConfigIndex,
  isConfigIndex,
  requestedDisclosures,
} from '../core/disclosures.js';
import { badRequest, notFound } from '../core/errors.js';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { refreshUserData } from '../core/user-data.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow, type StatusBase } from './session-flow.js';
import { newSessionId, type RefreshRecord } from './session-record.js';
import { SessionTokens } from './session-token.js';

export interface RefreshRequest {
  agentId?: number | string;
  network?: string;
  disclosures?: DisclosureRequest;
}

export interface RefreshSession extends OpenedSession {
  agentId: number;
  network: NetworkName;
  configIndex: number;
  /** Credentials the agent shows now that this proof is not asked to disclose: erased once it lands. */
  replacesCredentials: DisclosedCredential[];
}

export interface RefreshStatus extends StatusBase {
  agentId: number;
  replacesCredentials: DisclosedCredential[];
  /** Once completed: unix seconds. */
  proofExpiresAt?: number;
  isProofFresh?: boolean;
  verificationStrength?: number;
  credentials?: PublicCredentials;
}

const ZERO_CONFIG = `0x${'0'.repeat(64)}`;

function parseAgentId(value: number | string | undefined): bigint {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : (value ?? '');
  if (!/^[1-9]\d{0,76}$/.test(text)) throw badRequest('agentId must be a positive integer (a number or a decimal string)');
  return BigInt(text);
}

const describeConfig = (index: ConfigIndex): string => {
  const d = disclosuresForConfigIndex(index);
  return `config ${index} (minimumAge ${d.minimumAge}, ofac ${d.ofac})`;
};

export class RefreshService extends ChainSyncedSessions<'refresh', RefreshStatus> {
  constructor(private readonly deps: FlowDeps) {
    super(new SessionFlow(deps, 'refresh'));
  }

  async start(request: RefreshRequest): Promise<RefreshSession> {
    const network = resolveNetwork(request.network ?? 'mainnet');
    const agentId = parseAgentId(request.agentId);
    const gateway = this.deps.chains.get(network);
    const agent = await gateway.registry.readAgent(agentId);
    if (!agent) throw notFound(`Agent ${agentId} is not registered on ${network}`);
    if (!agent.hasHumanProof) throw badRequest(`Agent ${agentId} has no proof of human to refresh`);
    if (BigInt(agent.configId) === 0n || agent.configId === ZERO_CONFIG) {
      throw badRequest(`Agent ${agentId} was registered without a disclosure config and cannot be refreshed: register it again`);
    }
    const configIds = await gateway.registry.configIds();
    const agentIndex = configIds.findIndex((id) => id.toLowerCase() === agent.configId.toLowerCase());
    if (!isConfigIndex(agentIndex))
      throw badRequest(`Agent ${agentId} has a config (${agent.configId}) this registry no longer offers: it cannot be refreshed`);

    // Without disclosures, the agent's own config and every credential it shows; with them, they must select its
    // config (the registry refuses a change), and what they leave out is named as replaced.
    const shown = publicCredentials(agent.credentials);
    const disclosures = request.disclosures
      ? requestedDisclosures(request.disclosures)
      : { ...requestedDisclosures(), ...disclosuresForConfigIndex(agentIndex), ...disclosuresKeeping(shown) };
    const configIndex = configIndexFor(disclosures);
    if (configIds[configIndex]?.toLowerCase() !== agent.configId.toLowerCase()) {
      throw badRequest(
        `The disclosures select ${describeConfig(configIndex)}, but agent ${agentId} has ${describeConfig(agentIndex)}: a refresh must prove the agent's own config`,
      );
    }

    const replacesCredentials = credentialsDroppedBy(shown, disclosures);
    const now = this.deps.clock();
    const record: RefreshRecord = {
      id: newSessionId(),
      type: 'refresh',
      stage: 'qr-ready',
      network,
      agentId: agentId.toString(),
      agentKey: agent.agentKey,
      userId: agent.owner,
      userDefinedData: refreshUserData({ configIndex, agentId }),
      configIndex,
      disclosures,
      previousExpiresAt: agent.proofExpiresAt.toString(),
      replacesCredentials,
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record);
    return { ...session, agentId: Number(agentId), network, configIndex, replacesCredentials };
  }

  async status(token: string): Promise<RefreshStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    const base = {
      ...(await this.flow.statusBase(claims, synced)),
      agentId: Number(synced.agentId),
      replacesCredentials: synced.replacesCredentials ?? [],
    };
    if (synced.stage !== 'completed') return base;
    // The verification details as the chain has them now.
    const gateway = this.deps.chains.get(synced.network);
    const agent = await gateway.registry.readAgent(BigInt(synced.agentId));
    if (!agent) return base;
    const { verificationStrength } = await gateway.registry.providerInfo(agent.proofProvider);
    return {
      ...base,
      proofExpiresAt: Number(agent.proofExpiresAt),
      isProofFresh: agent.isProofFresh,
      verificationStrength,
      credentials: publicCredentials(agent.credentials),
    };
  }

  /** Completed once proofExpiresAt moved past the value seen at start, or the reported transaction refreshed this agent. */
  protected async syncWithChain(record: RefreshRecord): Promise<RefreshRecord> {
    if (record.stage === 'completed') return record;
    const gateway = this.deps.chains.get(record.network);
    const agentId = BigInt(record.agentId);
    if ((await gateway.registry.proofExpiresAt(agentId)) > BigInt(record.previousExpiresAt)) return this.flow.complete(record);
    const { record: followed, confirmed } = await this.flow.followReport(record, 'The refresh transaction reverted on chain');
    return confirmed?.refreshed.includes(agentId) ? this.flow.complete(followed, { txHash: confirmed.hash }) : followed;
  }
}
