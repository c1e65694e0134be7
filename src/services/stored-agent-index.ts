// The registry-derived index of one network (the agents of each human and of each nullifier) kept in the store, with the checkpoints (block number and hash) it is valid
// at, so that a start resumes from it instead of reading every log from the registry's deploy block.
//
// - Layout: a checkpoint record (the follower's checkpoints, the bucket numbers and journal segments stored and the
//   writer's fencing token), one entry per bucket of agent ids (human-agent-index.ts), and the index's undo journal in
//   segments. A write puts the buckets a poll changed, the journal entries it made (one new segment) and the
//   checkpoint in one store transaction (updateWith), once per poll that reached the head, never per log. The journal
//   holds every change of the last blocks a reorganisation may drop (on a busy chain, a megabyte): a poll writes only
//   what it added, and a segment whose every block is older than the oldest checkpoint kept is deleted, since no
//   reorganisation undoes it. After a rewind the journal is written again whole, as one segment.
// - Resume: the stored index is loaded (its record read again after its parts, so that what is loaded is one write's
//   though another instance writes meanwhile) and the follower continues after its last checkpoint; the follower's
//   first poll checks that block's hash, undoes a reorganisation through the older stored checkpoints and the
//   journal, or starts over from the deploy block (then the stored buckets are replaced).
// - One writer at a time: instances sharing a store (Redis) take a lease to write; each lease comes with a fencing
//   token, a number that grows with every lease taken, written into the checkpoint record as the lease is taken and
//   with every write. A write whose token is older than the stored one is refused inside the store's transaction: a
//   writer paused past its lease cannot overwrite what its successor stored, from the moment the successor took the
//   lease. Instances that do not hold the lease follow the chain from the stored index and keep their own copy
//   current in memory, and take the lease over when it expires (then write the whole index once).
// - While the store does not answer, the writes wait merged into one, which carries the whole journal (not every
//   entry made during the outage).
import type { Hash } from 'viem';
import type { Checkpoint, RegistryEventFollower } from '../chain/registry-events.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import type { HumanAgentIndex, IndexBucket, IndexChanges, JournalChanges, StoredUndo } from './human-agent-index.js';

export interface StoredAgentIndexOptions {
  store: KeyValueStore;
  /** Every key of this index starts with it: names the network, chain and registry. */
  prefix: string;
  index: HumanAgentIndex;
  follower: Pick<RegistryEventFollower, 'onCheckpoint' | 'resumeFrom' | 'running'>;
  /** This instance, as its lease names it. */
  instanceId: string;
  /** How long the writer's lease outlives its last renewal; default 15 s. */
  leaseMs?: number;
  clock?: () => number;
  onError?: (error: unknown) => void;
}

/**
 * The layout of the buckets and journal: a record of another layout (an older release's) counts as nothing stored,
 * so the index is rebuilt from the deploy block and replaces it. 2: buckets hold each agent's nullifier too; 3: their
 * addresses are in lower case; 4: the journal is kept apart from the checkpoint record; 5: in segments; 6: buckets
 * in bytes.
 */
export const STORED_INDEX_FORMAT = 6;

/** The checkpoint record. */
export interface StoredCheckpoint {
  format: number;
  /** The follower's checkpoints, oldest first: [block number (decimal), hash]. */
  checkpoints: [string, Hash][];
  /** The bucket numbers (decimal) that hold agents. */
  buckets: string[];
  /** The journal's segments, oldest first: [segment number, last block] (decimal). */
  journal: [string, string][];
  /** The number of the next segment. */
  nextSegment: number;
  /** The fencing token of the lease it was written under. */
  token: number;
}

interface Lease {
  holder: string;
}

/** What one write stores: the changes since the last write and the state they lead to. */
interface Snapshot {
  changes: IndexChanges;
  checkpoints: [string, Hash][];
  journal: JournalChanges;
}

/** Thrown inside the store's transaction: a writer with a newer token has stored its checkpoint. */
export class FencedWriteError extends Error {
  constructor(
    readonly token: number,
    readonly storedToken: number,
  ) {
    super(`The stored agent index was written under fencing token ${storedToken}; a write under ${token} is refused`);
  }
}

class LeaseHeld extends Error {}

/**
 * Reads of the stored index, each overtaken by a write, before a load gives up; between them a random pause of up to
 * CONSISTENT_READ_PAUSE_MS times the attempt (at most eight times): a writer writes once a poll, about once a block.
 */
const CONSISTENT_READ_ATTEMPTS = 30;
const CONSISTENT_READ_PAUSE_MS = 100;

export class StoredAgentIndex {
  readonly #options: StoredAgentIndexOptions;
  readonly #leaseMs: number;
  readonly #clock: () => number;
  /** The fencing token of the lease this instance holds; undefined while it does not write. */
  #token: number | undefined;
  /** Just took the lease: the next write stores the whole index, replacing what the previous writer left. */
  #takeover = false;
  #renewedAt = Number.NEGATIVE_INFINITY;
  /** When a reader last tried to take the lease (it tries every third of the lease's term). */
  #triedAt = Number.NEGATIVE_INFINITY;
  /** The last write failed (the store did not answer): the next snapshots take the whole journal. */
  #unwritten = false;
  /** A write waiting for the one in flight; later polls merge into it. */
  #pending: Snapshot | undefined;
  #writing: Promise<void> | undefined;
  #acquiring: Promise<void> | undefined;
  /** The last checkpoint stored (its block and hash), to skip polls that changed nothing. */
  #lastStored: string | undefined;
  /** stop() is under way: a lease being taken meanwhile is not kept. */
  #stopping = false;

  constructor(options: StoredAgentIndexOptions) {
    this.#options = options;
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#clock = options.clock ?? Date.now;
    options.follower.onCheckpoint((checkpoints) => this.#onCheckpoint(checkpoints));
  }

  /** Whether this instance holds the writer's lease now. */
  get writing(): boolean {
    return this.#token !== undefined;
  }

  /** The fencing token of this instance's lease (undefined when it does not hold it). */
  get token(): number | undefined {
    return this.#token;
  }

  #key(name: string): string {
    return `${this.#options.prefix}${name}`;
  }

  /**
   * Loads the stored index and has the follower continue after its checkpoint (call before the follower starts), and
   * takes the writer's lease if it is free (the first poll's checkpoint is then stored at once). Resolves false,
   * loading nothing, when nothing is stored or what is stored is incomplete.
   */
  async resume(): Promise<boolean> {
    if (this.#token === undefined) {
      this.#triedAt = this.#clock();
      await this.#acquire();
    }
    const loaded = await this.#load();
    // what the store holds is what was just loaded: the changes from here on are all there is to write
    if (loaded) this.#takeover = false;
    return loaded;
  }

  /** Resolves once no write is in flight or waiting. */
  async idle(): Promise<void> {
    while (this.#writing || this.#acquiring) {
      await this.#writing;
      await this.#acquiring;
    }
  }

  async #load(): Promise<boolean> {
    const { index, follower } = this.#options;
    if (follower.running) return false; // already following from wherever it started
    const read = await this.#read();
    if (read === undefined) return false;
    const { stored, segments, buckets } = read;
    try {
      index.load(buckets, segments.flat());
    } catch (error) {
      // a bucket that does not decode: the index is rebuilt from the deploy block and replaces what is stored
      this.#options.onError?.(error);
      return false;
    }
    follower.resumeFrom(stored.checkpoints.map(([number, hash]) => ({ number: BigInt(number), hash })));
    this.#lastStored = stored.checkpoints.at(-1)?.join(':');
    return true;
  }

  /**
   * The checkpoint record and the buckets and journal segments it lists, all of one write: another instance may write
   * while they are read (the parts are several keys), so the record is read again after its parts, and the whole read
   * repeated until it is unchanged, after a random pause that moves it off the writer's rhythm (a write a poll).
   * Undefined when nothing complete is stored.
   */
  async #read(): Promise<{ stored: StoredCheckpoint; segments: StoredUndo[][]; buckets: IndexBucket[] } | undefined> {
    const { store } = this.#options;
    const key = this.#key('checkpoint');
    const usable = (record: StoredCheckpoint | undefined): record is StoredCheckpoint =>
      record?.format === STORED_INDEX_FORMAT && record.checkpoints.length > 0;
    let stored = await store.get<StoredCheckpoint>(key);
    for (let attempt = 1; usable(stored); attempt++) {
      const [segments, buckets] = await Promise.all([
        Promise.all(stored.journal.map(([segment]) => store.get<StoredUndo[]>(this.#key(`journal:${segment}`)))),
        Promise.all(stored.buckets.map((bucket) => store.get<IndexBucket>(this.#key(`bucket:${bucket}`)))),
      ]);
      const again = await store.get<StoredCheckpoint>(key);
      if (JSON.stringify(again) === JSON.stringify(stored)) {
        if (segments.some((segment) => !Array.isArray(segment)) || buckets.some((bucket) => bucket === undefined)) return undefined;
        return { stored, segments: segments as StoredUndo[][], buckets: buckets as IndexBucket[] };
      }
      stored = again;
      if (!usable(stored)) break;
      if (attempt === CONSISTENT_READ_ATTEMPTS) {
        throw new Error(`The stored agent index changed under ${CONSISTENT_READ_ATTEMPTS} reads in a row; not loaded`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * CONSISTENT_READ_PAUSE_MS * Math.min(attempt, 8)));
    }
    return undefined;
  }

  /**
   * Waits for a write in flight and lets the lease go, so another instance takes over at once (call once the follower
   * has stopped; when it runs again, this instance takes the lease back if it is free).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    try {
      await this.#writing;
      await this.#acquiring;
      if (this.#token === undefined) return;
      this.#token = undefined;
      await this.#options.store
        .update<Lease>(this.#key('lease'), (lease) => (lease?.holder === this.#options.instanceId ? undefined : lease))
        .catch((error: unknown) => this.#options.onError?.(error));
    } finally {
      this.#stopping = false;
    }
  }

  /** Runs in the follower's tick: the index is at the last checkpoint now. */
  #onCheckpoint(checkpoints: readonly Checkpoint[]): void {
    if (this.#stopping) return;
    const { index } = this.#options;
    if (this.#token === undefined) {
      // a reader's changes: written in full if it takes the lease over
      index.takeChanges();
      index.takeJournal();
      if (this.#acquiring || this.#clock() - this.#triedAt < this.#leaseMs / 3) return;
      this.#triedAt = this.#clock();
      this.#acquiring = this.#acquire().finally(() => {
        this.#acquiring = undefined;
      });
      return;
    }
    if (this.#takeover) {
      this.#takeover = false;
      index.markAllChanged();
      const all = index.takeChanges();
      all.cleared = true;
      this.#queue(all, index.takeJournal(), checkpoints);
      return;
    }
    const changes = index.takeChanges();
    // while the store does not answer, each poll's snapshot carries the whole journal (it replaces the one waiting):
    // what waits stays the size of the journal, however long the outage
    if (this.#unwritten) index.retakeJournal();
    const journal = index.takeJournal();
    const last = checkpoints.at(-1);
    const unchanged =
      !changes.cleared &&
      changes.buckets.size === 0 &&
      !journal.rewritten &&
      journal.entries.length === 0 &&
      last &&
      `${last.number}:${last.hash}` === this.#lastStored;
    if (!unchanged) this.#queue(changes, journal, checkpoints);
    else if (this.#clock() - this.#renewedAt > this.#leaseMs / 3) void this.#renew();
  }

  #queue(changes: IndexChanges, journal: JournalChanges, checkpoints: readonly Checkpoint[]): void {
    const snapshot: Snapshot = { changes, journal, checkpoints: checkpoints.map(({ number, hash }) => [number.toString(), hash]) };
    this.#pending = this.#pending ? merged(this.#pending, snapshot) : snapshot;
    this.#writing ??= this.#drain().finally(() => {
      this.#writing = undefined;
    });
  }

  /** Writes the pending snapshots one after another. */
  async #drain(): Promise<void> {
    for (let snapshot = this.#pending; snapshot && this.#token !== undefined; snapshot = this.#pending) {
      this.#pending = undefined;
      try {
        await this.#write(snapshot, this.#token);
        this.#unwritten = false;
      } catch (error) {
        if (error instanceof FencedWriteError) {
          // a newer writer stored its index (not a fault: what fencing is for): this one only reads from now on
          this.#token = undefined;
          this.#pending = undefined;
          return;
        }
        // the store did not answer: written with the next poll's changes
        this.#pending = this.#pending ? merged(snapshot, this.#pending) : snapshot;
        this.#unwritten = true;
        this.#options.onError?.(error);
        return;
      }
      await this.#renew();
    }
  }

  async #write(snapshot: Snapshot, token: number): Promise<void> {
    const { changes, journal } = snapshot;
    await this.#options.store.updateWith<StoredCheckpoint>(this.#key('checkpoint'), (current) => {
      if (current && current.token > token) throw new FencedWriteError(token, current.token);
      const writes = new Map<string, unknown>();
      const buckets = new Set(changes.cleared ? [] : (current?.buckets ?? []));
      // a clear drops every bucket the store holds (and an older layout's journal); those the index holds again are
      // written below
      if (changes.cleared) {
        for (const bucket of current?.buckets ?? []) writes.set(this.#key(`bucket:${bucket}`), undefined);
        writes.set(this.#key('journal'), undefined);
      }
      for (const [bucket, entries] of changes.buckets) {
        writes.set(this.#key(`bucket:${bucket}`), entries);
        if (entries === undefined) buckets.delete(bucket.toString());
        else buckets.add(bucket.toString());
      }
      const stored = current?.format === STORED_INDEX_FORMAT ? current : undefined;
      let nextSegment = stored?.nextSegment ?? 0;
      // the segments kept: none when the journal is written again whole; none whose every block is older than the
      // oldest checkpoint (a reorganisation is undone down to a checkpoint kept, never below)
      const oldest = BigInt(snapshot.checkpoints[0]?.[0] ?? 0);
      const segments: [string, string][] = [];
      for (const segment of stored?.journal ?? []) {
        if (journal.rewritten || changes.cleared || BigInt(segment[1]) <= oldest) writes.set(this.#key(`journal:${segment[0]}`), undefined);
        else segments.push(segment);
      }
      const last = journal.entries.at(-1);
      if (last) {
        const segment = String(nextSegment++);
        writes.set(this.#key(`journal:${segment}`), journal.entries);
        segments.push([segment, last[0]]);
      }
      const value = { format: STORED_INDEX_FORMAT, checkpoints: snapshot.checkpoints, buckets: [...buckets], journal: segments, nextSegment, token };
      return { value, writes };
    });
    this.#lastStored = snapshot.checkpoints.at(-1)?.join(':');
  }

  /** Holds the lease for another #leaseMs; throws LeaseHeld when another instance holds it. */
  #holdLease(): Promise<Lease | undefined> {
    const { store, instanceId } = this.#options;
    return store.update<Lease>(
      this.#key('lease'),
      (lease) => {
        if (lease && lease.holder !== instanceId) throw new LeaseHeld();
        return { holder: instanceId };
      },
      this.#leaseMs,
    );
  }

  /** Takes the lease when nobody holds it (or this instance did, before a restart), with a new fencing token. */
  async #acquire(): Promise<void> {
    const { store } = this.#options;
    try {
      await this.#holdLease();
    } catch (error) {
      if (!(error instanceof LeaseHeld)) this.#options.onError?.(error);
      return;
    }
    const token = await store
      .update<number>(this.#key('fence'), (last) => (last ?? 0) + 1)
      .catch((error: unknown) => {
        this.#options.onError?.(error);
        return undefined;
      });
    if (token === undefined || this.#stopping) return;
    // the token goes into the checkpoint record at once, not with this writer's first write: from here on a writer
    // paused past its lease (it holds an older token) has its writes refused, also before this one writes
    const fenced = await store
      .update<StoredCheckpoint>(this.#key('checkpoint'), (current) => (current && current.token < token ? { ...current, token } : current))
      .then(
        () => true,
        (error: unknown) => {
          this.#options.onError?.(error);
          return false;
        },
      );
    if (!fenced || this.#stopping) return;
    this.#token = token;
    this.#takeover = true;
    this.#renewedAt = this.#clock();
  }

  /** Keeps the lease; when another instance holds it now, this one stops writing. */
  async #renew(): Promise<void> {
    this.#renewedAt = this.#clock();
    try {
      await this.#holdLease();
    } catch (error) {
      if (error instanceof LeaseHeld) this.#token = undefined;
      else this.#options.onError?.(error);
    }
  }
}

/** An unwritten snapshot followed by a later one: the later state, with the changes of both. */
function merged(older: Snapshot, newer: Snapshot): Snapshot {
  if (newer.changes.cleared) return newer;
  const buckets = new Map([...older.changes.buckets, ...newer.changes.buckets]);
  const journal = newer.journal.rewritten
    ? newer.journal
    : { rewritten: older.journal.rewritten, entries: [...older.journal.entries, ...newer.journal.entries] };
  return { ...newer, changes: { cleared: older.changes.cleared, buckets }, journal };
}
