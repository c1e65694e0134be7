import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/core/time-ordered-id.js';

// Canonical lowercase form, version 7 (the 13th hex digit), variant 10 (the 17th: 8, 9, a or b).
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The first 48 bits, read back as milliseconds since the epoch. */
const timestampOf = (id: string): number => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('timeOrderedId', () => {
  it('is a canonical UUID v7, also at the ends of the 48-bit range', () => {
    for (const ms of [undefined, 0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 48 - 1]) {
      for (let i = 0; i < 200; i++) expect(timeOrderedId(ms)).toMatch(UUID_V7);
    }
  });

  it('carries its millisecond in the first 48 bits, big-endian', () => {
    expect(timeOrderedId(0).slice(0, 13)).toBe('00000000-0000');
    expect(timeOrderedId(2 ** 48 - 1).slice(0, 13)).toBe('ffffffff-ffff');
    // the bytes that straddle the 32-bit split the code works around
    expect(timeOrderedId(2 ** 32).slice(0, 13)).toBe('00010000-0000');
    expect(timeOrderedId(0x0123_4567_89ab).slice(0, 13)).toBe('01234567-89ab');
    for (const ms of [0, 1, 255, 256, 2 ** 31, 2 ** 32 - 1, 2 ** 32 + 1, 1_700_000_000_123, 2 ** 48 - 1]) {
      expect(timestampOf(timeOrderedId(ms)), String(ms)).toBe(ms);
    }
    // without an argument: now
    const before = Date.now();
    const id = timeOrderedId();
    const after = Date.now();
    expect(timestampOf(id)).toBeGreaterThanOrEqual(before);
    expect(timestampOf(id)).toBeLessThanOrEqual(after);
  });

  it('ids made at increasing milliseconds sort, as strings, in time order', () => {
    // every byte of the timestamp changes somewhere along these, carries included
    const moments = [0, 1, 255, 256, 65_535, 65_536, 2 ** 24, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 5, 1_700_000_000_000, 1_700_000_000_001];
    for (let i = 0; i < 200; i++) moments.push(Math.floor(Math.random() * 2 ** 48));
    moments.push(2 ** 48 - 1);
    const inOrder = [...new Set(moments)].sort((a, b) => a - b).map((ms) => timeOrderedId(ms));
    // shuffled, then sorted as plain strings
    const shuffled = [...inOrder].sort(() => Math.random() - 0.5);
    expect(shuffled.sort()).toEqual(inOrder);
  });

  it('10,000 ids, most in the same millisecond, are all distinct', () => {
    const ids = Array.from({ length: 10_000 }, () => timeOrderedId());
    expect(new Set(ids).size).toBe(10_000);
    // the same explicit millisecond too: only the random bits tell them apart
    const same = Array.from({ length: 10_000 }, () => timeOrderedId(1_700_000_000_000));
    expect(new Set(same).size).toBe(10_000);
  });
});
