// A deterministic generator for randomised tests: a failure replays the same steps from the same seed.

/** xorshift32 from `seed`: each call gives an integer in [0, below), below at most 2^32. */
export function seededRandom(seed: number): (below: number) => number {
  let state = seed >>> 0 || 1;
  return (below) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % below;
  };
}
