// npm run bench:policy: nanoseconds per checkPolicy of a full policy (every check on, an allow and a deny list),
// for a subject that passes them all (the common case, and the longest path) and for one refused at the last check
// (a refusal builds its message). The goal is well under 5 us per check. Also the memory quota store's draw, for
// scale. Each figure is the median of ROUNDS rounds of ITERATIONS calls after a warm-up.
// Environment: ITERATIONS (default 1000000), ROUNDS (default 7).
import { pathToFileURL } from 'node:url';
import { type CompiledPolicy, compilePolicy, DEFAULT_REGISTRY_MAX_PROOF_AGE_S, type PolicySubject } from '../src/core/agent-policy.js';
import { MemoryQuotaStore } from '../src/core/human-quota.js';

const ITERATIONS = Number(process.env['ITERATIONS'] ?? 1_000_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 7);

export const FULL_POLICY = compilePolicy({
  minimumAge: 18,
  ofac: true,
  nationalities: { allow: ['GBR', 'FRA', 'DEU', 'D<<', 'NLD', 'ESP', 'ITA', 'USA', 'CAN', 'JPN'], deny: ['PRK', 'IRN'] },
  maxAgentsPerHuman: 5,
  maxProofAgeS: 180 * 86_400,
  minimumStrength: 80,
  quota: { limit: 100, windowS: 3600, trial: { limit: 10 } },
});

const nowS = Math.floor(Date.now() / 1000);
export const PASSING: PolicySubject = {
  credentials: { nationality: 'NLD', olderThan: 18, ofac: [true, true, true] },
  agentCount: 2,
  strength: 100,
  proofExpiresAt: nowS - 30 * 86_400 + DEFAULT_REGISTRY_MAX_PROOF_AGE_S,
  nullifier: 123_456_789n,
};
const REFUSED: PolicySubject = { ...PASSING, strength: 60 };

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Median ns per call of `fn` (its results are counted, so the calls cannot be optimised away). */
function measure(fn: () => boolean, iterations = ITERATIONS, rounds = ROUNDS): number {
  let kept = 0;
  for (let i = 0; i < Math.min(iterations, 100_000); i++) if (fn()) kept++;
  const perCall: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) if (fn()) kept++;
    perCall.push(Number(process.hrtime.bigint() - start) / iterations);
  }
  if (kept < 0) console.log(kept);
  return median(perCall);
}

/** ns per check of a full policy for a passing subject (what bench:signed can report beside its own figures). */
export const policyCheckNs = (policy: CompiledPolicy = FULL_POLICY, subject: PolicySubject = PASSING, iterations = ITERATIONS): number =>
  measure(() => policy.check(subject, nowS).ok, iterations);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quotas = new MemoryQuotaStore();
  const quota = FULL_POLICY.quota!;
  const humans = Array.from({ length: 1024 }, (_, i) => `default:${i}`);
  let turn = 0;
  const rows = [
    ['checkPolicy, full policy, passing subject', policyCheckNs()],
    ['checkPolicy, full policy, refused at the last check', measure(() => FULL_POLICY.check(REFUSED, nowS).ok)],
    ['MemoryQuotaStore.consume, 1024 humans', measure(() => quotas.consume(humans[turn++ & 1023] as string, quota, Date.now()).ok)],
  ] as const;
  console.log(`node ${process.version}, ${ITERATIONS} calls x ${ROUNDS} rounds, median`);
  for (const [what, ns] of rows) console.log(`${what.padEnd(52)} ${ns.toFixed(1).padStart(8)} ns`);
  const passing = rows[0][1];
  console.log(passing < 5_000 ? `goal met: ${passing.toFixed(1)} ns < 5 us` : `GOAL MISSED: ${passing.toFixed(1)} ns >= 5 us`);
}
