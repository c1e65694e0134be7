// The registry index's table in a temporary sqlite database, against the typed-array table it replaces once a network
// is live: the same answers and the same value numbers through random changes, and a copy made from the arrays.
import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentValueTable, addressCodec, uint256Codec } from '../../src/services/agent-value-table.js';
import { DiskValueTable, inTransaction, temporaryDatabase } from '../../src/services/disk-value-table.js';
import { seededRandom } from '../support/seeded-random.js';

const address = (): Address => `0x${randomBytes(20).toString('hex')}`;
const sorted = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

const databases: ReturnType<typeof temporaryDatabase>[] = [];
const database = () => {
  const db = temporaryDatabase();
  databases.push(db);
  return db;
};
afterEach(() => {
  for (const db of databases.splice(0)) db.close();
});

/** Both tables hold the same agents, values and value numbers. */
function expectSame<V>(disk: DiskValueTable<V>, memory: AgentValueTable<V>, values: readonly V[], agentEnd: number): void {
  for (let agentId = 0; agentId < agentEnd; agentId++) {
    expect(disk.get(BigInt(agentId))).toBe(memory.get(BigInt(agentId)));
    expect(disk.heldBy(agentId)).toBe(memory.heldBy(agentId));
  }
  for (const value of values) expect(sorted(disk.agentsOf(value))).toEqual(sorted(memory.agentsOf(value)));
  for (let held = 1; held <= memory.valueCount; held++) expect(disk.valueOf(held)).toBe(memory.valueOf(held));
  expect(disk.valueCount).toBe(memory.valueCount);
  expect([...disk.agentIds()]).toEqual([...memory.agentIds()]);
}

describe('DiskValueTable', () => {
  it('holds and numbers what the typed-array table does, through random changes and undoes', () => {
    const next = seededRandom(31);
    const db = database();
    const disk = new DiskValueTable(db, 'owners', addressCodec);
    const memory = new AgentValueTable(addressCodec);
    const values = Array.from({ length: 200 }, address);
    for (let step = 0; step < 6_000; step++) {
      const agentId = next(1_500);
      const roll = next(8);
      if (roll === 0) {
        disk.set(BigInt(agentId), undefined);
        memory.set(BigInt(agentId), undefined);
      } else if (roll === 1 && memory.valueCount > 0) {
        // what a rewind does: an agent given back a value by its number (0: none)
        const held = next(memory.valueCount + 1);
        disk.restore(agentId, held);
        memory.restore(agentId, held);
      } else {
        const value = values[next(values.length)] as Address;
        disk.set(BigInt(agentId), value);
        memory.set(BigInt(agentId), value);
      }
    }
    expectSame(disk, memory, values, 1_500);
    // bytes as they are, for the stored buckets
    const [fromDisk, fromMemory] = [Buffer.alloc(24), Buffer.alloc(24)];
    const held = [...memory.agentIds()][0] as number;
    expect(disk.copyTo(held, fromDisk, 4)).toBe(true);
    memory.copyTo(held, fromMemory, 4);
    expect(fromDisk.equals(fromMemory)).toBe(true);
    expect(disk.copyTo(1_600, fromDisk, 0)).toBe(false);
  });

  it('refuses what the typed-array table refuses', () => {
    const disk = new DiskValueTable(database(), 'nullifiers', uint256Codec);
    disk.set(7n, 2n ** 256n - 1n);
    expect(disk.get(7n)).toBe(2n ** 256n - 1n);
    expect(() => disk.set(8n, 2n ** 256n)).toThrow(/not a value of 32 bytes/);
    expect(() => disk.set(2n ** 40n, 1n)).toThrow(/outside the index's range/);
    expect(() => disk.restore(9, 2)).toThrow(/No value numbered 2/);
    expect(() => disk.valueOf(2)).toThrow(RangeError);
    expect(disk.valueOf(0)).toBeUndefined();
    expect(disk.agentsOf(-1n)).toEqual([]);
    expect(disk.get(8n)).toBeUndefined();
  });

  it('copies the arrays with their value numbers, and again what changed after a first copy', () => {
    const next = seededRandom(37);
    const memory = new AgentValueTable(uint256Codec);
    const values = Array.from({ length: 500 }, (_, i) => BigInt(`0x${randomBytes(32).toString('hex')}`) + BigInt(i));
    for (let agentId = 1; agentId <= 3_000; agentId++) memory.set(BigInt(agentId), values[next(values.length)]);
    const db = database();
    const disk = new DiskValueTable(db, 'nullifiers', uint256Codec);
    inTransaction(db, () => {
      disk.copyValues(memory, memory.valueCount);
      disk.copyAgents(memory, 0, memory.agentEnd);
    });
    expectSame(disk, memory, values, 3_001);

    memory.trackTouched();
    const fresh = 2n ** 200n;
    for (let agentId = 1; agentId <= 3_000; agentId += 7) memory.set(BigInt(agentId), next(2) ? undefined : fresh);
    memory.set(3_500n, fresh);
    const touched = memory.takeTouched();
    expect(touched.size).toBeGreaterThan(400);
    disk.copyValues(memory, memory.valueCount);
    for (const agentId of touched) disk.copyAgents(memory, agentId, agentId + 1);
    expectSame(disk, memory, [...values, fresh], 3_501);
  });
});
