// Follows the registry's logs on one network: polls eth_getLogs for the registry's address from the block after
// the last one processed up to the latest, and hands each range's logs to its subscribers in block order. The
// first run backfills from the registry's deploy block in windows (halved when the node refuses a range).
//
// Subscribers run synchronously, and `processedBlock` moves to the end of a range in the same tick in which its
// logs were delivered: code that compares a read's block with `processedBlock` (the caches) never sees a range
// half applied.
import type { Address, Log } from 'viem';
import type { ChainClient } from './clients.js';

export type RegistryLog = Log<bigint, number, false>;

/** Receives the logs of blocks (from, to], in order; `to` is the range's last block. Must not throw or await. */
export type LogSubscriber = (logs: readonly RegistryLog[], toBlock: bigint) => void;

export interface FollowerOptions {
  /** Time between polls; about the chain's block time (1 s on Celo, 100-250 ms on a local anvil). */
  intervalMs: number;
  /** Most blocks one eth_getLogs may span; halved (down to 1) when the node refuses a range. Default 50,000. */
  maxLogRange?: bigint;
  /**
   * How long after its last successful poll the follower still counts as live (default: 10 polls, at least 5 s).
   * Caches bypass themselves while it is not live, since they would not hear of changes.
   */
  staleAfterMs?: number;
  onError?: (error: unknown) => void;
  clock?: () => number;
  /** True while the chain is known to be down (a local chain being restarted): not live, whatever the last poll. */
  chainDown?: () => boolean;
}

const DEFAULT_MAX_LOG_RANGE = 50_000n;

export class RegistryEventFollower {
  readonly #client: ChainClient;
  readonly #registry: Address;
  readonly #options: Required<Omit<FollowerOptions, 'onError' | 'chainDown'>> & Pick<FollowerOptions, 'onError' | 'chainDown'>;
  readonly #subscribers = new Set<LogSubscriber>();
  readonly #rewindListeners = new Set<() => void>();
  readonly #fromBlock: bigint;
  /** Last block whose logs every subscriber has seen. */
  #processed: bigint;
  #running = false;
  /** Bumped by every start(), so a loop from before a stop() and start() ends instead of running twice. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Polls run one after another (a timer poll and a syncNow never overlap). */
  #queue: Promise<void> = Promise.resolve();
  #lastSuccessAt = Number.NEGATIVE_INFINITY;
  /** The last poll failed (the chain did not answer): until one succeeds, changes may go unheard. */
  #failing = false;
  #caughtUp = false;
  #readyWaiters: (() => void)[] = [];

  constructor(client: ChainClient, registry: Address, fromBlock: bigint, options: FollowerOptions) {
    this.#client = client;
    this.#registry = registry;
    this.#fromBlock = fromBlock;
    this.#processed = fromBlock > 0n ? fromBlock - 1n : -1n;
    this.#options = {
      intervalMs: options.intervalMs,
      maxLogRange: options.maxLogRange ?? DEFAULT_MAX_LOG_RANGE,
      staleAfterMs: options.staleAfterMs ?? Math.max(10 * options.intervalMs, 5_000),
      clock: options.clock ?? Date.now,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.chainDown ? { chainDown: options.chainDown } : {}),
    };
  }

  get registry(): Address {
    return this.#registry;
  }

  /** The last block whose logs have been delivered (registryDeployBlock - 1 before the first poll). */
  get processedBlock(): bigint {
    return this.#processed;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Running, caught up once with the chain, its last poll successful and within staleAfterMs, the chain not known down. */
  isLive(): boolean {
    if (!this.#running || !this.#caughtUp || this.#failing || this.#options.chainDown?.()) return false;
    return this.#options.clock() - this.#lastSuccessAt <= this.#options.staleAfterMs;
  }

  subscribe(subscriber: LogSubscriber): () => void {
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /**
   * Calls `listener` when the follower starts over from the deploy block because the chain went back (rewind()):
   * whoever keeps state built from the logs drops it, and receives every log again.
   */
  onRewind(listener: () => void): () => void {
    this.#rewindListeners.add(listener);
    return () => this.#rewindListeners.delete(listener);
  }

  /**
   * The chain now ends at `head`: a local chain restarted from its saved state may have lost blocks this follower
   * already delivered, and mines different ones at the same heights. If so, start over from the deploy block
   * (between polls) and tell the rewind listeners; until caught up again the follower is not live, so caches
   * bypass themselves.
   */
  rewind(head: bigint): Promise<void> {
    const step = this.#queue.then(() => {
      if (this.#processed <= head) return;
      this.#processed = this.#fromBlock > 0n ? this.#fromBlock - 1n : -1n;
      this.#caughtUp = false;
      for (const listener of this.#rewindListeners) {
        try {
          listener();
        } catch (error) {
          this.#options.onError?.(error);
        }
      }
    });
    this.#queue = step;
    return step;
  }

  /** Starts polling; resolves once the follower has caught up with the chain for the first time. */
  start(): Promise<void> {
    if (!this.#running) {
      this.#running = true;
      void this.#loop(++this.#generation);
    }
    return this.ready();
  }

  /** Stops polling and waits for a poll in progress to end. Safe to call twice; start() may follow. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  /** Resolves when the follower has caught up once (immediately if it has). */
  ready(): Promise<void> {
    if (this.#caughtUp) return Promise.resolve();
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /** Polls now (after any poll in progress) and resolves when the logs up to the latest block are delivered. */
  syncNow(): Promise<void> {
    return this.#pollOnce();
  }

  async #loop(generation: number): Promise<void> {
    const current = () => this.#running && this.#generation === generation;
    if (!current()) return;
    try {
      await this.#pollOnce();
    } catch (error) {
      this.#options.onError?.(error);
    }
    if (!current()) return;
    this.#timer = setTimeout(() => void this.#loop(generation), this.#options.intervalMs);
    this.#timer.unref();
  }

  #pollOnce(): Promise<void> {
    const poll = this.#queue.then(() =>
      this.#poll().catch((error: unknown) => {
        // caches bypass themselves at once rather than answer from what may have changed unheard
        this.#failing = true;
        throw error;
      }),
    );
    this.#queue = poll.catch(() => undefined);
    return poll;
  }

  async #poll(): Promise<void> {
    const latest = await this.#client.getBlockNumber({ cacheTime: 0 });
    let window = this.#options.maxLogRange;
    while (this.#processed < latest) {
      const fromBlock = this.#processed + 1n;
      const toBlock = fromBlock + window - 1n < latest ? fromBlock + window - 1n : latest;
      let logs: RegistryLog[];
      try {
        logs = (await this.#client.getLogs({ address: this.#registry, fromBlock, toBlock })) as RegistryLog[];
      } catch (error) {
        // Nodes cap the block range (or the result size) of eth_getLogs: try a smaller window.
        if (window > 1n) {
          window /= 2n;
          continue;
        }
        throw error;
      }
      this.#deliver(logs, toBlock);
      // stop() ends a long backfill between windows (its progress is kept for the next start).
      if (!this.#running && this.#processed < latest) return;
    }
    this.#lastSuccessAt = this.#options.clock();
    this.#failing = false;
    if (!this.#caughtUp) {
      this.#caughtUp = true;
      for (const resolve of this.#readyWaiters.splice(0)) resolve();
    }
  }

  #deliver(logs: RegistryLog[], toBlock: bigint): void {
    if (toBlock <= this.#processed) return;
    const ordered = [...logs].sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
    for (const subscriber of this.#subscribers) {
      try {
        subscriber(ordered, toBlock);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
    this.#processed = toBlock;
  }
}
