// Identify sessions: the human proves ("I0") and the registry emits NullifierIdentified; the service answers
// with the nullifier and the human's agents. The proof's userId is an address unique to the session (low 20
// bytes of keccak256(sessionId)), so the reported transaction is accepted only if its verifySelfProof input
// carries that userIdentifier, and only that transaction's NullifierIdentified event is read — never "the
// latest event", which could be another human's.
import { type Address, getAddress, keccak256, slice, toHex } from 'viem';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { identifyUserData } from '../core/user-data.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow, type StatusBase } from './session-flow.js';
import { type IdentifyRecord, newSessionId } from './session-record.js';
import { SessionTokens } from './session-token.js';

export interface IdentifyRequest {
  network?: string;
}

export interface IdentifySession extends OpenedSession {
  network: NetworkName;
}

export interface IdentifyStatus extends StatusBase {
  nullifier?: string;
  agentCount?: number;
  agentIds?: number[];
}

/** The proof userId of an identify session: nobody's wallet, just this session's tag. */
export const identifyUserId = (sessionId: string): Address => getAddress(slice(keccak256(toHex(sessionId)), 12));

export class IdentifyService extends ChainSyncedSessions<'identify', IdentifyStatus> {
  constructor(private readonly deps: FlowDeps) {
    super(new SessionFlow(deps, 'identify'));
  }

  async start(request: IdentifyRequest): Promise<IdentifySession> {
    const network = resolveNetwork(request.network ?? 'mainnet');
    const now = this.deps.clock();
    const id = newSessionId();
    const record: IdentifyRecord = {
      id,
      type: 'identify',
      stage: 'qr-ready',
      network,
      userId: identifyUserId(id),
      userDefinedData: identifyUserData(0),
      configIndex: 0,
      disclosures: { minimumAge: 0, ofac: false, nationality: false, name: false },
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record);
    return { ...session, network };
  }

  async status(token: string): Promise<IdentifyStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    const base = await this.flow.statusBase(claims, synced);
    const { nullifier } = synced;
    if (synced.stage !== 'completed' || nullifier === undefined) return base;
    // The human's agents as they are now.
    const agentIds = await this.deps.chains.get(synced.network).registry.agentsForNullifier(BigInt(nullifier));
    return { ...base, nullifier, agentCount: agentIds.length, agentIds: agentIds.map(Number) };
  }

  /** Reads the reported transaction, once the chain confirms it as this session's proof: its NullifierIdentified event. */
  protected async syncWithChain(record: IdentifyRecord): Promise<IdentifyRecord> {
    const { record: followed, confirmed } = await this.flow.followReport(record, 'The identify transaction reverted on chain');
    if (!confirmed) return followed;
    const [nullifier] = confirmed.identified;
    if (nullifier === undefined)
      return this.flow.fail(followed, `Transaction ${confirmed.hash} did not identify a human (no NullifierIdentified event)`);
    return this.flow.complete(followed, { txHash: confirmed.hash, nullifier: nullifier.toString() });
  }
}
