// Follows the registry's logs on one network: polls eth_getLogs for the registry's address from the block after
// the last one processed up to the latest, and hands each range's logs to its subscribers in block order. The
// first run backfills from the registry's deploy block in windows (halved when the node refuses a range).
//
// Subscribers run synchronously, and `processedBlock` moves to the end of a range in the same tick in which its
// logs were delivered: code that compares a read's block with `processedBlock` (the caches) never sees a range
// half applied.
//
// Reorganisations: each poll ends at a block whose hash the follower keeps (a checkpoint, the last REORG_WINDOW
// blocks' worth). The next poll first reads the latest block and the last checkpoint's block (one batched round
// trip); when that hash is no longer the chain's, blocks it delivered were dropped. It then looks for the newest
// checkpoint still on the chain (the common ancestor, or an earlier block), tells the reorg listeners (they drop
// what they learned after it) and delivers again from there; with no checkpoint left on the chain it starts over
// from the deploy block (the rewind listeners). It is not live while it does so, so caches bypass themselves.
// Within REORG_WINDOW of the head every window is a checkpoint, its hash read before its logs, and linked to the
// window before by its first block's parent hash: a poll that fails after some windows leaves none of them unchecked,
// and a branch that forks under a poll is seen at the next window rather than vouched for by a newer checkpoint.
//
// Checks: what the logs do not announce (a proof provider's name or strength is the provider's own state, and a
// provider need not log its changes) can be read at the block a poll ends at, in the same tick as the last
// eth_getLogs is sent, and applied in the tick in which the logs are delivered.
//
// A long poll (a backfill) reads window after window, each asked for the moment the node answered the one before:
// the node works on the next window while this one's logs are read, parsed and delivered.
import { type Address, BlockNotFoundError, formatLog, type Hash, type Hex, type Log, numberToHex } from 'viem';
import type { ChainClient } from './clients.js';
import type { HeadSource } from './new-heads.js';

export type RegistryLog = Log<bigint, number, false>;

/**
 * Receives the logs of blocks (from, to], in order; `toBlock` is the range's last block, `head` the chain's latest
 * block when the range was read (a backfill's ranges are far behind it: blocks more than REORG_WINDOW behind are
 * final). Must not throw or await.
 */
export type LogSubscriber = (logs: readonly RegistryLog[], toBlock: bigint, head: bigint) => void;

export interface FollowerOptions {
  /** Time between polls; about the chain's block time (1 s on Celo, 100-250 ms on a local anvil). */
  intervalMs: number;
  /**
   * Most blocks one eth_getLogs may span (default 50,000). Within it a window is sized from the last one's logs
   * (nextWindow), and halved (down to 1) when the node refuses a range.
   */
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
  /** New blocks as they come (WebSocket): each wakes the follower at once, the interval staying as the fallback. */
  heads?: HeadSource;
  /** Least time between two checkpoints inside one long poll (a backfill); default CHECKPOINT_EVERY_MS. */
  checkpointEveryMs?: number;
  /**
   * The events (topic 0) a backfill asks for, until the follower has caught up since its start or a start over:
   * those that change what outlives the backfill (a stored index, revoked credentials). The others only drop
   * cached answers, and nothing is cached before the follower is live. Default: every log of the address.
   */
  backfillTopics?: readonly Hex[];
  /**
   * What the eth_getLogs of a window followed by another go through: a client of their own, unbatched (a batched
   * call is sent at the next timer turn, which comes only once the answer being read is read), that tells as each
   * answer starts to arrive (clients.ts onAnswer). The next window is then asked for at once. A poll's last window
   * goes through the follower's client, in one batch with the checks' reads. Default: the follower's client for
   * all, and the next window asked for once this one's logs are parsed.
   */
  logReader?: LogReader;
}

export interface LogReader {
  client: ChainClient;
  /** Calls `onAnswer` as the node's answer to an eth_getLogs starts to arrive, until the returned function is called. */
  answers: (onAnswer: () => void) => () => void;
}

const DEFAULT_MAX_LOG_RANGE = 50_000n;

/**
 * Logs one eth_getLogs aims at. Providers cap a result at about 10,000 logs (or viem's transport at 10 MB of
 * JSON, some 15,000 registry logs), and a refused call costs as much as the node's work on it: a dense history
 * (a registry with many registrations a block) would otherwise be read through one refusal after another. And a
 * window's JSON and logs (about 2 MB) then die young in V8's heap: with 5,000 a backfill of 100,000 agents took 10%
 * longer and 30 MB more memory, and with 10,000 20% and 80 MB (bench:history).
 */
const LOGS_PER_WINDOW = 2_500;

/**
 * The first window's blocks: small, since nothing is known of the history's density yet (a window too large for
 * the provider is refused only after the node did the work); sparse histories grow it fourfold a call.
 */
const FIRST_WINDOW = 16n;

/**
 * The windows asked for from now on, from the logs a window of `window` blocks just read held (the one asked for
 * before it was read keeps its size): as many blocks as hold about LOGS_PER_WINDOW at that density, at most four
 * times `window` (density varies) and within [1, max]. An empty window doubles.
 */
export function nextWindow(window: bigint, logs: number, max: bigint): bigint {
  const sized = logs === 0 ? window * 2n : (window * BigInt(LOGS_PER_WINDOW)) / BigInt(logs);
  const bounded = sized > window * 4n ? window * 4n : sized;
  return bounded < 1n ? 1n : bounded > max ? max : bounded;
}

/**
 * A poll that spans many windows (a first backfill, hours on a public RPC) makes a checkpoint after the first
 * window ending this long after its last one, so that an interrupted backfill loses at most about this much work.
 * Time rather than a count of windows: windows shrink when a provider refuses ranges and their pace varies with the
 * provider. Each costs at most one eth_getBlockByNumber and one store write of the buckets changed since the last;
 * every 2 s that is well under 1% of a backfill, and more often than a third of the stored index's lease (15 s), so
 * a writer's backfill renews its lease as it goes.
 */
export const CHECKPOINT_EVERY_MS = 2_000;

/**
 * How many blocks back a reorganisation is undone in place (checkpoints and the owner index's undo journal cover
 * them); a deeper one starts over from the deploy block. Celo reorganises a few blocks at most.
 */
export const REORG_WINDOW = 128n;

/**
 * A read of state the logs do not announce, at the block a poll ends at, through the follower's client (its calls
 * share one batched round trip). Returns undefined when there is nothing to read (no round trip), else the
 * read, which resolves to what to apply: called synchronously, in the same tick as the poll's logs are delivered.
 * A rejected read fails the poll (the follower is then not live).
 */
export type BlockCheck = (blockNumber: bigint, client: ChainClient) => Promise<() => void> | undefined;

/** A block a poll ended at, and its hash then. */
export interface Checkpoint {
  number: bigint;
  hash: Hash;
}

/** A window's logs, and near the head the hash of its last block and the parent hash of its first, read before them. */
interface WindowRead {
  logs: RegistryLog[];
  hash: Hash | undefined;
  parentHash: Hash | undefined;
}

/** A window asked for: `answered` resolves once the node answered its eth_getLogs (false: it failed unanswered). */
interface WindowRequest {
  fromBlock: bigint;
  toBlock: bigint;
  answered: Promise<boolean>;
  read: Promise<WindowRead>;
}

/** Where a backfill stands: the blocks delivered since it began, those left, its pace and what that leaves. */
export interface IndexingProgress {
  blocksDone: number;
  blocksToGo: number;
  blocksPerSecond: number;
  /** null until the pace is known. */
  etaSeconds: number | null;
}

export class RegistryEventFollower {
  /** The backfill under way (before the first catch-up): its start and target. */
  #backfill: { startedAt: number; from: bigint; target: bigint } | undefined;
  readonly #client: ChainClient;
  readonly #registry: Address;
  readonly #options: Required<Omit<FollowerOptions, 'onError' | 'chainDown' | 'heads' | 'backfillTopics' | 'logReader'>> &
    Pick<FollowerOptions, 'onError' | 'chainDown' | 'heads' | 'backfillTopics' | 'logReader'>;
  readonly #subscribers = new Set<LogSubscriber>();
  readonly #rewindListeners = new Set<() => void>();
  readonly #reorgListeners = new Set<(ancestor: bigint) => void>();
  readonly #caughtUpListeners = new Set<() => void>();
  readonly #checks = new Set<BlockCheck>();
  readonly #checkpointListeners = new Set<(checkpoints: readonly Checkpoint[]) => void>();
  /** Hashes of blocks polls ended at, oldest first, within REORG_WINDOW of the processed block. */
  #checkpoints: Checkpoint[] = [];
  /** A reorganisation is being undone: blocks after the ancestor are delivered again. */
  #recovering = false;
  readonly #fromBlock: bigint;
  /** Blocks per eth_getLogs: sized from the last window's logs (nextWindow), kept from poll to poll. */
  #window: bigint;
  /** Last block whose logs every subscriber has seen. */
  #processed: bigint;
  #running = false;
  /** Bumped by every start(), so a loop from before a stop() and start() ends instead of running twice. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  /** A poll of the loop is under way; a new block meanwhile sets #wakeAgain. */
  #looping = false;
  #wakeAgain = false;
  #unwatchHeads: (() => void) | undefined;
  #unwatchAnswers: (() => void) | undefined;
  /** The eth_getLogs sent and not answered yet, oldest first: the node's next answer is the first one's. */
  readonly #awaitingAnswer: (() => void)[] = [];
  /** Polls run one after another (a timer poll and a syncNow never overlap). */
  #queue: Promise<void> = Promise.resolve();
  #lastSuccessAt = Number.NEGATIVE_INFINITY;
  /** The last poll failed (the chain did not answer): until one succeeds, changes may go unheard. */
  #failing = false;
  #caughtUp = false;
  readonly #readyWaiters = new Set<() => void>();

  constructor(client: ChainClient, registry: Address, fromBlock: bigint, options: FollowerOptions) {
    this.#client = client;
    this.#registry = registry;
    this.#fromBlock = fromBlock;
    this.#processed = fromBlock > 0n ? fromBlock - 1n : -1n;
    const max = options.maxLogRange ?? DEFAULT_MAX_LOG_RANGE;
    this.#window = max < FIRST_WINDOW ? max : FIRST_WINDOW;
    this.#options = {
      intervalMs: options.intervalMs,
      maxLogRange: options.maxLogRange ?? DEFAULT_MAX_LOG_RANGE,
      staleAfterMs: options.staleAfterMs ?? Math.max(10 * options.intervalMs, 5_000),
      clock: options.clock ?? Date.now,
      checkpointEveryMs: options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.chainDown ? { chainDown: options.chainDown } : {}),
      ...(options.heads ? { heads: options.heads } : {}),
      ...(options.backfillTopics ? { backfillTopics: options.backfillTopics } : {}),
      ...(options.logReader ? { logReader: options.logReader } : {}),
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

  /** Whether it has caught up with the chain once since its start (stays so). */
  get caughtUp(): boolean {
    return this.#caughtUp;
  }

  /** Running, caught up once with the chain, its last poll successful and within staleAfterMs, the chain not known down. */
  isLive(): boolean {
    if (!this.#running || !this.#caughtUp || this.#failing || this.#recovering || this.#options.chainDown?.()) return false;
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
   * Calls `listener` with the last block still on the chain when a reorganisation dropped blocks the follower had
   * delivered: whoever keeps state built from later logs drops it; those blocks' logs (of the new branch) follow.
   */
  onReorg(listener: (ancestor: bigint) => void): () => void {
    this.#reorgListeners.add(listener);
    return () => this.#reorgListeners.delete(listener);
  }

  /**
   * Calls `listener` each time the follower has caught up with the chain since its start or a start over (caughtUp
   * turns true), in the tick its last range was delivered.
   */
  onCaughtUp(listener: () => void): () => void {
    this.#caughtUpListeners.add(listener);
    return () => this.#caughtUpListeners.delete(listener);
  }

  /**
   * Calls `listener` at the end of every poll that reached the chain's head, and every checkpointEveryMs within a
   * long poll (a backfill), with the checkpoints kept (oldest first, the last one the block just processed): what a
   * stored index is valid at, and what resumeFrom() takes back.
   */
  onCheckpoint(listener: (checkpoints: readonly Checkpoint[]) => void): () => void {
    this.#checkpointListeners.add(listener);
    return () => this.#checkpointListeners.delete(listener);
  }

  /**
   * Before the first start: continue after the last of `checkpoints` (an index stored at it was loaded) rather than
   * from the deploy block. The first poll checks that block's hash is still the chain's; when it is not, the older
   * checkpoints are where a reorganisation is undone, and with none left on the chain it starts over (rewind listeners).
   */
  resumeFrom(checkpoints: readonly Checkpoint[]): void {
    if (this.#running) throw new Error('resumeFrom() is for a follower not started yet');
    const last = checkpoints.at(-1);
    if (last === undefined || last.number < this.#fromBlock) return;
    this.#checkpoints = [...checkpoints];
    this.#processed = last.number;
  }

  /** Adds a check run at the end of every poll (see BlockCheck). */
  addCheck(check: BlockCheck): () => void {
    this.#checks.add(check);
    return () => this.#checks.delete(check);
  }

  /**
   * The chain now ends at `head`: a local chain restarted from its saved state may have lost blocks this follower
   * already delivered, and mines different ones at the same heights. If so, start over from the deploy block
   * (between polls) and tell the rewind listeners; until caught up again the follower is not live, so caches
   * bypass themselves.
   */
  rewind(head: bigint): Promise<void> {
    return this.#betweenPolls(() => {
      if (this.#processed <= head) return;
      this.#caughtUp = false;
      this.#startOver();
    });
  }

  /**
   * Starts over from the deploy block (between polls) and tells the rewind listeners, as rewind() does when the chain
   * lost blocks: for a subscriber that can no longer trust what it derived (its storage failed).
   */
  startOver(): Promise<void> {
    return this.#betweenPolls(() => {
      this.#caughtUp = false;
      this.#startOver();
    });
  }

  #betweenPolls(step: () => void): Promise<void> {
    const queued = this.#queue.then(step);
    this.#queue = queued;
    return queued;
  }

  /** Starts polling; resolves once the follower has caught up with the chain for the first time. */
  start(): Promise<void> {
    if (!this.#running) {
      this.#running = true;
      void this.#loop(++this.#generation);
      this.#unwatchHeads = this.#options.heads?.(() => this.#wake());
      this.#unwatchAnswers = this.#options.logReader?.answers(() => this.#awaitingAnswer.shift()?.());
    }
    return this.ready();
  }

  /** A new block: poll now rather than at the end of the interval (once more after a poll in progress). */
  #wake(): void {
    if (!this.#running) return;
    if (this.#looping) {
      this.#wakeAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    void this.#loop(this.#generation);
  }

  /** Stops polling and waits for a poll in progress to end. Safe to call twice; start() may follow. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unwatchHeads?.();
    this.#unwatchHeads = undefined;
    this.#unwatchAnswers?.();
    this.#unwatchAnswers = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  /**
   * Resolves when the follower has caught up once (immediately if it has). With `signal`, rejects with its reason
   * when it aborts first, and forgets the waiter: a backfill may last hours, and each request that gives up on it
   * would otherwise be kept until then.
   */
  ready(signal?: AbortSignal): Promise<void> {
    if (this.#caughtUp) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter = () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        this.#readyWaiters.delete(waiter);
        reject(signal?.reason);
      };
      this.#readyWaiters.add(waiter);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  /** Polls now (after any poll in progress) and resolves when the logs up to the latest block are delivered. */
  syncNow(): Promise<void> {
    return this.#pollOnce();
  }

  async #loop(generation: number): Promise<void> {
    const current = () => this.#running && this.#generation === generation;
    if (!current()) return;
    this.#looping = true;
    this.#wakeAgain = false;
    try {
      await this.#pollOnce();
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      // a loop of an earlier start() ending under a newer one leaves the newer one's mark in place
      if (this.#generation === generation) this.#looping = false;
    }
    if (!current()) return;
    // a block announced during the poll may not be in it: poll again now
    this.#timer = setTimeout(() => void this.#loop(generation), this.#wakeAgain ? 0 : this.#options.intervalMs);
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

  /** Back to the deploy block: the rewind listeners drop everything, and every log is delivered again. */
  #startOver(): void {
    this.#processed = this.#fromBlock > 0n ? this.#fromBlock - 1n : -1n;
    this.#checkpoints = [];
    for (const listener of this.#rewindListeners) {
      try {
        listener();
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
  }

  /** The hash of the chain's block at `number` now; undefined when the chain is shorter. */
  async #hashAt(number: bigint): Promise<Hash | undefined> {
    return (await this.#blockAt(number))?.hash;
  }

  /** The hash and parent hash of the chain's block at `number` now; undefined when the chain is shorter. */
  async #blockAt(number: bigint): Promise<{ hash: Hash; parentHash: Hash } | undefined> {
    try {
      const { hash, parentHash } = await this.#client.getBlock({ blockNumber: number, includeTransactions: false });
      return hash ? { hash, parentHash } : undefined;
    } catch (error) {
      if (error instanceof BlockNotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Blocks after the last checkpoint still on the chain were dropped: go back to it (the reorg listeners forget
   * what came after), or to the deploy block when none is left. Every checkpoint's block is read in one batch.
   */
  async #undoReorg(): Promise<void> {
    const older = this.#checkpoints.slice(0, -1);
    const hashes = await Promise.all(older.map((checkpoint) => this.#hashAt(checkpoint.number)));
    // the checkpoints kept are those before the oldest one the chain no longer has: a newer one that matches does
    // not vouch for blocks below an older one that does not
    let kept = 0;
    while (kept < older.length && hashes[kept] === older[kept]?.hash) kept++;
    const ancestor = older[kept - 1];
    if (ancestor === undefined) {
      this.#startOver();
      return;
    }
    this.#checkpoints = older.slice(0, kept);
    this.#processed = ancestor.number;
    for (const listener of this.#reorgListeners) {
      try {
        listener(ancestor.number);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
  }

  async #poll(): Promise<void> {
    const last = this.#checkpoints.at(-1);
    // the head and the last checkpoint's block, in one batched round trip
    const [head, lastHash] = await Promise.all([
      this.#client.getBlock({ blockTag: 'latest', includeTransactions: false }),
      last ? this.#hashAt(last.number) : undefined,
    ]);
    if (last && lastHash !== last.hash) {
      // not live (caches bypassed) until the new branch is delivered; a failed read here is retried next poll
      this.#recovering = true;
      await this.#undoReorg();
    }
    const latest = head.number;
    if (!this.#caughtUp) {
      this.#backfill = this.#backfill
        ? { ...this.#backfill, target: latest }
        : { startedAt: this.#options.clock(), from: this.#processed, target: latest };
    }
    let window = this.#window;
    let checks: Promise<(() => void)[]> | undefined;
    let checkpointedAt = this.#options.clock();
    /**
     * The next window's request, sent the moment the node has answered this window's eth_getLogs (with a logReader),
     * so that it works on the next one while this one's logs are read, parsed and delivered. A first start with
     * 100,000 agents on a local anvil was healthy after 5.5-6.7 s against 5.9-8.1 s when it was sent once this
     * window's logs were parsed, and after 9.0-9.7 s against 10.8-11.2 s behind 40 ms of round trip. It is sized
     * from the windows before this one, whose logs are known. One at a time: with two in flight a first indexing of
     * 100,000 agents took 7.5-7.7 s against 4.9-6.1 s.
     */
    let ahead: WindowRequest | undefined;
    /** A window's request, sent at once or, with `after`, once that resolves true (not at all on false). */
    const request = (fromBlock: bigint, toBlock: bigint, after?: Promise<boolean>): WindowRequest => {
      let answer: (answered: boolean) => void = () => undefined;
      const answered = new Promise<boolean>((resolve) => {
        answer = resolve;
      });
      const send = (): Promise<WindowRead> => {
        // the checks' reads go out in the same tick as the last range's eth_getLogs
        if (toBlock === latest) checks ??= this.#runChecks(latest);
        // the last window is followed by no other: it goes with the checks' reads, in their batch
        const getLogs = () => this.#getLogs(fromBlock, toBlock, toBlock === latest ? undefined : () => answer(true));
        // Within a reorganisation's reach of the head, a window short of it is checkpointed once delivered, with the
        // hash its last block had before its logs were read: a poll that fails after it leaves no delivered block
        // unchecked behind the last checkpoint, and a branch switching between the two reads leaves a checkpoint that
        // the next poll finds stale (the window is read again). Its first block's parent hash, read with it, links it
        // to the window before: a branch that forked below this window meanwhile is seen before its logs are delivered.
        return toBlock < latest && latest - toBlock < REORG_WINDOW
          ? Promise.all([this.#blockAt(fromBlock), fromBlock === toBlock ? undefined : this.#hashAt(toBlock)]).then(async ([first, last]) => ({
              logs: await getLogs(),
              hash: fromBlock === toBlock ? first?.hash : last,
              parentHash: first?.parentHash,
            }))
          : getLogs().then((logs) => ({ logs, hash: undefined, parentHash: undefined }));
      };
      const read = after
        ? after.then((go) => (go && this.#running ? send() : Promise.reject(new Error('the window before was not answered'))))
        : send();
      read.then(
        () => answer(true),
        () => answer(false),
      );
      return { fromBlock, toBlock, answered, read };
    };
    const windowEnd = (fromBlock: bigint): bigint => (fromBlock + window - 1n < latest ? fromBlock + window - 1n : latest);
    try {
      while (this.#processed < latest) {
        const fromBlock = this.#processed + 1n;
        const current = ahead?.fromBlock === fromBlock ? ahead : request(fromBlock, windowEnd(fromBlock));
        const { toBlock } = current;
        // sized from the windows before this one: this one's logs are not read yet
        ahead = toBlock < latest && this.#running ? request(toBlock + 1n, windowEnd(toBlock + 1n), current.answered) : undefined;
        let logs: RegistryLog[];
        let hash: Hash | undefined;
        let parentHash: Hash | undefined;
        try {
          ({ logs, hash, parentHash } = await current.read);
        } catch (error) {
          ahead = undefined;
          // Nodes cap the block range (or the result size) of eth_getLogs: try a smaller window.
          if (window > 1n) {
            window /= 2n;
            this.#window = window;
            continue;
          }
          throw error;
        }
        const previous = this.#checkpoints.at(-1);
        if (parentHash !== undefined && previous?.number === fromBlock - 1n && previous.hash !== parentHash) {
          // the chain forked below this window since the last checkpoint (which it no longer holds): back to a
          // checkpoint still on it, and on from there
          this.#recovering = true;
          await this.#undoReorg();
          continue;
        }
        window = nextWindow(toBlock - fromBlock + 1n, logs.length, this.#options.maxLogRange);
        this.#window = window;
        const apply = toBlock === latest && checks ? await checks : [];
        this.#deliver(logs, toBlock, latest);
        for (const applyCheck of apply) applyCheck();
        const stopping = !this.#running;
        if (hash !== undefined && this.#processed === toBlock) {
          this.#checkpoint({ number: toBlock, hash });
          checkpointedAt = this.#options.clock();
        } else if (toBlock < latest && (stopping || this.#options.clock() - checkpointedAt >= this.#options.checkpointEveryMs)) {
          // deeper in the history (and at a stop(), so that a stopped backfill's progress is stored too)
          await this.#checkpointWithin(logs, toBlock);
          checkpointedAt = this.#options.clock();
        }
        // stop() ends a long backfill between windows (its progress is kept for the next start).
        if (stopping && this.#processed < latest) return;
      }
    } finally {
      checks?.catch(() => undefined); // not awaited when the logs failed first
    }
    if (this.#processed === latest && head.hash) this.#checkpoint({ number: latest, hash: head.hash });
    this.#recovering = false;
    this.#lastSuccessAt = this.#options.clock();
    this.#failing = false;
    if (!this.#caughtUp) {
      this.#caughtUp = true;
      this.#backfill = undefined;
      for (const listener of this.#caughtUpListeners) {
        try {
          listener();
        } catch (error) {
          this.#options.onError?.(error);
        }
      }
      const waiters = [...this.#readyWaiters];
      this.#readyWaiters.clear();
      for (const resolve of waiters) resolve();
    }
  }

  /** The first backfill's progress while it runs; undefined once caught up (or before the first poll). */
  indexing(): IndexingProgress | undefined {
    const backfill = this.#backfill;
    if (this.#caughtUp || backfill === undefined) return undefined;
    const blocksDone = Number(this.#processed - backfill.from);
    const blocksToGo = Number(backfill.target > this.#processed ? backfill.target - this.#processed : 0n);
    const seconds = (this.#options.clock() - backfill.startedAt) / 1000;
    const blocksPerSecond = seconds > 0 ? Math.round(blocksDone / seconds) : 0;
    return { blocksDone, blocksToGo, blocksPerSecond, etaSeconds: blocksPerSecond > 0 ? Math.ceil(blocksToGo / blocksPerSecond) : null };
  }

  /**
   * The registry's logs of blocks [fromBlock, toBlock]; during a backfill only the backfill topics. As viem's getLogs
   * without an event (which takes no raw topics): eth_getLogs, each log formatted by viem. With `answered`, through
   * the log reader (when there is one), which calls it as the node's answer starts to arrive.
   */
  async #getLogs(fromBlock: bigint, toBlock: bigint, answered?: () => void): Promise<RegistryLog[]> {
    const topics = this.#caughtUp ? undefined : this.#options.backfillTopics;
    const filter = { address: this.#registry, fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) };
    const told = this.#options.logReader && answered;
    if (told) this.#awaitingAnswer.push(told);
    try {
      const logs = await (told ? (this.#options.logReader?.client ?? this.#client) : this.#client).request({
        method: 'eth_getLogs',
        params: [topics ? { ...filter, topics: [[...topics]] } : filter],
      });
      return logs.map((log) => formatLog(log) as RegistryLog);
    } finally {
      // failed unanswered (or answered and told already): not the next answer's
      const waiting = told ? this.#awaitingAnswer.indexOf(told) : -1;
      if (waiting >= 0) this.#awaitingAnswer.splice(waiting, 1);
    }
  }

  /** Starts every check's read at `blockNumber`; resolves to what to apply. */
  #runChecks(blockNumber: bigint): Promise<(() => void)[]> | undefined {
    const reads = [...this.#checks].flatMap((check) => check(blockNumber, this.#client) ?? []);
    return reads.length > 0 ? Promise.all(reads) : undefined;
  }

  /**
   * A checkpoint at `toBlock`, the end of a window short of the head and beyond a reorganisation's reach. Its hash
   * comes with the window's last log when that log is in `toBlock`, else from one eth_getBlockByNumber. Checks are not
   * run: they read the head's state.
   */
  async #checkpointWithin(logs: readonly RegistryLog[], toBlock: bigint): Promise<void> {
    const last = logs.reduce<RegistryLog | undefined>(
      (latest, log) => (latest === undefined || log.blockNumber > latest.blockNumber ? log : latest),
      undefined,
    );
    const hash = last?.blockNumber === toBlock && last.blockHash ? last.blockHash : await this.#hashAt(toBlock);
    // the chain no longer reaches that block (a local chain restarted): the next poll finds out
    if (hash === undefined || this.#processed !== toBlock) return;
    this.#checkpoint({ number: toBlock, hash });
  }

  #checkpoint(checkpoint: Checkpoint): void {
    if (this.#checkpoints.at(-1)?.number !== checkpoint.number) this.#checkpoints.push(checkpoint);
    const oldest = checkpoint.number - REORG_WINDOW;
    const drop = this.#checkpoints.findIndex((c) => c.number > oldest);
    if (drop > 0) this.#checkpoints.splice(0, drop);
    for (const listener of this.#checkpointListeners) {
      try {
        listener(this.#checkpoints);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
  }

  #deliver(logs: RegistryLog[], toBlock: bigint, head: bigint): void {
    if (toBlock <= this.#processed) return;
    // frozen: every subscriber reads the same array, and may keep what it derives from it (decodedRange)
    const ordered: readonly RegistryLog[] = Object.freeze(
      [...logs].sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1)),
    );
    for (const subscriber of this.#subscribers) {
      try {
        subscriber(ordered, toBlock, head);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
    this.#processed = toBlock;
  }
}
