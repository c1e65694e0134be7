// The pool hands each random byte out once: slices never overlap, a refill does not change bytes handed out
// before it, and a request larger than a slice of the pool is served directly.
import { describe, expect, it } from 'vitest';
import { pooledRandomBytes } from '../../src/core/random-pool.js';

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes each time, across refills, and keeps what it handed out', () => {
    const slices = Array.from({ length: 2_000 }, () => pooledRandomBytes(12)); // ~6 refills of 4 kB
    const copies = slices.map((slice) => Buffer.from(slice).toString('hex'));
    expect(new Set(copies).size).toBe(slices.length);
    for (const slice of slices) expect(slice.length).toBe(12);
    pooledRandomBytes(16);
    // no later slice or refill wrote over an earlier one
    expect(slices.map((slice) => slice.toString('hex'))).toEqual(copies);
  });

  it('looks random: every byte value turns up, none far more often than the others', () => {
    const counts = new Array(256).fill(0) as number[];
    for (let i = 0; i < 4_096; i++) for (const byte of pooledRandomBytes(16)) counts[byte] = (counts[byte] as number) + 1;
    // 65,536 bytes: 256 expected per value; a fixed or repeating pool would fail by far
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(370);
  });

  it('serves a large request on its own', () => {
    const large = pooledRandomBytes(5_000);
    expect(large.length).toBe(5_000);
    expect(new Set(large).size).toBeGreaterThan(200);
  });
});
