// Identify sessions: the human proves ("I0") and the registry emits NullifierIdentified; the service answers
// with the nullifier and the human's agents. The proof's userId is an address unique to the session (low 20
// bytes of keccak256(sessionId)), so the reported transaction is accepted only if its verifySelfProof input
// carries that userIdentifier, and only that transaction's NullifierIdentified event is read — never "the
// latest event", which could be another human's.
import { type Address, getAddress, keccak256, slice, toHex } from 'viem';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { identifyUserData } from '../core/user-data.js';
import { type IdentifyRecord, newSessionId } from '../sessions/session-record.js';
import { SessionTokens } from '../sessions/session-token.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow, type StatusBase } from './session-flow.js';

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

  /** Reads the reported transaction: this session's proof (by userIdentifier) and its NullifierIdentified event. */
  protected async syncWithChain(record: IdentifyRecord): Promise<IdentifyRecord> {
    const txHash = record.callback?.txHash;
    if (record.stage !== 'proof-received' || !txHash) return record;
    const gateway = this.deps.chains.get(record.network);
    const transaction = await gateway.registry.transaction(txHash);
    if (!transaction) return record; // not mined (yet): ask again at the next status
    if (transaction.status === 'reverted') return this.flow.fail(record, 'The identify transaction reverted on chain');

    const submission = await gateway.registry.proofSubmission(txHash);
    if (submission.kind === 'not-to-registry') return this.flow.fail(record, `Transaction ${txHash} is not a proof submitted to the registry`);
    if (submission.kind === 'not-a-proof') return this.flow.fail(record, `Transaction ${txHash} is not a verifySelfProof call`);
    if (submission.userIdentifier !== BigInt(record.userId)) return this.flow.fail(record, `Transaction ${txHash} carries another session's proof`);

    const [nullifier] = transaction.identified;
    if (nullifier === undefined) return this.flow.fail(record, `Transaction ${txHash} did not identify a human (no NullifierIdentified event)`);
    return this.flow.complete(record, { txHash, nullifier: nullifier.toString() });
  }
}
