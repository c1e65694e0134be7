// Percentiles of benchmark samples.

/** The value at percentile `p` (0-100) of `values`, nearest rank below. */
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
