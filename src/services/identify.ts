// Identify sessions: the human proves ("I0") and the registry emits NullifierIdentified; the service answers
// with the nullifier and the human's agents. The proof's userId is an address unique to the session (low 20
// bytes of keccak256(sessionId)), so the reported transaction is accepted only if its verifySelfProof input
// carries that userIdentifier, and only that transaction's NullifierIdentified event is read — never "the
// latest event", which could be another human's.
import { type Address, decodeFunctionData, getAddress, type Hex, isAddressEqual, keccak256, parseEventLogs, slice, toHex } from 'viem';
import { agentRegistryAbi } from '../chain/artifacts/index.js';
import { type NetworkName, resolveNetwork } from '../core/networks.js';
import { identifyUserData } from '../core/user-data.js';
import { newSessionId, type SessionRecord } from '../sessions/session-record.js';
import { SessionTokens } from '../sessions/session-token.js';
import { ChainSyncedSessions, type FlowDeps, type OpenedSession, SessionFlow } from './session-flow.js';
import type { SessionView } from './session-view.js';

export interface IdentifyRequest {
  network?: string;
}

export interface IdentifySession extends OpenedSession {
  network: NetworkName;
}

export interface IdentifyStatus extends SessionView {
  network: NetworkName;
  txHash?: Hex;
  nullifier?: string;
  agentCount?: number;
  agentIds?: number[];
  error?: string;
}

/** The proof userId of an identify session: nobody's wallet, just this session's tag. */
export const identifyUserId = (sessionId: string): Address => getAddress(slice(keccak256(toHex(sessionId)), 12));

export class IdentifyService extends ChainSyncedSessions {
  constructor(private readonly deps: FlowDeps) {
    super(new SessionFlow(deps, 'identify', '/api/agent/identify'));
  }

  async start(request: IdentifyRequest): Promise<IdentifySession> {
    const network = resolveNetwork(request.network ?? 'mainnet');
    const now = this.deps.clock();
    const id = newSessionId();
    const record: SessionRecord = {
      id,
      type: 'identify',
      stage: 'qr-ready',
      network,
      userId: identifyUserId(id),
      userDefinedData: identifyUserData(0),
      configIndex: 0,
      disclosures: { minimumAge: 0, ofac: false, nationality: false, name: false },
      exportable: false,
      createdAt: now,
      expiresAt: now + SessionTokens.LIFETIME_MS,
    };
    const { session } = await this.flow.create(record);
    return { ...session, network };
  }

  async status(token: string): Promise<IdentifyStatus> {
    const { claims, record } = await this.flow.open(token);
    const synced = await this.syncWithChain(record);
    const view = await this.flow.view(claims, synced);
    const base = {
      ...view,
      network: synced.network,
      ...(synced.txHash ? { txHash: synced.txHash } : {}),
      ...(synced.stage === 'failed' && synced.failureReason ? { error: synced.failureReason } : {}),
    };
    const nullifier = synced.details?.['nullifier'] as string | undefined;
    if (synced.stage !== 'completed' || nullifier === undefined) return base;
    // The human's agents as they are now.
    const agentIds = await this.deps.chains.get(synced.network).registry.agentsForNullifier(BigInt(nullifier));
    return { ...base, nullifier, agentCount: agentIds.length, agentIds: agentIds.map(Number) };
  }

  /** Reads the reported transaction: this session's proof (by userIdentifier) and its NullifierIdentified event. */
  protected async syncWithChain(record: SessionRecord): Promise<SessionRecord> {
    const txHash = record.callback?.txHash;
    if (record.stage !== 'proof-received' || !txHash) return record;
    const gateway = this.deps.chains.get(record.network);
    const receipt = await gateway.client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
    if (!receipt) return record; // not mined (yet): ask again at the next status
    const fail = (reason: string) =>
      this.deps.sessions.update(record.id, (current) =>
        current.stage === 'proof-received' ? { ...current, stage: 'failed', failureReason: reason } : current,
      );
    if (receipt.status === 'reverted') return fail('The identify transaction reverted on chain');

    const transaction = await gateway.client.getTransaction({ hash: txHash });
    if (!transaction.to || !isAddressEqual(transaction.to, gateway.contracts.registry)) {
      return fail(`Transaction ${txHash} is not a proof submitted to the registry`);
    }
    let userIdentifier: bigint;
    try {
      const call = decodeFunctionData({ abi: agentRegistryAbi, data: transaction.input });
      if (call.functionName !== 'verifySelfProof') throw new Error('not verifySelfProof');
      const [, userContextData] = call.args as readonly [Hex, Hex];
      userIdentifier = BigInt(slice(userContextData, 32, 64));
    } catch {
      return fail(`Transaction ${txHash} is not a verifySelfProof call`);
    }
    if (userIdentifier !== BigInt(record.userId)) return fail(`Transaction ${txHash} carries another session's proof`);

    const identified = parseEventLogs({ abi: agentRegistryAbi, logs: receipt.logs, eventName: 'NullifierIdentified' }).find((event) =>
      isAddressEqual(event.address, gateway.contracts.registry),
    );
    if (!identified) return fail(`Transaction ${txHash} did not identify a human (no NullifierIdentified event)`);
    const completedAt = this.deps.clock();
    return this.deps.sessions.update(record.id, (current) =>
      current.stage === 'completed'
        ? current
        : {
            ...current,
            stage: 'completed',
            completedAt,
            txHash,
            details: { ...current.details, nullifier: identified.args.nullifier.toString() },
          },
    );
  }
}
