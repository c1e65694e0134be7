// A hook that times out says only that it did: `step` names the part of a long setup that is still running after
// SLOW_STEP_MS, in the test's output, so a setup that hangs on a loaded machine says where.
const SLOW_STEP_MS = 15_000;

export async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  const startedAt = performance.now();
  const timer = setInterval(() => {
    console.warn(`setup step "${label}" still running after ${Math.round((performance.now() - startedAt) / 1000)} s`);
  }, SLOW_STEP_MS);
  try {
    return await run();
  } finally {
    clearInterval(timer);
  }
}
