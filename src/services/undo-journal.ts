// The registry index's undo journal: each change of the last blocks a reorganisation may drop, with the value it
// replaced, oldest first, in typed arrays.
//
// Why not an object per change: a dense chain's last REORG_WINDOW blocks hold 20,000-60,000 changes (200
// registrations a block), and an object with a bigint block number and agent id each is about 100 bytes of V8's
// heap, traced at every full collection and counted when V8 sizes its old generation. Here a change takes 17 bytes
// outside that heap: the value it replaced is kept as its number in the index's table (agent-value-table.ts), which
// stands for the value until the table is cleared, and the journal is cleared with it.
//
// Entries are appended in block order and leave from either end: the oldest once final (dropThrough), the newest
// when a reorganisation undoes them (pop). The arrays are used as a window [#start, #end) that moves up and is
// compacted when it reaches their end.
import { MAX_AGENT_ID } from './agent-value-table.js';

/** Which of an agent's values a change set. */
export type JournalSide = 0 | 1 | 2;

/** The arrays' least length once an entry is held. */
const MIN_SIZE = 256;

/** One entry, read: the block, which value, the agent, and the value replaced (its number in its table; 0: none). */
export interface JournalEntry {
  blockNumber: bigint;
  side: JournalSide;
  agentId: number;
  previous: number;
}

export class UndoJournal {
  #blocks = new Float64Array(0);
  #agents = new Uint32Array(0);
  #sides = new Uint8Array(0);
  #previous = new Uint32Array(0);
  #start = 0;
  #end = 0;
  /** Where the entries made since the last takeFresh() begin (at most #end, at least #start when read). */
  #fresh = 0;

  get length(): number {
    return this.#end - this.#start;
  }

  /**
   * Appends a change of agent `agentId` at block `blockNumber` that replaced value number `previous` (0: none). Throws
   * RangeError, recording nothing, for an agent id the index cannot hold or a block number beyond 2^53.
   */
  push(blockNumber: bigint, side: JournalSide, agentId: bigint | number, previous: number): void {
    const id = Number(agentId);
    if (!Number.isSafeInteger(id) || id < 0 || id > MAX_AGENT_ID) throw new RangeError(`Agent id ${agentId} is outside the index's range`);
    if (blockNumber < 0n || blockNumber > BigInt(Number.MAX_SAFE_INTEGER))
      throw new RangeError(`Block ${blockNumber} is outside the journal's range`);
    if (this.#end === this.#blocks.length) this.#makeRoom();
    const at = this.#end;
    this.#blocks[at] = Number(blockNumber);
    this.#agents[at] = id;
    this.#sides[at] = side;
    this.#previous[at] = previous;
    this.#end = at + 1;
  }

  /** Drops the entries of blocks up to `final` (oldest first: no reorganisation reaches them any more). */
  dropThrough(final: bigint): void {
    const last = Number(final);
    while (this.#start < this.#end && (this.#blocks[this.#start] as number) <= last) this.#start++;
    if (this.#start === this.#end) this.#start = this.#end = this.#fresh = 0;
  }

  /** The newest entry when its block is after `ancestor`, removed from the journal (read it before the next push). */
  popAfter(ancestor: bigint): JournalEntry | undefined {
    if (this.#end === this.#start || (this.#blocks[this.#end - 1] as number) <= Number(ancestor)) return undefined;
    const at = --this.#end;
    if (this.#fresh > this.#end) this.#fresh = this.#end;
    return this.#entry(at);
  }

  /** Forgets every entry, and gives the arrays' memory back. */
  clear(): void {
    this.#blocks = new Float64Array(0);
    this.#agents = new Uint32Array(0);
    this.#sides = new Uint8Array(0);
    this.#previous = new Uint32Array(0);
    this.#start = this.#end = this.#fresh = 0;
  }

  /** Every entry, oldest first (read before the journal changes again). */
  entries(): IterableIterator<JournalEntry> {
    return this.#range(this.#start, this.#end);
  }

  /** The entries appended since the last call (those still held), oldest first; from now on none is fresh. */
  takeFresh(): IterableIterator<JournalEntry> {
    const from = Math.max(this.#fresh, this.#start);
    this.#fresh = this.#end;
    return this.#range(from, this.#end);
  }

  /** From now on no entry held counts as fresh. */
  forgetFresh(): void {
    this.#fresh = this.#end;
  }

  *#range(from: number, to: number): IterableIterator<JournalEntry> {
    for (let at = from; at < to; at++) yield this.#entry(at);
  }

  #entry(at: number): JournalEntry {
    return {
      blockNumber: BigInt(this.#blocks[at] as number),
      side: this.#sides[at] as JournalSide,
      agentId: this.#agents[at] as number,
      previous: this.#previous[at] as number,
    };
  }

  /**
   * Moves the entries to the arrays' start: in arrays twice the size when they are at least half full, half the size
   * when they are less than an eighth full (a burst of changes, a backfill's last blocks, is not kept for good).
   */
  #makeRoom(): void {
    const count = this.#end - this.#start;
    const length = this.#blocks.length;
    const size = count * 2 >= length ? Math.max(length * 2, MIN_SIZE) : count * 8 < length ? Math.max(length / 2, MIN_SIZE) : length;
    const blocks = size === this.#blocks.length ? this.#blocks : new Float64Array(size);
    const agents = size === this.#agents.length ? this.#agents : new Uint32Array(size);
    const sides = size === this.#sides.length ? this.#sides : new Uint8Array(size);
    const previous = size === this.#previous.length ? this.#previous : new Uint32Array(size);
    blocks.set(this.#blocks.subarray(this.#start, this.#end));
    agents.set(this.#agents.subarray(this.#start, this.#end));
    sides.set(this.#sides.subarray(this.#start, this.#end));
    previous.set(this.#previous.subarray(this.#start, this.#end));
    this.#fresh = Math.max(this.#fresh - this.#start, 0);
    this.#blocks = blocks;
    this.#agents = agents;
    this.#sides = sides;
    this.#previous = previous;
    this.#end = count;
    this.#start = 0;
  }
}
