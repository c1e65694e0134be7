// At start, before the service answers anything: no session may claim what the chain does not hold. A session
// completes only once its block is in the local chain's state file (makeDurable), but a DATA_DIR written by an older
// version, a state file restored from a backup or deleted on its own, can leave completed sessions whose agent,
// burn, refresh or identification the chain no longer has (and an agent id the chain may hand to someone else).
//
// Decision: such a session still open (its tokens live) goes back to qr-ready, as if the human had not proven
// yet: the same deep link works again (the registry's nonces went back with its state) and the status follows the
// chain as usual from there, completing with whatever id the chain gives the agent. One past its expiry can never
// be proven again: it moves to failed, saying why (and no longer names the agent or transaction). Only embedded chains are checked: an external chain does not
// lose blocks this way, and reading every completed session from Celo at each start would cost a round trip each.
import type { ChainGateway, NetworkGateway } from '../chain/gateway.js';
import type { NetworkName } from '../core/networks.js';
import type { Clock } from '../store/key-value-store.js';
import type { SessionRecord, SessionType } from './session-record.js';
import type { SessionRepository } from './session-repository.js';

export interface ReconciledSession {
  id: string;
  type: SessionType;
  network: NetworkName;
  stage: 'qr-ready' | 'failed';
  reason: string;
}

export interface ReconciliationDeps {
  chains: ChainGateway;
  sessions: SessionRepository;
  clock: Clock;
  /** A session that could not be checked (a malformed record, a failed read): left as it is, the start goes on. */
  onError?: (sessionId: string, error: unknown) => void;
}

/** Sessions checked at once (their reads share JSON-RPC batches). */
const CONCURRENCY = 32;

/** What the chain must still hold for a completed session; a description of what is missing when it does not. */
async function missingOutcome(record: SessionRecord, gateway: NetworkGateway): Promise<string | undefined> {
  const { registry } = gateway;
  const network = record.network;
  switch (record.type) {
    case 'register': {
      if (record.agentId === undefined) return undefined;
      const agentId = await registry.agentIdOf(record.agentKey);
      return agentId === BigInt(record.agentId) ? undefined : `the ${network} chain no longer holds agent ${record.agentId} for this key`;
    }
    case 'deregister': {
      const agentId = BigInt(record.agentId);
      const [keyAgent, owner] = await Promise.all([registry.agentIdOf(record.agentKey), registry.ownerOf(agentId)]);
      return keyAgent !== agentId && owner === undefined ? undefined : `the ${network} chain holds agent ${record.agentId} again`;
    }
    case 'refresh': {
      const expiresAt = await registry.proofExpiresAt(BigInt(record.agentId));
      return expiresAt > BigInt(record.previousExpiresAt)
        ? undefined
        : `the ${network} chain no longer holds the refreshed proof of agent ${record.agentId}`;
    }
    case 'identify': {
      if (!record.txHash) return undefined;
      const transaction = await registry.transaction(record.txHash);
      return transaction?.status === 'success' ? undefined : `the ${network} chain no longer holds transaction ${record.txHash}`;
    }
  }
}

/** The record as it was before the human proved: what completion and the identity app's report added is dropped, so nothing names an outcome the chain does not hold. */
function reopened(record: SessionRecord): SessionRecord {
  const copy: Record<string, unknown> = { ...record, stage: 'qr-ready' };
  for (const field of ['callback', 'txHash', 'completedAt', 'failureReason', 'agentId', 'credentials', 'nullifier']) {
    // deregistration and refresh name their agent from the start: theirs stays
    if (field === 'agentId' && record.type !== 'register') continue;
    delete copy[field];
  }
  return copy as SessionRecord;
}

export class SessionReconciliation {
  constructor(private readonly deps: ReconciliationDeps) {}

  /** Checks every completed session of an embedded network against its chain; returns those it changed. */
  async run(): Promise<ReconciledSession[]> {
    const embedded = new Set(
      this.deps.chains
        .all()
        .filter((gateway) => gateway.embedded)
        .map((gateway) => gateway.network),
    );
    if (embedded.size === 0) return [];
    const ids = await this.deps.sessions.ids();
    const changed: ReconciledSession[] = [];
    for (let start = 0; start < ids.length; start += CONCURRENCY) {
      const batch = ids.slice(start, start + CONCURRENCY);
      const results = await Promise.all(
        batch.map((id) =>
          this.#check(id, embedded).catch((error: unknown) => {
            this.deps.onError?.(id, error);
            return undefined;
          }),
        ),
      );
      for (const result of results) if (result) changed.push(result);
    }
    return changed;
  }

  async #check(id: string, embedded: ReadonlySet<NetworkName>): Promise<ReconciledSession | undefined> {
    const record = await this.deps.sessions.get(id);
    if (record?.stage !== 'completed' || !embedded.has(record.network)) return undefined;
    const missing = await missingOutcome(record, this.deps.chains.get(record.network));
    if (!missing) return undefined;
    const open = record.expiresAt > this.deps.clock();
    const reason = `${missing}: its state was lost after the session completed`;
    // Keyed by the completion that was checked: an instance sharing the store that completed the session anew
    // meanwhile (with what its chain holds now) is not taken back.
    let changed = false;
    await this.deps.sessions.update(id, record.type, (current) => {
      changed = current.stage === 'completed' && current.completedAt === record.completedAt && current.txHash === record.txHash;
      if (!changed) return current;
      const cleared = reopened(current);
      return (open ? cleared : { ...cleared, stage: 'failed', failureReason: reason }) as typeof current;
    });
    if (!changed) return undefined;
    return { id, type: record.type, network: record.network, stage: open ? 'qr-ready' : 'failed', reason };
  }
}
