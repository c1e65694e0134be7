// Which agents belong to a human wallet, built from the registry's logs (its ERC-721 is not enumerable): an
// address's agents are those whose NFT it owns (ERC-721 Transfer) and those it is the guardian of (GuardianSet).
// And the agents of each human nullifier, as the registry lists them: an agent joins its nullifier's list when it is
// registered with a proof (AgentRegisteredWithHumanProof carries the nullifier) and leaves it when revoked
// (HumanProofRevoked, with the burn).
// The network's log follower backfills it from the registry's deploy block and keeps it current; burns (Transfer
// to the zero address) remove the agent from both sides.
//
// Who counts, by registration mode: linked and privy agents -> the human's wallet (owner); wallet-free and
// smartwallet agents -> the agent's own address (owner) and the guardian, if one was set; Ed25519 agents -> the
// address derived from the key (owner) and the guardian (ed25519-linked).
//
// A chain reorganisation drops blocks whose logs were applied: every change of the last REORG_WINDOW blocks is
// journaled with what it replaced, so rewindTo(ancestor) undoes those after the ancestor, newest first. A stored copy
// takes the entries journaled since it last took them (takeJournal), or the whole journal after a rewind.
//
// What changed since the last takeChanges() is kept by bucket of agent ids (BUCKET_SIZE consecutive ids), so that a
// stored copy (stored-agent-index.ts) rewrites the few buckets a poll touched, and loads the whole index in a few reads.
//
// Addresses are kept in lower case: a checksum is a keccak256 per address, the bulk of a long backfill's work, and
// the index only ever compares them.
//
// Where it is held: a backfill (or a load of the stored index) fills typed arrays (agent-value-table.ts), which take
// 100,000 agents' values in 0.2 s; once the network is live, moveToDisk() copies them in slices to a temporary sqlite
// database (disk-value-table.ts) and lets them go, so that the process's memory does not grow with the registry. A
// clear() or a load() puts the index back in the arrays until the next move.
//
// Each address whose agents a log changes (the one that loses an agent and the one that gains it) is told to
// `onChange` as the log is applied, so answers kept elsewhere follow (rewinds and clears are announced by the caller).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { type Address, zeroAddress } from 'viem';
import { decodedRange, type RegistryLogEffect, type RegistryLogLike } from '../chain/actions/registry-logs.js';
import { REORG_WINDOW } from '../chain/registry-events.js';
import { AgentValueTable, addressCodec, MAX_AGENT_ID, uint256Codec, type ValueTable } from './agent-value-table.js';
import { DiskValueTable, inTransaction, isSqliteFailure, temporaryDatabase } from './disk-value-table.js';
import { type JournalEntry, type JournalSide, UndoJournal } from './undo-journal.js';

type AddressIndex = ValueTable<Address>;
type Side = AddressIndex | ValueTable<bigint>;
/** One side's values of a bucket's agents, agent first + i's at i * width, and which agents have one. */
interface BucketSide {
  width: number;
  values: Buffer;
  held: Uint8Array;
}
/** The owners, guardians and nullifiers, by their journal side code. */
type Tables = readonly [AddressIndex, AddressIndex, ValueTable<bigint>];
type MemoryTables = readonly [AgentValueTable<Address>, AgentValueTable<Address>, AgentValueTable<bigint>];
const memoryTables = (): MemoryTables => [new AgentValueTable(addressCodec), new AgentValueTable(addressCodec), new AgentValueTable(uint256Codec)];
const TABLE_NAMES = ['owners', 'guardians', 'nullifiers'] as const;

/**
 * How long one slice of a move to disk may run before the follower and the requests get their turn, in ms; each slice
 * copies MOVE_SLICE rows at a time until then.
 */
const MOVE_SLICE_MS = 0.5;
const MOVE_SLICE = 16;

/** The journal's side codes, and their letters in a stored entry. */
const OWNER_SIDE = 0;
const GUARDIAN_SIDE = 1;
const NULLIFIER_SIDE = 2;
const SIDE_LETTERS = ['o', 'g', 'n'] as const;

const lower = (address: Address): Address => address.toLowerCase() as Address;

const ascending = (ids: Iterable<number>): bigint[] => [...ids].sort((a, b) => a - b).map(BigInt);

/** Consecutive agent ids stored together. */
export const BUCKET_SIZE = 1024n;
const bucketOf = (agentId: bigint): bigint => agentId / BUCKET_SIZE;

/**
 * One bucket's agents, as stored: base64 of one record per agent that has a value, in ascending id order: the id
 * (32 bits, little-endian), a byte saying which values follow (OWNER | GUARDIAN | NULLIFIER), then those values'
 * bytes (20, 20 and 32). Bytes rather than JSON of strings: written and read without a string per agent, so a
 * checkpoint of a backfill and a restart's load cost a copy per agent.
 */
export type IndexBucket = string;

const OWNER = 1 << OWNER_SIDE;
const GUARDIAN = 1 << GUARDIAN_SIDE;
const NULLIFIER = 1 << NULLIFIER_SIDE;
const RECORD_HEAD = 5;
const RECORD_MAX = RECORD_HEAD + 20 + 20 + 32;

/** One agent of a bucket, readable: id, owner, guardian and nullifier (null where none). */
export type BucketEntry = [agentId: number, owner: Address | null, guardian: Address | null, nullifier: bigint | null];

/** What is stored of the index does not decode (a store written by something else, or damaged). */
class MalformedStoredIndex extends Error {
  constructor(part: 'bucket' | 'journal entry') {
    super(`A stored ${part} of the agent index is malformed`);
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DECIMAL = /^\d{1,78}$/;

/** The records of a stored bucket: each agent's id and where its values start in `bytes` (-1: none). */
function* bucketRecords(bucket: IndexBucket): Generator<[bytes: Buffer, agentId: number, owner: number, guardian: number, nullifier: number]> {
  if (typeof bucket !== 'string') throw new MalformedStoredIndex('bucket');
  const bytes = Buffer.from(bucket, 'base64');
  let at = 0;
  while (at < bytes.length) {
    if (at + RECORD_HEAD > bytes.length) throw new MalformedStoredIndex('bucket');
    const agentId = bytes.readUInt32LE(at);
    const flags = bytes[at + 4] as number;
    at += RECORD_HEAD;
    if (flags === 0 || flags > (OWNER | GUARDIAN | NULLIFIER)) throw new MalformedStoredIndex('bucket');
    const owner = flags & OWNER ? at : -1;
    if (flags & OWNER) at += addressCodec.width;
    const guardian = flags & GUARDIAN ? at : -1;
    if (flags & GUARDIAN) at += addressCodec.width;
    const nullifier = flags & NULLIFIER ? at : -1;
    if (flags & NULLIFIER) at += uint256Codec.width;
    if (at > bytes.length) throw new MalformedStoredIndex('bucket');
    yield [bytes, agentId, owner, guardian, nullifier];
  }
}

/** A stored bucket's agents, readable (diagnostics and tests). */
export function bucketEntries(bucket: IndexBucket): BucketEntry[] {
  return [...bucketRecords(bucket)].map(([bytes, agentId, owner, guardian, nullifier]) => [
    agentId,
    owner < 0 ? null : addressCodec.read(bytes, owner),
    guardian < 0 ? null : addressCodec.read(bytes, guardian),
    nullifier < 0 ? null : uint256Codec.read(bytes, nullifier),
  ]);
}

/** A bucket as stored, from its agents in ascending id order (the inverse of bucketEntries). */
export function encodeBucket(entries: readonly BucketEntry[]): IndexBucket {
  const bytes = Buffer.alloc(entries.length * RECORD_MAX);
  const value = Buffer.alloc(uint256Codec.width);
  let at = 0;
  for (const [agentId, owner, guardian, nullifier] of entries) {
    bytes.writeUInt32LE(agentId, at);
    bytes[at + 4] = (owner ? OWNER : 0) | (guardian ? GUARDIAN : 0) | (nullifier !== null ? NULLIFIER : 0);
    at += RECORD_HEAD;
    for (const address of [owner, guardian]) {
      if (!address) continue;
      if (!addressCodec.write(address, value)) throw new RangeError(`${address} is not an address`);
      at += value.copy(bytes, at, 0, addressCodec.width);
    }
    if (nullifier === null) continue;
    if (!uint256Codec.write(nullifier, value)) throw new RangeError(`${nullifier} is not a 256-bit nullifier`);
    at += value.copy(bytes, at);
  }
  return bytes.toString('base64', 0, at);
}

/** A journal entry as stored: block, side (o: owner, g: guardian, n: nullifier), agent id, the value replaced or null. */
export type StoredUndo = [string, 'o' | 'g' | 'n', string, string | null];

/** The journal entries to store: those made since the last takeJournal(), or (rewritten) the whole journal. */
export interface JournalChanges {
  rewritten: boolean;
  entries: StoredUndo[];
}

/** What changed since the last takeChanges(): the whole index was cleared, and the buckets to write (undefined: none of its agents is left, delete). */
export interface IndexChanges {
  cleared: boolean;
  buckets: Map<bigint, IndexBucket | undefined>;
}

export interface HumanAgentIndexOptions {
  /**
   * The database failed once the index was in it (a write or read of its temporary file): what it holds can no longer
   * be trusted, so the caller has the index rebuilt (the follower starts over, and its clear() puts the index back in
   * memory). Told once per database.
   */
  onDiskFailure?: (error: unknown) => void;
  /** Opens the database moveToDisk() moves to; default a temporary one (disk-value-table.ts). */
  openDatabase?: () => Database.Database;
}

export class HumanAgentIndex {
  /** The typed arrays, while they hold the index: from a start, a clear() or a load() until moveToDisk() is done. */
  #memory: MemoryTables | undefined = memoryTables();
  #tables: Tables = this.#memory as MemoryTables;
  /** The temporary database holding the tables once moved, and the move under way. */
  #db: Database.Database | undefined;
  #moving: Promise<void> | undefined;
  /** Counts clear() and load() calls: a move begun before one of them is given up. */
  #generation = 0;
  /** The changes of recent blocks, oldest first (logs without a block number, from tests, are not journaled). */
  readonly #journal = new UndoJournal();
  /** Whether journal entries taken before were undone since the last takeJournal(). */
  #journalRewritten = false;
  /** Buckets changed since the last takeChanges(), and whether the index was cleared meanwhile. */
  #dirty = new Set<bigint>();
  #cleared = false;
  /** Where #bucket() writes a bucket's records. */
  readonly #bucketBytes = Buffer.alloc(Number(BUCKET_SIZE) * RECORD_MAX);
  /** Where #bucket() reads each side's values of a bucket's agents, by journal side code (the flag bit 1 << code). */
  readonly #bucketSides: readonly BucketSide[] = [addressCodec.width, addressCodec.width, uint256Codec.width].map((width) => ({
    width,
    values: Buffer.alloc(Number(BUCKET_SIZE) * width),
    held: new Uint8Array(Number(BUCKET_SIZE)),
  }));

  /** The database that failed, once onDiskFailure was told. */
  #failed: Database.Database | undefined;
  readonly #options: HumanAgentIndexOptions;

  constructor(
    private readonly onChange: (address: Address) => void = () => {},
    options: HumanAgentIndexOptions = {},
  ) {
    this.#options = options;
  }

  /** Runs `work` on the tables, telling onDiskFailure when sqlite fails under it. */
  #guarded<T>(work: () => T): T {
    const db = this.#db;
    if (!db) return work();
    try {
      return work();
    } catch (error) {
      if (isSqliteFailure(error) && this.#failed !== db) {
        this.#failed = db;
        this.#options.onDiskFailure?.(error);
      }
      throw error;
    }
  }

  get #owners(): AddressIndex {
    return this.#tables[OWNER_SIDE];
  }

  get #guardians(): AddressIndex {
    return this.#tables[GUARDIAN_SIDE];
  }

  get #nullifiers(): ValueTable<bigint> {
    return this.#tables[NULLIFIER_SIDE];
  }

  /** Where the index is held now. */
  get storage(): 'memory' | 'disk' {
    return this.#db ? 'disk' : 'memory';
  }

  /** Runs a change of several values at once: in the database, in one transaction. */
  #batch(work: () => void): void {
    const db = this.#db;
    this.#guarded(() => (db ? inTransaction(db, work) : work()));
  }

  /** Gives up the database (and a move under way) for empty typed arrays. */
  #toMemory(): MemoryTables {
    // a move under way gives up at its next slice; the next moveToDisk() starts one of its own
    this.#generation++;
    this.#moving = undefined;
    this.#db?.close();
    this.#db = undefined;
    this.#memory = memoryTables();
    this.#tables = this.#memory;
    return this.#memory;
  }

  /**
   * Moves the index from its typed arrays to a temporary database (disk-value-table.ts), in slices of about
   * MOVE_SLICE_MS between which the follower applies logs and requests are answered; what changes meanwhile is copied
   * again at the end. Call it once the network is live. Resolves when the move is done, or given up by a clear() or
   * load() made meanwhile (the arrays then hold the index until the next call); rejects, leaving the index in the
   * arrays, when sqlite fails (its temporary directory cannot be written).
   */
  moveToDisk(): Promise<void> {
    if (this.#db) return Promise.resolve();
    if (!this.#moving) {
      const moving = this.#move().finally(() => {
        if (this.#moving === moving) this.#moving = undefined;
      });
      this.#moving = moving;
    }
    return this.#moving;
  }

  async #move(): Promise<void> {
    const generation = this.#generation;
    const memory = this.#memory as MemoryTables;
    const db = (this.#options.openDatabase ?? temporaryDatabase)();
    let moved = false;
    try {
      const disk = [
        new DiskValueTable(db, TABLE_NAMES[0], addressCodec),
        new DiskValueTable(db, TABLE_NAMES[1], addressCodec),
        new DiskValueTable(db, TABLE_NAMES[2], uint256Codec),
      ] as const;
      for (const side of memory) side.trackTouched();
      // one transaction for the whole copy: nothing else writes to the database until it is done, and a commit per
      // slice would write its pages out each time
      db.exec('BEGIN');
      /** Per side, the agents [0, copied) are copied (and changed since, if touched). */
      const copied = [0, 0, 0];
      for (let code = 0; code < 3; code++) {
        const [from, to] = [memory[code] as AgentValueTable<Address | bigint>, disk[code] as DiskValueTable<Address | bigint>];
        while (to.valueCount < from.valueCount || (copied[code] as number) < from.agentEnd) {
          const until = performance.now() + MOVE_SLICE_MS;
          do {
            if (to.valueCount < from.valueCount) to.copyValues(from, Math.min(from.valueCount, to.valueCount + MOVE_SLICE));
            else {
              const start = copied[code] as number;
              copied[code] = Math.min(from.agentEnd, start + MOVE_SLICE);
              to.copyAgents(from, start, copied[code] as number);
            }
          } while (performance.now() < until && (to.valueCount < from.valueCount || (copied[code] as number) < from.agentEnd));
          await nextTurn();
          if (this.#generation !== generation) return;
        }
      }
      // what changed while the slices ran: values numbered since, agents changed since their slice
      for (let code = 0; code < 3; code++) {
        const [from, to] = [memory[code] as AgentValueTable<Address | bigint>, disk[code] as DiskValueTable<Address | bigint>];
        to.copyValues(from, from.valueCount);
        for (const agentId of from.takeTouched()) to.copyAgents(from, agentId, agentId + 1);
        to.copyAgents(from, copied[code] as number, from.agentEnd);
      }
      db.exec('COMMIT');
      this.#db = db;
      this.#tables = disk;
      this.#memory = undefined;
      moved = true;
    } finally {
      if (!moved) {
        db.close();
        for (const side of memory) side.takeTouched();
      }
    }
  }

  /**
   * Applies a range of registry logs, in order; `toBlock` is the range's last block, `head` the chain's latest block
   * then (changes of blocks a reorganisation cannot reach from it, a backfill's, are not journaled).
   */
  apply(logs: readonly (RegistryLogLike & { blockNumber?: bigint | null })[], toBlock?: bigint, head?: bigint): void {
    const final = (head ?? toBlock ?? 0n) - REORG_WINDOW;
    const effects = decodedRange(logs);
    this.#batch(() => this.#applyDecoded(logs, effects, final));
    // changes older than a reorganisation can reach are final
    if (toBlock !== undefined) this.#journal.dropThrough(final);
  }

  #applyDecoded(logs: readonly (RegistryLogLike & { blockNumber?: bigint | null })[], effects: readonly RegistryLogEffect[], final: bigint): void {
    for (let i = 0; i < logs.length; i++) {
      const log = logs[i] as (typeof logs)[number];
      const effect = effects[i] as RegistryLogEffect;
      if (effect.kind !== 'agent') continue;
      const { agentId } = effect;
      // the block whose change a reorganisation may undo; undefined: final (or a test's log without a block)
      const undoable = log.blockNumber != null && log.blockNumber > final ? log.blockNumber : undefined;
      if (effect.owner === zeroAddress) {
        this.#change(OWNER_SIDE, agentId, zeroAddress, undoable);
        this.#change(GUARDIAN_SIDE, agentId, zeroAddress, undoable);
        this.#list(agentId, undefined, undoable);
      } else if (effect.owner !== undefined) {
        this.#change(OWNER_SIDE, agentId, effect.owner, undoable);
      }
      if (effect.guardian !== undefined) this.#change(GUARDIAN_SIDE, agentId, effect.guardian, undoable);
      if (effect.nullifier !== undefined) this.#list(agentId, effect.revoked ? undefined : effect.nullifier, undoable);
    }
  }

  /** Sets the agent's owner or guardian (the zero address: none), journaled at block `undoable` unless final. */
  #change(code: typeof OWNER_SIDE | typeof GUARDIAN_SIDE, agentId: bigint, address: Address, undoable: bigint | undefined): void {
    const side = this.#tables[code];
    const previous = side.get(agentId);
    if (undoable !== undefined) this.#journaled(undoable, code, agentId, side);
    this.#dirty.add(bucketOf(agentId));
    side.set(agentId, address === zeroAddress ? undefined : address);
    if (previous !== undefined) this.onChange(previous);
    if (address !== zeroAddress) this.onChange(address);
  }

  /** Puts the agent on a nullifier's list (undefined: on none), journaled at block `undoable` unless final. */
  #list(agentId: bigint, nullifier: bigint | undefined, undoable: bigint | undefined): void {
    const previous = this.#nullifiers.get(agentId);
    if (previous === nullifier) return;
    if (undoable !== undefined) this.#journaled(undoable, NULLIFIER_SIDE, agentId, this.#nullifiers);
    this.#dirty.add(bucketOf(agentId));
    this.#nullifiers.set(agentId, nullifier);
  }

  /** Journals the agent's value on `side` as the one a change at block `blockNumber` replaces. */
  #journaled(blockNumber: bigint, code: JournalSide, agentId: bigint, side: Side): void {
    this.#journal.push(blockNumber, code, agentId, side.heldBy(Number(agentId)));
  }

  /** Undoes the changes of blocks after `ancestor` (a reorganisation dropped them), newest first. */
  rewindTo(ancestor: bigint): void {
    this.#batch(() => {
      for (let undo = this.#journal.popAfter(ancestor); undo; undo = this.#journal.popAfter(ancestor)) {
        this.#journalRewritten = true;
        this.#tables[undo.side].restore(undo.agentId, undo.previous);
        this.#dirty.add(bucketOf(BigInt(undo.agentId)));
      }
    });
  }

  /** Forgets every agent (the follower starts over from the deploy block and delivers every log again). */
  clear(): void {
    this.#toMemory();
    this.#journal.clear();
    this.#journalRewritten = true;
    this.#dirty.clear();
    this.#cleared = true;
  }

  /** The buckets changed since the last call (their whole content now), then forgets they changed. */
  takeChanges(): IndexChanges {
    const buckets = this.#guarded(() => new Map([...this.#dirty].map((bucket) => [bucket, this.#bucket(bucket)])));
    const changes = { cleared: this.#cleared, buckets };
    this.#dirty.clear();
    this.#cleared = false;
    return changes;
  }

  /**
   * The journal entries made since the last call, then forgets they were made; the whole journal once entries taken
   * before were undone (a rewind, a clear) or after markAllChanged().
   */
  takeJournal(): JournalChanges {
    const rewritten = this.#journalRewritten;
    const entries = this.#guarded(() => this.#stored(rewritten ? this.#journal.entries() : this.#journal.takeFresh()));
    this.#journal.forgetFresh();
    this.#journalRewritten = false;
    return { rewritten, entries };
  }

  /** The next takeJournal() holds the whole journal: a stored copy whose writes failed replaces its journal rather than collect entries. */
  retakeJournal(): void {
    this.#journalRewritten = true;
  }

  /** Every bucket counts as changed, and the whole journal: the next takes hold the whole index (a writer taking over the store). */
  markAllChanged(): void {
    this.#journalRewritten = true;
    const buckets = new Set<number>();
    this.#guarded(() => {
      for (const side of this.#tables as readonly Side[])
        for (const agentId of side.agentIds()) buckets.add(Math.floor(agentId / Number(BUCKET_SIZE)));
    });
    for (const bucket of buckets) this.#dirty.add(BigInt(bucket));
  }

  /** The bucket as stored; undefined when none of its agents has a value. */
  #bucket(bucket: bigint): IndexBucket | undefined {
    const first = Number(bucket * BUCKET_SIZE);
    const size = Number(BUCKET_SIZE);
    // each side's values of the bucket's agents, read at once (one query each once the index is in its database)
    this.#tables.forEach((side, code) => {
      const { values, held } = this.#bucketSides[code] as BucketSide;
      held.fill(0);
      side.copyRange(first, first + size, values, held);
    });
    const [owners, guardians, nullifiers] = this.#bucketSides as [BucketSide, BucketSide, BucketSide];
    const bytes = this.#bucketBytes;
    let at = 0;
    for (let i = 0; i < size; i++) {
      const flags = (owners.held[i] ? OWNER : 0) | (guardians.held[i] ? GUARDIAN : 0) | (nullifiers.held[i] ? NULLIFIER : 0);
      if (flags === 0) continue;
      bytes.writeUInt32LE(first + i, at);
      bytes[at + 4] = flags;
      at += RECORD_HEAD;
      // a record's values in side order: owner, guardian, nullifier
      for (const { values, held, width } of [owners, guardians, nullifiers]) if (held[i]) at += values.copy(bytes, at, i * width, (i + 1) * width);
    }
    return at === 0 ? undefined : bytes.toString('base64', 0, at);
  }

  /** The journal of recent changes, to store with the buckets (a resumed index can then undo a reorganisation). */
  storedJournal(): StoredUndo[] {
    return this.#guarded(() => this.#stored(this.#journal.entries()));
  }

  #stored(undos: Iterable<JournalEntry>): StoredUndo[] {
    const stored: StoredUndo[] = [];
    for (const { blockNumber, side, agentId, previous } of undos) {
      const value = (this.#tables[side] as Side).valueOf(previous);
      stored.push([blockNumber.toString(), SIDE_LETTERS[side], agentId.toString(), value === undefined ? null : value.toString()]);
    }
    return stored;
  }

  /**
   * Replaces the index with stored buckets and journal; nothing counts as changed. Throws, holding nothing, when a
   * bucket or a journal entry is malformed.
   */
  load(buckets: Iterable<IndexBucket>, journal: readonly StoredUndo[]): void {
    const [owners, guardians, nullifiers] = this.#toMemory();
    this.#journal.clear();
    try {
      for (const entry of journal) this.#journalStored(entry);
      for (const bucket of buckets) {
        for (const [bytes, agentId, owner, guardian, nullifier] of bucketRecords(bucket)) {
          if (owner >= 0) owners.setBytes(agentId, bytes, owner);
          if (guardian >= 0) guardians.setBytes(agentId, bytes, guardian);
          if (nullifier >= 0) nullifiers.setBytes(agentId, bytes, nullifier);
        }
      }
    } catch (error) {
      this.#toMemory();
      this.#journal.clear();
      throw error;
    }
    this.#journal.forgetFresh();
    this.#journalRewritten = false;
    this.#dirty.clear();
    this.#cleared = false;
  }

  /** Journals a stored entry, checked: a rewind must not fail halfway on a value it cannot put back. */
  #journalStored(entry: StoredUndo): void {
    const [blockNumber, side, id, previous] = Array.isArray(entry) ? entry : [];
    const valid =
      typeof blockNumber === 'string' &&
      DECIMAL.test(blockNumber) &&
      typeof id === 'string' &&
      DECIMAL.test(id) &&
      (previous === null ||
        (side === 'n' && typeof previous === 'string' && DECIMAL.test(previous) && BigInt(previous) < 2n ** 256n) ||
        ((side === 'o' || side === 'g') && typeof previous === 'string' && ADDRESS.test(previous)));
    if (!valid || (side !== 'o' && side !== 'g' && side !== 'n')) throw new MalformedStoredIndex('journal entry');
    // what the journal holds: agent ids as the index does, block numbers as exact doubles
    if (BigInt(id) > MAX_AGENT_ID || BigInt(blockNumber) > Number.MAX_SAFE_INTEGER) throw new MalformedStoredIndex('journal entry');
    const code = SIDE_LETTERS.indexOf(side) as JournalSide;
    // load() has put the index in the arrays
    const [owners, guardians, nullifiers] = this.#memory as MemoryTables;
    let held = 0;
    if (previous !== null && code === NULLIFIER_SIDE) held = nullifiers.numberOf(BigInt(previous));
    else if (previous !== null) held = (code === OWNER_SIDE ? owners : guardians).numberOf(previous as Address);
    this.#journal.push(BigInt(blockNumber), code, BigInt(id), held);
  }

  /** The agents on `nullifier`'s list (registered with that human's proof, not revoked), in ascending id order. */
  agentsOfNullifier(nullifier: bigint): bigint[] {
    return ascending(this.#guarded(() => this.#nullifiers.agentsOf(nullifier)));
  }

  /** The agents `address` owns or is the guardian of, in ascending id order. */
  agentsOf(address: Address): bigint[] {
    const key = lower(address);
    return ascending(this.#guarded(() => new Set([...this.#owners.agentsOf(key), ...this.#guardians.agentsOf(key)])));
  }
}
