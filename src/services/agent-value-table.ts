// One value per agent (its owner, guardian or nullifier) and the agents of each value, for every agent of a registry,
// kept in typed arrays rather than in JavaScript objects.
//
// Why not a Map and an array: with 100,000 agents those held 15-22 MB of strings, bigints and hash-table backing in
// V8's heap, which V8 traces at every full collection and sizes its old generation from. Typed arrays' memory is
// outside that heap (13 MB for an owner and a nullifier each of 100,000 agents, with the arrays' room to grow), and a
// value's bytes go to and from the stored index's buckets as they are (copyTo, setBytes), with no string per agent.
//
// - Agent ids are small dense integers (the registry counts them up from 1): `#byAgent[id]` holds the agent's value
//   number plus one (0: none), and `#next[id]` the next agent of the same value plus one (0: the list's end), so a
//   value's agents are a list threaded through the agents.
// - Values are fixed-width byte strings (20 bytes an address, 32 a nullifier) in one buffer, numbered in the order
//   they were first seen, found by an open-addressing hash table of their numbers. A value no agent holds any more
//   keeps its number until clear() (an address is usually given an agent again): the values grow with the distinct
//   addresses and nullifiers the registry's logs ever named, not only with the agents held now.
// - The hash is seeded at random per table: an address is chosen by whoever registers it, and a caller that could
//   aim at one slot of the table would make every look-up walk a long run.
import { randomBytes } from 'node:crypto';

/** How a value is written into a buffer as `width` bytes and read back. */
export interface ValueCodec<V> {
  /** Bytes a value takes: a multiple of 4. */
  width: number;
  /** Writes the value's bytes at the buffer's start; false when it has no such form (not hex, out of range). */
  write(value: V, into: Buffer): boolean;
  read(from: Buffer, offset: number): V;
}

/** Addresses (any case), read back in lower case. */
export const addressCodec: ValueCodec<`0x${string}`> = {
  width: 20,
  // Buffer's hex decoding stops at the first character that is not hex
  write: (address, into) => address.length === 42 && into.write(address.slice(2), 0, 20, 'hex') === 20,
  read: (from, offset) => `0x${from.toString('hex', offset, offset + 20)}`,
};

/** Unsigned 256-bit numbers (nullifiers). */
export const uint256Codec: ValueCodec<bigint> = {
  width: 32,
  write: (value, into) => value >= 0n && value >> 256n === 0n && into.write(value.toString(16).padStart(64, '0'), 0, 32, 'hex') === 32,
  read: (from, offset) => BigInt(`0x${from.toString('hex', offset, offset + 32)}`),
};

/**
 * What the registry index reads and changes of a table, whichever holds it: these typed arrays, or the temporary
 * database a live index moves to (disk-value-table.ts). Values are numbered as heldBy() gives them (0: none), the
 * same numbers in both, so the undo journal's entries stay good across the move.
 */
export interface ValueTable<V> {
  get(agentId: bigint): V | undefined;
  heldBy(agentId: number): number;
  valueOf(held: number): V | undefined;
  restore(agentId: number, held: number): void;
  copyTo(agentId: number, target: Buffer, offset: number): boolean;
  /** Copies the values of agents [first, end) to `into`, agent first + i's at i * width, and sets held[i] for each. */
  copyRange(first: number, end: number, into: Buffer, held: Uint8Array): void;
  set(agentId: bigint, value: V | undefined): void;
  agentIds(): Iterable<number>;
  agentsOf(value: V): number[];
}

/** Agent ids the table holds: below this (its lists store id + 1 in 32 bits). */
export const MAX_AGENT_ID = 0xffff_fffe;

/** A Uint32Array at least `length` long, holding `array`'s elements (grown by doubling). */
function grown(array: Uint32Array<ArrayBuffer>, length: number): Uint32Array<ArrayBuffer> {
  if (length <= array.length) return array;
  let size = Math.max(array.length, 16);
  while (size < length) size *= 2;
  const larger = new Uint32Array(size);
  larger.set(array);
  return larger;
}

export class AgentValueTable<V> implements ValueTable<V> {
  readonly #codec: ValueCodec<V>;
  /** The value's width in 32-bit words. */
  readonly #words: number;
  readonly #seed = randomBytes(4).readUInt32LE(0);
  /** Where a value being set or looked up is written first. */
  readonly #scratch: Buffer;
  readonly #scratchWords: Uint32Array;
  #byAgent = new Uint32Array(0);
  #next = new Uint32Array(0);
  /** One past the highest agent id ever set (agentIds() stops there). */
  #agentEnd = 0;
  /** The values' bytes, value number n at n * width, and the same memory as 32-bit words. */
  #values: Buffer = Buffer.alloc(0);
  #valueWords = new Uint32Array(0);
  /** Per value number: its hash, and the first agent of its list plus one. */
  #hashes = new Uint32Array(0);
  #heads = new Uint32Array(0);
  #valueCount = 0;
  /** Open addressing, linear probing, at most half full: value number plus one per slot (0: empty). */
  #slots = new Uint32Array(16);
  /** The agents whose value changed since trackTouched(), while a copy of the table is being made. */
  #touched: Set<number> | undefined;

  constructor(codec: ValueCodec<V>) {
    this.#codec = codec;
    this.#words = codec.width / 4;
    // its own memory (Buffer.alloc never takes from the shared pool), so the word view starts aligned
    this.#scratch = Buffer.alloc(codec.width);
    this.#scratchWords = new Uint32Array(this.#scratch.buffer, this.#scratch.byteOffset, this.#words);
  }

  /** The agent's value, or undefined. */
  get(agentId: bigint): V | undefined {
    return this.at(Number(agentId));
  }

  /** get() by a number id. */
  at(agentId: number): V | undefined {
    const held = this.#byAgent[agentId];
    return held ? this.#codec.read(this.#values, (held - 1) * this.#codec.width) : undefined;
  }

  /** How many values are numbered: heldBy() gives 1 to this. */
  get valueCount(): number {
    return this.#valueCount;
  }

  /** One past the highest agent id ever given a value. */
  get agentEnd(): number {
    return this.#agentEnd;
  }

  /** The bytes of the value numbered `held` (1 or more), a view of the table's memory valid until the next change. */
  bytesOf(held: number): Buffer {
    if (!Number.isInteger(held) || held < 1 || held > this.#valueCount) throw new RangeError(`No value numbered ${held}`);
    const { width } = this.#codec;
    return this.#values.subarray((held - 1) * width, held * width);
  }

  /** From now on, notes each agent whose value changes, until takeTouched() hands them over (and stops noting). */
  trackTouched(): void {
    this.#touched = new Set();
  }

  takeTouched(): Set<number> {
    const touched = this.#touched ?? new Set<number>();
    this.#touched = undefined;
    return touched;
  }

  /**
   * The agent's value as a number: 0 for none, else one more than the value's number. A value keeps its number until
   * clear(), even once no agent holds it, so the number stands for it until then (restore(), valueOf()).
   */
  heldBy(agentId: number): number {
    return this.#byAgent[agentId] ?? 0;
  }

  /** The value numbered `held` (as heldBy() gives it), or undefined for 0. */
  valueOf(held: number): V | undefined {
    if (held === 0) return undefined;
    if (!Number.isInteger(held) || held < 0 || held > this.#valueCount) throw new RangeError(`No value numbered ${held}`);
    return this.#codec.read(this.#values, (held - 1) * this.#codec.width);
  }

  /** The number heldBy() would give `value` once an agent holds it (numbering it if it is new). */
  numberOf(value: V): number {
    if (!this.#codec.write(value, this.#scratch)) throw new RangeError(`${value} is not a value of ${this.#codec.width} bytes`);
    return this.#intern() + 1;
  }

  /** Gives the agent the value numbered `held` (as heldBy() gave it; 0: none). */
  restore(agentId: number, held: number): void {
    if (held === 0) this.remove(agentId);
    else if (!Number.isInteger(held) || held < 0 || held > this.#valueCount) throw new RangeError(`No value numbered ${held}`);
    else this.#holdNumber(agentId, held - 1);
  }

  /** Copies the agent's value's bytes to `target` at `offset`; false (nothing copied) when it has none. */
  copyTo(agentId: number, target: Buffer, offset: number): boolean {
    const held = this.#byAgent[agentId];
    if (!held) return false;
    const { width } = this.#codec;
    this.#values.copy(target, offset, (held - 1) * width, held * width);
    return true;
  }

  copyRange(first: number, end: number, into: Buffer, held: Uint8Array): void {
    for (let agentId = first; agentId < end; agentId++)
      if (this.copyTo(agentId, into, (agentId - first) * this.#codec.width)) held[agentId - first] = 1;
  }

  /** The agent's value now; undefined removes it. */
  set(agentId: bigint, value: V | undefined): void {
    if (value === undefined) {
      this.remove(agentId);
      return;
    }
    if (!this.#codec.write(value, this.#scratch)) throw new RangeError(`${value} is not a value of ${this.#codec.width} bytes`);
    this.#hold(Number(agentId));
  }

  /** set() with the value's bytes, at `offset` in `source`. */
  setBytes(agentId: number, source: Buffer, offset: number): void {
    source.copy(this.#scratch, 0, offset, offset + this.#codec.width);
    this.#hold(agentId);
  }

  remove(agentId: bigint | number): void {
    const id = Number(agentId);
    const held = this.#byAgent[id];
    if (!held) return;
    this.#touched?.add(id);
    this.#byAgent[id] = 0;
    const number = held - 1;
    // unlink the agent from its value's list
    let link = this.#heads[number] as number;
    if (link === id + 1) this.#heads[number] = this.#next[id] as number;
    else {
      while (link && this.#next[link - 1] !== id + 1) link = this.#next[link - 1] as number;
      if (link) this.#next[link - 1] = this.#next[id] as number;
    }
    this.#next[id] = 0;
  }

  clear(): void {
    this.#byAgent = new Uint32Array(0);
    this.#next = new Uint32Array(0);
    this.#agentEnd = 0;
    this.#values = Buffer.alloc(0);
    this.#valueWords = new Uint32Array(0);
    this.#hashes = new Uint32Array(0);
    this.#heads = new Uint32Array(0);
    this.#valueCount = 0;
    this.#slots = new Uint32Array(16);
  }

  /** The ids of the agents that have a value, ascending. */
  *agentIds(): IterableIterator<number> {
    for (let id = 0; id < this.#agentEnd; id++) if (this.#byAgent[id]) yield id;
  }

  /** The agents holding `value`, in no particular order (none for a value no agent can hold). */
  agentsOf(value: V): number[] {
    const agents: number[] = [];
    if (!this.#codec.write(value, this.#scratch)) return agents;
    const number = this.#find(this.#hash());
    if (number === undefined) return agents;
    for (let link = this.#heads[number] as number; link; link = this.#next[link - 1] as number) agents.push(link - 1);
    return agents;
  }

  /** Makes the scratch value the agent's. */
  #hold(id: number): void {
    this.#holdNumber(id, this.#intern());
  }

  /** Makes value `number` the agent's. */
  #holdNumber(id: number, number: number): void {
    if (!Number.isSafeInteger(id) || id < 0 || id > MAX_AGENT_ID) throw new RangeError(`Agent id ${id} is outside the index's range`);
    if (this.#byAgent[id] === number + 1) return;
    this.remove(id);
    this.#touched?.add(id);
    if (id >= this.#byAgent.length) {
      this.#byAgent = grown(this.#byAgent, id + 1);
      this.#next = grown(this.#next, id + 1);
    }
    this.#byAgent[id] = number + 1;
    this.#next[id] = this.#heads[number] as number;
    this.#heads[number] = id + 1;
    if (id >= this.#agentEnd) this.#agentEnd = id + 1;
  }

  /** murmur3 (32-bit) of the scratch value's words, under the table's seed. */
  #hash(): number {
    let h = this.#seed;
    for (let i = 0; i < this.#words; i++) {
      let k = Math.imul(this.#scratchWords[i] as number, 0xcc9e_2d51);
      k = Math.imul((k << 15) | (k >>> 17), 0x1b87_3593);
      h ^= k;
      h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe654_6b64) | 0;
    }
    h ^= this.#words * 4;
    h = Math.imul(h ^ (h >>> 16), 0x85eb_ca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2_ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  /** Whether value `number` is the scratch value. */
  #isScratch(number: number): boolean {
    const first = number * this.#words;
    for (let i = 0; i < this.#words; i++) if (this.#valueWords[first + i] !== this.#scratchWords[i]) return false;
    return true;
  }

  /** The scratch value's number, or undefined when no agent ever held it. */
  #find(hash: number): number | undefined {
    const mask = this.#slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.#slots[slot] as number;
      if (entry === 0) return undefined;
      if (this.#hashes[entry - 1] === hash && this.#isScratch(entry - 1)) return entry - 1;
    }
  }

  /** The scratch value's number, numbering it if it is new. */
  #intern(): number {
    const hash = this.#hash();
    const found = this.#find(hash);
    if (found !== undefined) return found;
    const { width } = this.#codec;
    const number = this.#valueCount++;
    if (this.#values.length < this.#valueCount * width) {
      const values = Buffer.alloc(Math.max(this.#values.length * 2, 16 * width));
      this.#values.copy(values);
      this.#values = values;
      this.#valueWords = new Uint32Array(values.buffer, values.byteOffset, values.length / 4);
    }
    this.#scratch.copy(this.#values, number * width);
    this.#hashes = grown(this.#hashes, this.#valueCount);
    this.#heads = grown(this.#heads, this.#valueCount);
    this.#hashes[number] = hash;
    this.#heads[number] = 0;
    if (this.#valueCount * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    else this.#place(this.#slots, number);
    return number;
  }

  /** Puts value `number` in the first free slot from its hash's. */
  #place(slots: Uint32Array, number: number): void {
    const mask = slots.length - 1;
    let slot = (this.#hashes[number] as number) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = number + 1;
  }

  /** Places every value again in a table of `size` slots. */
  #rehash(size: number): void {
    const slots = new Uint32Array(size);
    for (let number = 0; number < this.#valueCount; number++) this.#place(slots, number);
    this.#slots = slots;
  }
}
