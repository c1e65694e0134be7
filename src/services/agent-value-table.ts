// One value per agent (its owner, guardian or nullifier) and the agents of each value, for every agent of a registry,
// kept in typed arrays rather than in JavaScript objects.
//
// Why not a Map and an array: with 100,000 agents those held about 22 MB of strings, bigints and hash-table backing
// in V8's heap, and V8 sizes its old generation from what is live there (about twice as much), so the whole index
// counted two or three times in the process's peak. Typed arrays' memory is outside that heap: the table costs about
// 60 bytes an agent, once, and nothing for the collector to trace.
//
// - Agent ids are small dense integers (the registry counts them up from 1): `#byAgent[id]` holds the agent's value
//   number plus one (0: none), and `#next[id]` the next agent of the same value plus one (0: the list's end), so a
//   value's agents are a list threaded through the agents.
// - Values are fixed-width byte strings (20 bytes an address, 32 a nullifier) in one buffer, numbered in the order
//   they were first seen, found by an open-addressing hash table of their numbers. A value no agent holds any more
//   keeps its number (it is usually held again, and a registry's values are bounded by its agents) until clear().
// - The hash is seeded at random per table: an address is chosen by whoever registers it, and a caller that could
//   aim at one slot of the table would make every look-up walk a long run.
import { randomBytes } from 'node:crypto';

/** How a value is written as fixed-width hex (no 0x, any case) and read back. */
export interface ValueCodec<V> {
  /** Bytes a value takes. */
  width: number;
  toHex(value: V): string;
  fromHex(hex: string): V;
}

/** Addresses, read back in lower case. */
export const addressCodec: ValueCodec<`0x${string}`> = {
  width: 20,
  toHex: (address) => address.slice(2),
  fromHex: (hex) => `0x${hex}`,
};

/** Unsigned 256-bit numbers (nullifiers). */
export const uint256Codec: ValueCodec<bigint> = {
  width: 32,
  toHex: (value) => {
    if (value < 0n || value >> 256n !== 0n) throw new RangeError(`${value} is not an unsigned 256-bit number`);
    return value.toString(16).padStart(64, '0');
  },
  fromHex: (hex) => BigInt(`0x${hex}`),
};

/** Agent ids the table holds: below this (its lists store id + 1 in 32 bits). */
const MAX_AGENT_ID = 0xffff_fffe;

const nibble = (code: number): number => (code <= 57 ? code - 48 : (code | 32) - 87);

/** murmur3's 32-bit finaliser: spreads every input bit over the slot index's low bits. */
function mix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85eb_ca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2_ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A Uint32Array at least `length` long, holding `array`'s elements (grown by doubling). */
function grown(array: Uint32Array<ArrayBuffer>, length: number): Uint32Array<ArrayBuffer> {
  if (length <= array.length) return array;
  let size = Math.max(array.length, 16);
  while (size < length) size *= 2;
  const larger = new Uint32Array(size);
  larger.set(array);
  return larger;
}

export class AgentValueTable<V> {
  readonly #codec: ValueCodec<V>;
  readonly #seed = randomBytes(4).readUInt32LE(0);
  #byAgent = new Uint32Array(0);
  #next = new Uint32Array(0);
  /** One past the highest agent id ever set (agentIds() stops there). */
  #agentEnd = 0;
  #values: Buffer = Buffer.alloc(0);
  /** Per value number: its hash, and the first agent of its list plus one. */
  #hashes = new Uint32Array(0);
  #heads = new Uint32Array(0);
  #valueCount = 0;
  /** Open addressing, linear probing, at most half full: value number plus one per slot (0: empty). */
  #slots = new Uint32Array(16);

  constructor(codec: ValueCodec<V>) {
    this.#codec = codec;
  }

  /** The agent's value, or undefined. */
  get(agentId: bigint): V | undefined {
    return this.at(Number(agentId));
  }

  /** get() by a number id. */
  at(agentId: number): V | undefined {
    const held = this.#byAgent[agentId];
    return held ? this.#value(held - 1) : undefined;
  }

  /** The agent's value now; undefined removes it. */
  set(agentId: bigint, value: V | undefined): void {
    this.remove(agentId);
    if (value === undefined) return;
    const id = Number(agentId);
    if (!Number.isSafeInteger(id) || id < 0 || id > MAX_AGENT_ID) throw new RangeError(`Agent id ${agentId} is outside the index's range`);
    const number = this.#intern(this.#codec.toHex(value));
    if (id >= this.#byAgent.length) {
      this.#byAgent = grown(this.#byAgent, id + 1);
      this.#next = grown(this.#next, id + 1);
    }
    this.#byAgent[id] = number + 1;
    this.#next[id] = this.#heads[number] as number;
    this.#heads[number] = id + 1;
    if (id >= this.#agentEnd) this.#agentEnd = id + 1;
  }

  remove(agentId: bigint): void {
    const id = Number(agentId);
    const held = this.#byAgent[id];
    if (!held) return;
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
    this.#hashes = new Uint32Array(0);
    this.#heads = new Uint32Array(0);
    this.#valueCount = 0;
    this.#slots = new Uint32Array(16);
  }

  /** The ids of the agents that have a value, ascending. */
  *agentIds(): IterableIterator<number> {
    for (let id = 0; id < this.#agentEnd; id++) if (this.#byAgent[id]) yield id;
  }

  /** The agents holding `value`, in no particular order. */
  agentsOf(value: V): number[] {
    const agents: number[] = [];
    let hex: string;
    try {
      hex = this.#codec.toHex(value);
    } catch {
      return agents; // a value no agent can hold (a number beyond 256 bits)
    }
    const number = this.#find(hex);
    if (number === undefined) return agents;
    for (let link = this.#heads[number] as number; link; link = this.#next[link - 1] as number) agents.push(link - 1);
    return agents;
  }

  #value(number: number): V {
    const { width } = this.#codec;
    return this.#codec.fromHex(this.#values.toString('hex', number * width, (number + 1) * width));
  }

  #hash(hex: string): number {
    let h = this.#seed;
    for (let i = 0; i < hex.length; i++) h = Math.imul(h ^ (hex.charCodeAt(i) | 32), 0x0100_0193);
    return mix(h);
  }

  /** Whether value `number`'s bytes are `hex`'s. */
  #equals(number: number, hex: string): boolean {
    const { width } = this.#codec;
    if (hex.length !== width * 2) return false;
    const offset = number * width;
    for (let i = 0; i < width; i++) {
      if (this.#values[offset + i] !== ((nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1)))) return false;
    }
    return true;
  }

  /** The value's number, or undefined when no agent ever held it. */
  #find(hex: string): number | undefined {
    const hash = this.#hash(hex);
    const mask = this.#slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.#slots[slot] as number;
      if (entry === 0) return undefined;
      if (this.#hashes[entry - 1] === hash && this.#equals(entry - 1, hex)) return entry - 1;
    }
  }

  /** The value's number, numbering it if it is new. */
  #intern(hex: string): number {
    const { width } = this.#codec;
    if (hex.length !== width * 2) throw new RangeError(`${hex} is not ${width} bytes of hex`);
    const hash = this.#hash(hex);
    const mask = this.#slots.length - 1;
    let slot = hash & mask;
    for (let entry = this.#slots[slot] as number; entry !== 0; entry = this.#slots[slot] as number) {
      if (this.#hashes[entry - 1] === hash && this.#equals(entry - 1, hex)) return entry - 1;
      slot = (slot + 1) & mask;
    }
    const number = this.#valueCount++;
    if (this.#values.length < this.#valueCount * width) {
      const values = Buffer.alloc(Math.max(this.#values.length * 2, 16 * width));
      this.#values.copy(values);
      this.#values = values;
    }
    // Buffer's hex decoding stops at the first character that is not hex
    if (this.#values.write(hex, number * width, width, 'hex') !== width) {
      this.#valueCount--;
      throw new RangeError(`${hex} is not ${width} bytes of hex`);
    }
    this.#hashes = grown(this.#hashes, this.#valueCount);
    this.#heads = grown(this.#heads, this.#valueCount);
    this.#hashes[number] = hash;
    this.#heads[number] = 0;
    if (this.#valueCount * 2 > this.#slots.length) {
      this.#rehash(this.#slots.length * 2);
      return number;
    }
    this.#slots[slot] = number + 1;
    return number;
  }

  /** Places every value again in a table of `size` slots. */
  #rehash(size: number): void {
    const slots = new Uint32Array(size);
    const mask = size - 1;
    for (let number = 0; number < this.#valueCount; number++) {
      let slot = (this.#hashes[number] as number) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = number + 1;
    }
    this.#slots = slots;
  }
}
