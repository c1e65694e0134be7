// The typed-array table behind the agents-by-human index, against a plain model of what it holds (a Map per side),
// through many random changes: values shared by several agents, removals from the middle of a list, growth of every
// array and of the hash table.
import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { describe, expect, it } from 'vitest';
import { AgentValueTable, addressCodec, uint256Codec } from '../../src/services/agent-value-table.js';
import { seededRandom } from '../support/seeded-random.js';

const address = (): Address => `0x${randomBytes(20).toString('hex')}`;
const sorted = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

describe('AgentValueTable', () => {
  it('holds what a map of agents to values holds, through random changes', () => {
    const next = seededRandom(29);
    const table = new AgentValueTable(addressCodec);
    const model = new Map<number, Address>();
    // few values for many agents, so lists grow long and values come back after their last agent left
    const values = Array.from({ length: 300 }, address);
    for (let step = 0; step < 20_000; step++) {
      const agentId = next(3_000);
      if (next(4) === 0) {
        table.remove(BigInt(agentId));
        model.delete(agentId);
      } else {
        const value = values[next(values.length)] as Address;
        table.set(BigInt(agentId), value);
        model.set(agentId, value);
      }
    }
    for (let agentId = 0; agentId < 3_000; agentId++) expect(table.get(BigInt(agentId))).toBe(model.get(agentId));
    for (const value of values) {
      const expected = sorted([...model].filter(([, held]) => held === value).map(([agentId]) => agentId));
      expect(sorted(table.agentsOf(value))).toEqual(expected);
    }
    expect([...table.agentIds()]).toEqual(sorted(model.keys()));
  });

  it('finds each of 100,000 distinct values, in any case, and no other', () => {
    const table = new AgentValueTable(addressCodec);
    const values = Array.from({ length: 100_000 }, address);
    for (const [i, value] of values.entries()) table.set(BigInt(i + 1), value);
    const wrong = values.filter((value, i) => table.agentsOf(value).join() !== String(i + 1) || table.at(i + 1) !== value);
    expect(wrong).toEqual([]);
    const first = values[0] as Address;
    expect(table.agentsOf(`0x${first.slice(2).toUpperCase()}`)).toEqual([1]);
    expect(table.agentsOf(address())).toEqual([]);
    expect(table.agentsOf('0x1234')).toEqual([]);
  });

  it('moves an agent from one value to another, and forgets everything on clear()', () => {
    const [a, b] = [address(), address()];
    const table = new AgentValueTable(addressCodec);
    for (const id of [1n, 2n, 3n]) table.set(id, a);
    table.set(2n, b);
    expect(sorted(table.agentsOf(a))).toEqual([1, 3]);
    expect(table.agentsOf(b)).toEqual([2]);
    table.set(3n, undefined);
    expect(table.agentsOf(a)).toEqual([1]);
    expect(table.get(3n)).toBeUndefined();
    expect(() => table.set(4n, `0x${'zz'.repeat(20)}`)).toThrow(/not a value of 20 bytes/);
    expect(() => table.set(4n, '0x12')).toThrow(/not a value of 20 bytes/);
    expect(table.get(4n)).toBeUndefined();
    table.set(4n, b);
    expect(sorted(table.agentsOf(b))).toEqual([2, 4]);
    table.clear();
    expect(table.agentsOf(a)).toEqual([]);
    expect(table.get(1n)).toBeUndefined();
    expect([...table.agentIds()]).toEqual([]);
  });

  it('keeps 256-bit numbers whole, and has no agents for a number beyond them', () => {
    const table = new AgentValueTable(uint256Codec);
    const big = 2n ** 256n - 1n;
    table.set(7n, big);
    table.set(8n, 1n);
    expect(table.get(7n)).toBe(big);
    expect(table.get(8n)).toBe(1n);
    expect(table.agentsOf(big)).toEqual([7]);
    expect(table.agentsOf(2n ** 256n)).toEqual([]);
    expect(table.agentsOf(-1n)).toEqual([]);
    expect(() => table.set(9n, 2n ** 256n)).toThrow(RangeError);
    // bytes in and out as they are
    const bytes = Buffer.alloc(40);
    expect(table.copyTo(7, bytes, 8)).toBe(true);
    expect(table.copyTo(9, bytes, 0)).toBe(false);
    expect(bytes.subarray(8).equals(Buffer.alloc(32, 0xff))).toBe(true);
    table.setBytes(10, bytes, 8);
    expect(table.get(10n)).toBe(big);
    expect(sorted(table.agentsOf(big))).toEqual([7, 10]);
    expect(() => table.set(2n ** 40n, 1n)).toThrow(/outside the index's range/);
  });

  it('numbers each value for good (until cleared), so a number gives back a value no agent holds any more', () => {
    const table = new AgentValueTable(addressCodec);
    const [a, b] = [address(), address()];
    table.set(1n, a);
    const heldA = table.heldBy(1);
    expect(table.heldBy(2)).toBe(0);
    expect(table.valueOf(heldA)).toBe(a);
    table.set(1n, b); // no agent holds a now
    expect(table.agentsOf(a)).toEqual([]);
    expect(table.valueOf(heldA)).toBe(a);
    table.restore(1, heldA);
    expect(table.get(1n)).toBe(a);
    expect(table.agentsOf(b)).toEqual([]);
    table.restore(1, 0);
    expect(table.get(1n)).toBeUndefined();
    // a value numbered before any agent holds it (a stored journal entry's)
    const c = address();
    const heldC = table.numberOf(c);
    expect(table.agentsOf(c)).toEqual([]);
    table.restore(5, heldC);
    expect(table.agentsOf(c)).toEqual([5]);
    expect(table.numberOf(c)).toBe(heldC);
    expect(table.valueOf(0)).toBeUndefined();
    expect(() => table.valueOf(heldC + 1)).toThrow(RangeError);
    expect(() => table.restore(6, heldC + 1)).toThrow(RangeError);
    expect(() => table.restore(2 ** 33, heldC)).toThrow(/outside the index's range/);
  });
});
