// Cached chain reads of the public queries, per network, kept correct by the registry's own events.
//
// How "no answer is stale by more than one block" holds:
// 1. Every cached read carries the block it was read at (the lens returns block.number with its answer).
// 2. The network's RegistryEventFollower polls the registry's logs about once per block and, for each log,
//    drops the cached answers it touches: the agent named by the event, and for a registration or revocation
//    (which change a human's agent count) every cached agent sharing its nullifier and the nullifier's list.
// 3. A read is stored only if its block is at or after the follower's last processed block. Any event after
//    the read's block is then in a block the follower has not processed yet, so it will drop the entry when it
//    does, at the next poll. A read from before an event the follower has already applied (a read that raced
//    the invalidation) is answered but never stored. Invalidation and the follower's progress move in the same
//    tick, so no store can slip between them.
// 4. While the follower is not live (not started, still backfilling, or its polls failing), the cache is
//    bypassed: every request reads the chain.
// So an answer can lag the chain by at most the time between a block and the follower's next poll: one
// polling interval, which is set to about one block time.
//
// A proof provider's name and strength are the provider's own state, which no registry event announces (and a
// provider need not log its changes): at the end of every poll the follower reads the name and strength of every
// provider that cached agents show (one eth_call, batched with the poll's last eth_getLogs, at the block the poll
// ends at), and drops each cached agent whose provider now reads otherwise, in the tick the logs are applied.
// Not covered (and so not invalidated): an admin switching the registry's selfProofProvider to an already
// approved provider (no event is emitted then; isSelfProvider of cached agents may lag).
// Chain reorganisations: the follower notices dropped blocks (registry-events.ts) and the whole cache is dropped
// (clear()), as nothing records which entries came from which block.
// Proof freshness is time-dependent: the service derives it from proofExpiresAt at answer time, not from the
// cached isProofFresh alone.
//
// Each cached agent is a record: its view, and the answers the service has built from it (by shape), so a cached
// answer is built once. They go with the view.
//
// Whoever keeps answers built from these reads (the HTTP response cache) hears, through `onChange`, of every key
// whose reads it drops: an agent (an event naming it, a provider change, the bound), a nullifier's list, and the
// whole network (clear(), an event it cannot attribute). A kept answer is one whose record the cache holds
// (holds(), holdsList()), so it is dropped whenever its record is.

import type { Address, Hex } from 'viem';
import { decodedRange, type RegistryLogLike } from '../chain/actions/registry-logs.js';
import { AgentLens, type AgentView, type AtBlock } from '../chain/agent-lens.js';
import type { ChainClient } from '../chain/clients.js';
import type { RegistryEventFollower } from '../chain/registry-events.js';
import { serviceErrorOf } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import type { Metrics } from '../metrics.js';
import { answerKeys } from './answer-reuse.js';

/** An answer built from a cached agent's view. */
export interface PreparedAnswer<T = unknown> {
  value: T;
  /** Until when (ms of the service's clock) the answer holds: isVerified turns false at the proof's expiry. */
  validUntilMs: number;
  /** The kid of the key that signed it (a card): it holds only while that key signs. */
  signedWith?: string;
}

/** A cached agent: its view at one block, and the answers built from it, by shape. */
export interface AgentRecord {
  readonly view: AgentView;
  /** Keyed by the answer's shape and any request parameter it depends on besides the network and the agent. */
  readonly answers: Map<string, PreparedAnswer>;
}

interface CacheHooks<K, V> {
  follower: Pick<RegistryEventFollower, 'isLive' | 'processedBlock'>;
  metrics: Metrics;
  maxEntries: number;
  onStore?: (key: K, value: V) => void;
  onEvict?: (key: K, value: V) => void;
}

/** A read-through cache of chain reads that stores a read only when the follower will hear of later changes. */
class BlockCheckedCache<K, V> {
  readonly #entries = new Map<K, V>();
  /** Reads in flight, shared by concurrent misses; dropped when the key is invalidated meanwhile. */
  readonly #loading = new Map<K, Promise<AtBlock<V>>>();

  constructor(
    readonly name: string,
    private readonly hooks: CacheHooks<K, V>,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  async get(key: K, load: () => Promise<AtBlock<V>>): Promise<V> {
    const { follower, metrics } = this.hooks;
    if (!follower.isLive()) {
      metrics.cacheMiss(this.name);
      return (await load()).value;
    }
    // least recently used goes first when the cache is full: a hit moves the entry to the end
    const cached = this.hit(key);
    if (cached !== undefined) return cached;
    metrics.cacheMiss(this.name);
    let loading = this.#loading.get(key);
    if (!loading) {
      const started = load();
      loading = started;
      this.#loading.set(key, started);
      started.then(
        (read) => {
          if (this.#loading.get(key) !== started) return; // invalidated while reading
          this.#loading.delete(key);
          if (read.blockNumber >= follower.processedBlock && follower.isLive()) this.#store(key, read.value);
        },
        () => {
          if (this.#loading.get(key) === started) this.#loading.delete(key);
        },
      );
    }
    return (await loading).value;
  }

  /**
   * The cached value when get() would answer it from the cache without waiting (then counted as a hit, and moved to
   * the end of the eviction order), else undefined and nothing counted.
   */
  hit(key: K): V | undefined {
    if (!this.hooks.follower.isLive()) return undefined;
    const cached = this.#entries.get(key);
    if (cached === undefined) return undefined;
    this.hooks.metrics.cacheHit(this.name);
    this.#entries.delete(key);
    this.#entries.set(key, cached);
    return cached;
  }

  /** The cached value, without counting a lookup or refreshing its place. */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  delete(key: K): void {
    this.#loading.delete(key);
    const value = this.#entries.get(key);
    if (value === undefined) return;
    this.#entries.delete(key);
    this.hooks.onEvict?.(key, value);
  }

  clear(): void {
    this.#loading.clear();
    for (const key of [...this.#entries.keys()]) this.delete(key);
  }

  #store(key: K, value: V): void {
    this.delete(key);
    this.#entries.set(key, value);
    this.hooks.onStore?.(key, value);
    while (this.#entries.size > this.hooks.maxEntries) {
      const oldest = this.#entries.keys().next().value as K;
      this.delete(oldest);
    }
  }
}

export interface AgentCacheOptions {
  network: NetworkName;
  /** The network's one-call agent reads. */
  lens: Pick<AgentLens, 'agent' | 'agentsForNullifier'>;
  /** Unix time of a block (a chain read; cached here forever, since a block's timestamp never changes). */
  blockTimestamp: (blockNumber: bigint) => Promise<number>;
  /** The agent id of an agent key (0 when none) at a block, or at the latest block without one. */
  agentIdOf: (agentKey: Hex, blockNumber?: bigint) => Promise<bigint>;
  follower: RegistryEventFollower;
  metrics: Metrics;
  /** Per kind of entry (agents, nullifier lists, block timestamps), least recently used going first; default 10,000. */
  maxEntries?: number;
  /** Hears the key (answer-reuse.ts) of every agent, nullifier list or network whose reads are dropped. */
  onChange?: (key: string) => void;
}

const DEFAULT_MAX_ENTRIES = 10_000;

/** A map from a key to a set of values, for the reverse lookups invalidation needs. */
class SetMap<K, V> {
  readonly #sets = new Map<K, Set<V>>();

  add(key: K, value: V): void {
    const set = this.#sets.get(key);
    if (set) set.add(value);
    else this.#sets.set(key, new Set([value]));
  }

  delete(key: K, value: V): void {
    const set = this.#sets.get(key);
    set?.delete(value);
    if (set?.size === 0) this.#sets.delete(key);
  }

  keys(): K[] {
    return [...this.#sets.keys()];
  }

  /** The values of `key`, copied (callers delete while iterating). */
  values(key: K): V[] {
    return [...(this.#sets.get(key) ?? [])];
  }
}

/** One network's cached agent views, agent ids by key, nullifier lists and block timestamps. */
export class AgentCache {
  readonly #options: AgentCacheOptions;
  readonly #agents: BlockCheckedCache<bigint, AgentRecord>;
  readonly #nullifierLists: BlockCheckedCache<bigint, readonly bigint[]>;
  /** Cached agents by their nullifier, to drop them when the nullifier's agent count changes. */
  readonly #agentsOfNullifier = new SetMap<bigint, bigint>();
  /** Cached agents by their proof provider, to drop them when its name or strength changes. */
  readonly #agentsOfProvider = new SetMap<Address, bigint>();
  /** Agent ids by agent key (0n: no agent), what a signed request's key resolves to. */
  readonly #agentIds: BlockCheckedCache<Hex, bigint>;
  /** Cached keys by the agent id they resolved to, to drop them with the agent (0n: the keys of no agent yet). */
  readonly #keysOfAgent = new SetMap<bigint, Hex>();
  readonly #blockTimes = new Map<bigint, number>();
  readonly #blockTimesLoading = new Map<bigint, Promise<number>>();
  readonly #unsubscribe: (() => void)[];

  constructor(options: AgentCacheOptions) {
    this.#options = options;
    const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    const { follower, metrics, network } = options;
    const changed = options.onChange ?? (() => {});
    this.#agents = new BlockCheckedCache('agent', {
      follower,
      metrics,
      maxEntries,
      onStore: (agentId, { view }) => {
        if (view.nullifier !== 0n) this.#agentsOfNullifier.add(view.nullifier, agentId);
        if (view.exists && view.hasHumanProof) this.#agentsOfProvider.add(view.proofProvider, agentId);
      },
      onEvict: (agentId, { view }) => {
        this.#agentsOfNullifier.delete(view.nullifier, agentId);
        this.#agentsOfProvider.delete(view.proofProvider, agentId);
        changed(answerKeys.agent(network, agentId));
      },
    });
    this.#nullifierLists = new BlockCheckedCache('nullifier-agents', {
      follower,
      metrics,
      maxEntries,
      onEvict: (nullifier) => changed(answerKeys.nullifier(network, nullifier)),
    });
    this.#agentIds = new BlockCheckedCache('agent-key', {
      follower,
      metrics,
      maxEntries,
      onStore: (agentKey, agentId) => this.#keysOfAgent.add(agentId, agentKey),
      onEvict: (agentKey, agentId) => this.#keysOfAgent.delete(agentId, agentKey),
    });
    this.#unsubscribe = [
      follower.subscribe((logs) => this.apply(logs)),
      follower.addCheck((blockNumber, client) => this.#checkProviders(blockNumber, client)),
    ];
  }

  /** The agent's view: from the cache, or one eth_call. */
  async agent(agentId: bigint): Promise<AgentView> {
    return (await this.agentRecord(agentId)).view;
  }

  /** Whether the cache holds `record` as the agent's now (then its drop will be announced). */
  holds(agentId: bigint, record: AgentRecord): boolean {
    return this.#agents.peek(agentId) === record;
  }

  /** Whether the cache holds `list` as the nullifier's agents now (then its drop will be announced). */
  holdsList(nullifier: bigint, list: readonly bigint[]): boolean {
    return this.#nullifierLists.peek(nullifier) === list;
  }

  /** The agent's record (its view and the answers built from it): from the cache, or one eth_call. */
  agentRecord(agentId: bigint): Promise<AgentRecord> {
    return this.#agents.get(agentId, async () => {
      const { blockNumber, value } = await this.#options.lens.agent(agentId);
      return { blockNumber, value: { view: value, answers: new Map() } };
    });
  }

  /**
   * Reads, at `blockNumber`, the name and strength of the providers cached agents show; applied, it drops the
   * agents whose provider now reads otherwise. Nothing to read (no round trip) while no cached agent has a proof.
   */
  #checkProviders(blockNumber: bigint, client: ChainClient): Promise<() => void> | undefined {
    const providers = this.#agentsOfProvider.keys();
    if (providers.length === 0) return undefined;
    return new AgentLens(client, this.#options.follower.registry).providers(providers, blockNumber).then(({ value }) => () => {
      for (const provider of value) {
        for (const agentId of this.#agentsOfProvider.values(provider.address)) {
          const view = this.#agents.peek(agentId)?.view;
          if (view && (view.providerName !== provider.name || view.verificationStrength !== provider.strength)) this.#agents.delete(agentId);
        }
      }
    });
  }

  /**
   * The agent id of an agent key (0n for none): from the cache, or one eth_call at the block the log follower
   * has processed, so the answer is storable and any later change reaches it as an event.
   */
  async agentIdOf(agentKey: Hex): Promise<bigint> {
    const key = agentKey.toLowerCase() as Hex;
    const agentId = await this.#agentIds.get(key, async () => {
      const { follower } = this.#options;
      const blockNumber = follower.isLive() ? follower.processedBlock : undefined;
      if (blockNumber === undefined) return { blockNumber: -1n, value: await this.#options.agentIdOf(key) };
      try {
        return { blockNumber, value: await this.#options.agentIdOf(key, blockNumber) };
      } catch (error) {
        // A node may no longer hold that block's state (a local chain restarted from its state file keeps only
        // its latest): read at the latest block instead, answered but not stored. A chain that does not answer
        // fails again here, with its named error.
        if (serviceErrorOf(error)) throw error;
        return { blockNumber: -1n, value: await this.#options.agentIdOf(key) };
      }
    });
    // "No agent" at the follower's block may be a block behind a registration the caller has just seen
    // complete: a refusal is confirmed at the latest block (one round trip, on the failure path only).
    return agentId === 0n ? this.#options.agentIdOf(key) : agentId;
  }

  /** The live agents of a nullifier (registry order): from the cache, or one eth_call. */
  agentsForNullifier(nullifier: bigint): Promise<readonly bigint[]> {
    return this.#nullifierLists.get(nullifier, () => this.#options.lens.agentsForNullifier(nullifier));
  }

  /**
   * Unix time of a block, cached forever (a block's timestamp never changes). The first request that needs a
   * block not seen before pays one more round trip (eth_getBlockByNumber); later ones none.
   */
  async blockTimestamp(blockNumber: bigint): Promise<number> {
    const { metrics } = this.#options;
    const known = this.#blockTimes.get(blockNumber);
    if (known !== undefined) {
      metrics.cacheHit('block-timestamp');
      return known;
    }
    metrics.cacheMiss('block-timestamp');
    let loading = this.#blockTimesLoading.get(blockNumber);
    if (!loading) {
      loading = this.#options.blockTimestamp(blockNumber);
      this.#blockTimesLoading.set(blockNumber, loading);
      const done = loading;
      done.then(
        (timestamp) => {
          this.#blockTimesLoading.delete(blockNumber);
          this.#blockTimes.set(blockNumber, timestamp);
          const max = this.#options.maxEntries ?? DEFAULT_MAX_ENTRIES;
          if (this.#blockTimes.size > max) this.#blockTimes.delete(this.#blockTimes.keys().next().value as bigint);
        },
        () => this.#blockTimesLoading.delete(blockNumber),
      );
    }
    return loading;
  }

  /** Drops what the logs make stale (the follower calls this, synchronously, for every range of logs). */
  apply(logs: readonly RegistryLogLike[]): void {
    // whether a log changes an owner is all this asks of its addresses
    for (const effect of decodedRange(logs)) {
      if (effect.kind === 'none') continue;
      if (effect.kind === 'all') {
        this.#agents.clear();
        this.#nullifierLists.clear();
        this.#agentIds.clear();
        this.#options.onChange?.(answerKeys.network(this.#options.network));
        continue;
      }
      this.#agents.delete(effect.agentId);
      // also when nothing was held: a read under way is not stored, and an answer built from it must not be kept
      this.#options.onChange?.(answerKeys.agent(this.#options.network, effect.agentId));
      for (const agentKey of this.#keysOfAgent.values(effect.agentId)) this.#agentIds.delete(agentKey);
      // a mint or a burn: a key that had no agent may have one now
      if (effect.owner !== undefined) for (const agentKey of this.#keysOfAgent.values(0n)) this.#agentIds.delete(agentKey);
      if (effect.nullifier !== undefined) {
        for (const agentId of this.#agentsOfNullifier.values(effect.nullifier)) this.#agents.delete(agentId);
        this.#nullifierLists.delete(effect.nullifier);
        this.#options.onChange?.(answerKeys.nullifier(this.#options.network, effect.nullifier));
      }
    }
  }

  /** Drops everything (the chain went back to an earlier state, whose blocks may differ from those seen). */
  clear(): void {
    this.#agents.clear();
    this.#nullifierLists.clear();
    this.#agentIds.clear();
    this.#blockTimes.clear();
    this.#blockTimesLoading.clear();
    this.#options.onChange?.(answerKeys.network(this.#options.network));
  }

  /** Entries held, for tests and diagnostics. */
  get size(): { agents: number; agentKeys: number; nullifierLists: number; blockTimestamps: number } {
    return {
      agents: this.#agents.size,
      agentKeys: this.#agentIds.size,
      nullifierLists: this.#nullifierLists.size,
      blockTimestamps: this.#blockTimes.size,
    };
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
  }
}
