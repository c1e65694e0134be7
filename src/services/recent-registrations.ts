// The transactions that minted recently registered agents, as the registry's Registered logs name them (the
// follower's deliveries and the node's WebSocket announcements). A registration session completes from them
// without a log search; an older agent's transaction is searched in the one block the registry says it was
// registered in. Bounded: only agents registered while the service ran are asked about this way.
import type { Hex } from 'viem';
import { type RegistryLogLike, registeredAgentId } from '../chain/actions/registry-logs.js';

/** More than the registrations of any session watch's lifetime on a busy chain; about 150 bytes each. */
const DEFAULT_CAPACITY = 10_000;

export class RecentRegistrations {
  readonly #byAgent = new Map<bigint, Hex>();
  readonly #capacity: number;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  /** Notes the Registered logs among `logs` (not those a reorganisation removed); the oldest go past the capacity. */
  note(logs: readonly (RegistryLogLike & { transactionHash: Hex | null; removed?: boolean })[]): void {
    for (const log of logs) {
      const agentId = registeredAgentId(log);
      if (agentId === undefined || !log.transactionHash || log.removed) continue;
      this.#byAgent.delete(agentId);
      this.#byAgent.set(agentId, log.transactionHash);
      if (this.#byAgent.size > this.#capacity) this.#byAgent.delete(this.#byAgent.keys().next().value as bigint);
    }
  }

  /** The transaction that minted `agentId`, when its log was seen. */
  transactionOf(agentId: bigint): Hex | undefined {
    return this.#byAgent.get(agentId);
  }

  /** A reorganisation or a restarted chain: the logs seen may no longer be the chain's. */
  clear(): void {
    this.#byAgent.clear();
  }
}
