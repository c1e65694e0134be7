// What a caller may keep of a query answer, and for how long. The query service knows when an answer stops being
// current (a registry event, a reorganisation, a proof's expiry, its log follower falling behind); whoever keeps
// answers (the HTTP response cache) learns it from here without knowing chains: an answer names the keys it depends
// on, and the service announces each key whose answers changed.
import type { Address } from 'viem';
import type { NetworkName } from '../core/networks.js';

/** How long an answer may be reused: until `validUntilMs` (service clock), while `live()` holds, until one of `keys` changes. */
export interface Reuse {
  keys: readonly string[];
  validUntilMs: number;
  /** False while the service could miss changes (its log follower is not live): reuse nothing then, keep what is kept. */
  live(): boolean;
}

/** An answer, and how long it may be reused; no `reuse`: it must not be kept (the service itself did not keep it). */
export interface Reusable<T> {
  value: T;
  reuse?: Reuse;
}

/** Hears the keys whose answers are no longer current, synchronously, in the tick the service learned it. */
export type ChangeListener = (key: string) => void;

/** What every agent's key of `network` begins with (followed by the agent id). */
export const agentKeyPrefix = (network: NetworkName): string => `${network}/agent/`;

/**
 * The keys answers depend on. A network's own key changes with everything of that network (a reorganisation); the
 * signing key's with everything signed.
 */
export const answerKeys = {
  network: (network: NetworkName): string => network,
  agent: (network: NetworkName, agentId: bigint): string => `${agentKeyPrefix(network)}${agentId}`,
  nullifier: (network: NetworkName, nullifier: bigint): string => `${network}/nullifier/${nullifier}`,
  human: (network: NetworkName, address: Address): string => `${network}/human/${address.toLowerCase()}`,
  /** Whatever the service signed: it changes when the key that signs does. */
  signingKey: (): string => 'signing-key',
};

/** Reuse of what the service signed and nothing else changes: until the key that signs does. */
export const UNTIL_SIGNING_KEY_CHANGES: Reuse = { keys: [answerKeys.signingKey()], validUntilMs: Number.POSITIVE_INFINITY, live: () => true };

/** The listeners of one service's changes. */
export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();

  listen(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  changed(key: string): void {
    for (const listener of this.#listeners) listener(key);
  }
}
