// Which agents belong to a human wallet, built from the registry's logs (its ERC-721 is not enumerable): an
// address's agents are those whose NFT it owns (ERC-721 Transfer) and those it is the guardian of (GuardianSet).
// The network's log follower backfills it from the registry's deploy block and keeps it current; burns (Transfer
// to the zero address) remove the agent from both sides.
//
// Who counts, by registration mode: linked and privy agents -> the human's wallet (owner); wallet-free and
// smartwallet agents -> the agent's own address (owner) and the guardian, if one was set; Ed25519 agents -> the
// address derived from the key (owner) and the guardian (ed25519-linked).
import { type Address, getAddress, zeroAddress } from 'viem';
import { decodeRegistryLog, type RegistryLogLike } from '../chain/actions/registry-logs.js';

class AddressIndex {
  readonly #byAgent = new Map<bigint, Address>();
  readonly #byAddress = new Map<Address, Set<bigint>>();

  set(agentId: bigint, address: Address): void {
    this.remove(agentId);
    if (address === zeroAddress) return;
    this.#byAgent.set(agentId, address);
    let set = this.#byAddress.get(address);
    if (!set) {
      set = new Set();
      this.#byAddress.set(address, set);
    }
    set.add(agentId);
  }

  remove(agentId: bigint): void {
    const address = this.#byAgent.get(agentId);
    if (address === undefined) return;
    this.#byAgent.delete(agentId);
    const set = this.#byAddress.get(address);
    set?.delete(agentId);
    if (set?.size === 0) this.#byAddress.delete(address);
  }

  clear(): void {
    this.#byAgent.clear();
    this.#byAddress.clear();
  }

  agentsOf(address: Address): ReadonlySet<bigint> {
    return this.#byAddress.get(address) ?? new Set();
  }
}

export class HumanAgentIndex {
  readonly #owners = new AddressIndex();
  readonly #guardians = new AddressIndex();

  /** Applies a range of registry logs, in order. */
  apply(logs: readonly RegistryLogLike[]): void {
    for (const log of logs) {
      const effect = decodeRegistryLog(log);
      if (effect.kind !== 'agent') continue;
      if (effect.owner === zeroAddress) {
        this.#owners.remove(effect.agentId);
        this.#guardians.remove(effect.agentId);
      } else if (effect.owner !== undefined) {
        this.#owners.set(effect.agentId, effect.owner);
      }
      if (effect.guardian !== undefined) this.#guardians.set(effect.agentId, effect.guardian);
    }
  }

  /** Forgets every agent (the follower starts over from the deploy block and delivers every log again). */
  clear(): void {
    this.#owners.clear();
    this.#guardians.clear();
  }

  /** The agents `address` owns or is the guardian of, in ascending id order. */
  agentsOf(address: Address): bigint[] {
    const checksummed = getAddress(address);
    const ids = new Set([...this.#owners.agentsOf(checksummed), ...this.#guardians.agentsOf(checksummed)]);
    return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
