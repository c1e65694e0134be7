// The follower's eth_getLogs window: sized from the last window's logs so that a dense history is read in calls of
// about 2,500 logs rather than through refusals, growing at most fourfold a call and within [1, max].
import { describe, expect, it } from 'vitest';
import { nextWindow } from '../../src/chain/registry-events.js';

describe('nextWindow', () => {
  it('sizes the window to about 2,500 logs at the density the last one showed', () => {
    // 16 blocks held 16,000 logs (1,000 a block): 2 blocks hold about 2,500
    expect(nextWindow(16n, 16_000, 50_000n)).toBe(2n);
    expect(nextWindow(100n, 10_000, 50_000n)).toBe(25n);
  });

  it('grows at most fourfold a call, doubles after an empty window, and stays within the maximum', () => {
    expect(nextWindow(16n, 10, 50_000n)).toBe(64n);
    expect(nextWindow(16n, 0, 50_000n)).toBe(32n);
    expect(nextWindow(40_000n, 0, 50_000n)).toBe(50_000n);
  });

  it('never goes below one block', () => {
    expect(nextWindow(1n, 1_000_000, 50_000n)).toBe(1n);
  });
});
