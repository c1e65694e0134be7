// npm run bench:cards: what signing the cards costs, and that a kept card costs nothing more than an unsigned answer.
// 1. Signing once (in this process, the service's real keys, Ed25519 and P-256): one per-agent card built and signed
//    as the service does it when it prepares the answer (CardSigner.signCard: the SDK's canonical form, then the JWS),
//    the canonical form alone, and the registration file's compact JWS; SIGNS times each, median and mean.
// 2. A kept card: the built service (dist/, as `npm start` runs it) behind the response cache, over a local chain
//    with one registered agent. GET of the agent's card and of its verify answer (both kept by the response cache),
//    interleaved over ROUNDS rounds of DURATION / ROUNDS seconds each; requests/s and p99, and the cache's misses
//    during the runs (a hit never reaches the service, so nothing is signed: 0 misses means 0 signatures). Bytes per
//    answer include the header block.
// Environment: SIGNS (default 2000), DURATION (default 10), ROUNDS (default 2), CONNECTIONS (default 10).
import { cpus, loadavg } from 'node:os';
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import autocannon from 'autocannon';
import { buildAgentCard, type ProofOfHumanBlock } from '../src/services/agent-card.js';
import { CardSigner } from '../src/services/card-signer.js';
import { ServiceSigningKeys } from '../src/services/signing-keys.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { queryRequests, startQueryApps } from './query-apps.js';
import { CHAIN_ID } from './query-requests.js';

const SIGNS = Number(process.env['SIGNS'] ?? 2_000);
const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const WARMUP = 2;

/** A card as an owner with some metadata gets it. */
const proofOfHuman: ProofOfHumanBlock = {
  agentId: 42,
  registry: '0x1111111111111111111111111111111111111111',
  chainId: CHAIN_ID,
  network: 'testnet',
  agentAddress: '0x2222222222222222222222222222222222222222',
  isVerified: true,
  proofProvider: '0x3333333333333333333333333333333333333333',
  providerName: 'self',
  verificationStrength: 100,
  strengthLabel: 'passport',
  proofExpiresAt: 1_900_000_000,
  credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true] },
};
const card = () =>
  buildAgentCard({
    metadata: JSON.stringify({
      name: 'Research assistant',
      description: 'Finds papers and summarises them',
      url: 'https://assistant.example/a2a',
      version: '0.4.0',
      skills: [
        { id: 'search', name: 'Search', description: 'Search papers', tags: ['research'], examples: ['find papers on zk proofs'] },
        { id: 'summarise', name: 'Summarise', description: 'Summarise a paper', tags: ['research'] },
      ],
    }),
    proofOfHuman,
    serviceA2aUrl: 'https://registry.example/api/a2a',
    networkLabel: 'Celo Sepolia',
    extensionUri: 'https://registry.example/extensions/proof-of-human/v1',
  });

/** Median and mean of `times` runs of `run`, in ms, after a tenth as many warm-up runs. */
async function timed(run: () => unknown): Promise<{ median: number; mean: number }> {
  for (let i = 0; i < SIGNS / 10; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < SIGNS; i++) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)] as number, mean: ms.reduce((sum, m) => sum + m, 0) / ms.length };
}

const rows: Record<string, string | number>[] = [];
for (const alg of ['EdDSA', 'ES256'] as const) {
  const signer = new CardSigner({
    keys: new ServiceSigningKeys({ store: new MemoryStore(), source: { kind: 'store' }, alg }),
    jwksUrl: 'https://registry.example/.well-known/jwks.json',
  });
  const registrationFile = JSON.stringify({ type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1', name: 'bench', services: [] });
  const figures = {
    'a per-agent card, built and signed (signCard)': await timed(() => signer.signCard(card())),
    'its canonical form alone (the SDK, RFC 8785)': await timed(() => canonicalizeAgentCard(card() as never)),
    'the registration file (compact JWS)': await timed(() => signer.signCompact(registrationFile, 'application/json')),
  };
  signer.stop();
  for (const [what, { median, mean }] of Object.entries(figures)) {
    rows.push({ key: alg, what, 'median ms': Number(median.toFixed(3)), 'mean ms': Number(mean.toFixed(3)) });
  }
}
console.log(`signing once: ${SIGNS} runs each, ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)}`);
console.table(rows);

const apps = await startQueryApps('info');
try {
  const instance = await apps.instance({ cached: true, built: true });
  const targets = { card: `/api/cards/${CHAIN_ID}/${apps.agentId}`, verify: queryRequests(apps.agentId).verify };
  const lookups = async () => {
    const values = (await instance.metrics.cacheLookups.get()).values.filter((v) => v.labels.cache === 'response');
    return Object.fromEntries(['hit', 'miss'].map((result) => [result, values.find((v) => v.labels.result === result)?.value ?? 0]));
  };
  const run = (path: string, duration: number) => autocannon({ url: `${instance.base}${path}`, connections: CONNECTIONS, duration });
  for (const path of Object.values(targets)) await run(path, WARMUP);
  const before = await lookups();
  const results: Record<keyof typeof targets, autocannon.Result[]> = { card: [], verify: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of Object.entries(targets)) results[name as keyof typeof targets].push(await run(path, DURATION / ROUNDS));
  }
  const after = await lookups();
  const figures = (rs: autocannon.Result[]) => ({
    'requests/s': Math.round(rs.reduce((sum, r) => sum + r.requests.total, 0) / rs.reduce((sum, r) => sum + r.duration, 0)),
    'p99 ms': Math.max(...rs.map((r) => r.latency.p99)),
    'bytes per answer': Math.round(
      rs.reduce((sum, r) => sum + r.throughput.total, 0) /
        Math.max(
          1,
          rs.reduce((sum, r) => sum + r.requests.total, 0),
        ),
    ),
    'non-2xx': rs.reduce((sum, r) => sum + r.non2xx, 0),
  });
  const card = figures(results.card);
  const verify = figures(results.verify);
  console.log(
    `\nkept answers: ${CONNECTIONS} connections, loopback, ${DURATION} s per target in ${ROUNDS} rounds; load average ${loadavg()[0]?.toFixed(2)}`,
  );
  console.table([
    { target: `GET ${targets.card} (signed card)`, ...card },
    { target: `GET ${targets.verify} (unsigned)`, ...verify },
  ]);
  console.log(
    [
      `the signed card: ${Math.round((card['requests/s'] / verify['requests/s']) * 100)}% of the verify answer's requests/s`,
      `response cache during the runs: ${(after['hit'] ?? 0) - (before['hit'] ?? 0)} hits, ${(after['miss'] ?? 0) - (before['miss'] ?? 0)} misses (a miss is the only way to the signer)`,
    ].join('\n'),
  );
} finally {
  await apps.stop();
}
