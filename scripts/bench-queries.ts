// npm run bench:queries: throughput and latency of the public queries over real HTTP on a local chain, against
// a trivial Express route in the same run as the reference; then the RPC round trips an uncached verify costs,
// read from GET /metrics.
//
// Instances of the real app (createApp with the real services, on the sqlite store the service keeps by default)
// serve the same chain and agent, each in a process of its own as the service runs, and so does the bare reference:
// - "cached": its query service's log followers are started, so agent reads are cached and invalidated by
//   the registry's events, as in production;
// - "uncached": its query service is never started. A cache whose event follower is not live is bypassed
//   (src/services/agent-cache.ts, point 4), so every request reads the chain. This measures the real proof
//   path of verify; a fresh agent id per request cannot be had with a few agents, and the no-proof path of
//   an unknown id would measure a cheaper answer than the one that matters.
// The uncached instance has a Metrics registry of its own with nothing else talking to the chain (no
// follower polls), so its rpc_requests_total divided by its verify count is the cost of one uncached verify.
//
// References, in the same interleaved run: the bare Express route, and the same trivial route added to the cached
// app's route table (with the agent reads' CORS and cache policies), which shows what the app's middleware stack
// costs on its own. And the A2A twin of the REST verify: POST /api/a2a message/send with the verify intent, on a
// cached instance of its own (each message leaves a durable task: the REST targets would share that sqlite file);
// its cost relative to the REST verify's is reported (goal: at most 2x) in requests/s and in server CPU time per
// request (each process's CPU time over its measured runs, less what it uses idle).
//
// `npm run bench:queries -- --stack`: instead, what each part of the middleware stack costs: the trivial route on
// the full app and on apps built without one part each (createApp's `without`), against the bare route, each app
// in a process of its own.
//
// Load: autocannon in a worker thread (its own event loop), loopback only, CONNECTIONS connections, DURATION
// seconds per target split into ROUNDS rounds that interleave the targets (so background load on the
// machine hits all of them alike; ratios are taken within a round), after a 2-second warm-up each.
// Environment: DURATION (default 10), ROUNDS (default 2), CONNECTIONS (default 10), LOG_LEVEL (default info:
// the apps log every request, as in production, to /dev/null; silent shows what the request log costs).
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { STACK_PARTS } from '../src/http/app.js';
import { queryRequests, REFERENCE_PATH, startQueryApps } from './query-apps.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const LOG_LEVEL = process.env['LOG_LEVEL'] ?? 'info';
const STACK = process.argv.includes('--stack');
const WARMUP = 2;
/** Sequential uncached verifies for the round-trip count (no concurrency, so no JSON-RPC batching across requests). */
const SEQUENTIAL = 50;

/** One sample of the exposition text (labels matched as given), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text.split('\n').find(
    (l) =>
      l.startsWith(`${name}{`) &&
      wanted.every((pair) =>
        l
          .slice(name.length + 1, l.indexOf('}'))
          .split(',')
          .includes(pair),
      ),
  );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

interface Target {
  name: string;
  url: string;
  /** A POST with this JSON body; default GET. */
  body?: string;
  /** Called around each measured run (e.g. to read /metrics). */
  around?: { before(): Promise<void>; after(): Promise<void> };
  /** The CPU time the server's process has used so far (µs), when it has a process of its own. */
  cpu?: () => Promise<number>;
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Median over the rounds of this target's requests/s divided by the reference's in the same round. */
  ratio: number;
  /** The same per round, against any other target's: ratios[i] for targets[i]. */
  ratios: number[];
  non2xx: number;
  errors: number;
  /** Server CPU time per request (µs) over the measured runs, when the server has a process of its own. */
  cpuPerRequest?: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const options = (target: Target, duration: number): autocannon.Options => ({
  url: target.url,
  connections: CONNECTIONS,
  workers: 1,
  duration,
  ...(target.body ? { method: 'POST', body: target.body, headers: { 'content-type': 'application/json' } } : {}),
});

/**
 * Every target in turn, ROUNDS times, DURATION / ROUNDS seconds each (after one warm-up each): interleaving
 * the targets spreads any background load of the machine over all of them, and the ratio to the reference
 * is taken within each round. The first target is the reference.
 */
async function measure(targets: Target[]): Promise<Figures[]> {
  for (const target of targets) {
    const check = await fetch(target.url, target.body ? { method: 'POST', body: target.body, headers: { 'content-type': 'application/json' } } : {});
    const text = await check.text();
    if (check.status !== 200 || text.includes('"error"'))
      throw new Error(`${target.name}: ${target.url} answered ${check.status}: ${text.slice(0, 300)}`);
    await autocannon(options(target, WARMUP));
  }
  // what each server process uses while idle (timers of its services), taken off its CPU time under load
  const idleSeconds = 3;
  const idleStart = await Promise.all(targets.map((target) => target.cpu?.() ?? 0));
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const idleRate = (await Promise.all(targets.map((target) => target.cpu?.() ?? 0))).map((end, i) => (end - (idleStart[i] as number)) / idleSeconds);
  const runs = targets.map(() => [] as autocannon.Result[]);
  const cpu = targets.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, target] of targets.entries()) {
      await target.around?.before();
      const cpuBefore = await target.cpu?.();
      runs[index]!.push(await autocannon(options(target, DURATION / ROUNDS)));
      const run = runs[index]!.at(-1) as autocannon.Result;
      if (target.cpu) cpu[index]! += (await target.cpu()) - (cpuBefore as number) - (idleRate[index] as number) * run.duration;
      await target.around?.after();
    }
  }
  const perRound = (index: number, other: number): number =>
    median(runs[index]!.map((r, round) => r.requests.average / runs[other]![round]!.requests.average));
  return targets.map((target, index) => {
    const results = runs[index] as autocannon.Result[];
    const seconds = results.reduce((sum, r) => sum + r.duration, 0);
    return {
      name: target.name,
      rps: results.reduce((sum, r) => sum + r.requests.total, 0) / seconds,
      p50: median(results.map((r) => r.latency.p50)),
      p99: median(results.map((r) => r.latency.p99)),
      ratio: perRound(index, 0),
      ratios: targets.map((_, other) => perRound(index, other)),
      non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
      errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
      ...(target.cpu ? { cpuPerRequest: (cpu[index] as number) / results.reduce((sum, r) => sum + r.requests.total, 0) } : {}),
    };
  });
}

const table = (results: Figures[]): void => {
  console.table(
    results.map((r) => ({
      target: r.name,
      'requests/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'vs bare': `${Math.round(r.ratio * 100)}%`,
      'server CPU µs/request': r.cpuPerRequest === undefined ? '' : Math.round(r.cpuPerRequest),
      'non-2xx': r.non2xx,
      errors: r.errors,
    })),
  );
};

const pct = (ratio: number): string => `${Math.round(ratio * 100)}%`;

const apps = await startQueryApps(LOG_LEVEL);
try {
  const { agentId } = apps;
  const requests = queryRequests(agentId);
  console.log(
    `agent ${agentId} on a local chain; ${CONNECTIONS} connections, loopback; per target ${DURATION} s ` +
      `in ${ROUNDS} interleaved rounds, after a ${WARMUP} s warm-up; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
  );

  if (STACK) {
    // ---- what each part of the middleware stack costs: the trivial route without it. Each app in a process of
    // its own, the bare one too: several express apps in one process share express's code, whose inline caches
    // then see each app's response prototype and slow down all of them.
    const target = async (name: string, options: Parameters<typeof apps.isolated>[0]): Promise<Target> => {
      const server = await apps.isolated(options);
      return { name, url: `${server.base}${REFERENCE_PATH}`, cpu: server.cpu };
    };
    const targets: Target[] = [await target('bare express', 'bare'), await target('app, full stack', { cached: false })];
    for (const part of STACK_PARTS) targets.push(await target(`app without ${part}`, { cached: false, tuning: { without: [part] } }));
    const results = await measure(targets);
    const full = results[1] as Figures;
    // CPU time per request is what a part costs; requests/s also moves with whatever else the machine runs
    console.table(
      results.map((r, index) => ({
        target: r.name,
        'requests/s': Math.round(r.rps),
        'p99 ms': r.p99,
        'vs bare': pct(r.ratio),
        'server CPU µs/request': Math.round(r.cpuPerRequest as number),
        'part costs µs/request': index < 2 ? '' : Math.round((full.cpuPerRequest as number) - (r.cpuPerRequest as number)),
        'non-2xx': r.non2xx,
        errors: r.errors,
      })),
    );
  } else {
    // each app in a process of its own, as the service runs: no app shares express's code, heap or event loop
    // with another (the bare route in the service's process would pay for its timers and GC, and the reverse)
    const bare = await apps.isolated('bare');
    const cached = await apps.isolated({ cached: true });
    // A2A on an instance of its own, cached as well: every message leaves a durable task, hundreds of MB of sqlite
    // per run, and the REST targets would pay for that file in the instance they share with it
    const a2aCached = await apps.isolated({ cached: true });
    const uncached = await apps.isolated({ cached: false });

    const metricsText = async (): Promise<string> => (await fetch(`${uncached.base}/metrics`)).text();
    const verifyRoute = { route: '/api/agent/verify/:chainId/:agentId', method: 'GET', status: '200' };
    const counts = async () => {
      const text = await metricsText();
      return { rpc: sample(text, 'rpc_requests_total', { network: 'testnet' }), verifies: sample(text, 'http_requests_total', verifyRoute) };
    };
    /** RPC round trips and verifies of the uncached instance during the measured verify runs. */
    const underLoad = { rpc: 0, verifies: 0 };
    let mark = { rpc: 0, verifies: 0 };
    const countUncached = {
      before: async () => {
        mark = await counts();
      },
      after: async () => {
        const now = await counts();
        underLoad.rpc += now.rpc - mark.rpc;
        underLoad.verifies += now.verifies - mark.verifies;
      },
    };

    const targets: Target[] = [
      { name: 'reference: GET /ref, bare express', url: `${bare.base}${REFERENCE_PATH}`, cpu: bare.cpu },
      { name: 'GET /ref behind the app middleware', url: `${cached.base}${REFERENCE_PATH}`, cpu: cached.cpu },
      { name: 'verify, cached', url: `${cached.base}${requests.verify}`, cpu: cached.cpu },
      { name: 'A2A verify intent, cached', url: `${a2aCached.base}${requests.a2aVerify.path}`, body: requests.a2aVerify.body, cpu: a2aCached.cpu },
      { name: 'info, cached', url: `${cached.base}${requests.info}`, cpu: cached.cpu },
      { name: 'verify, uncached', url: `${uncached.base}${requests.verify}`, around: countUncached, cpu: uncached.cpu },
      { name: 'info, uncached', url: `${uncached.base}${requests.info}`, cpu: uncached.cpu },
    ];
    const results = await measure(targets);
    table(results);
    const [, stack, verify, a2a, info] = results as [Figures, Figures, Figures, Figures, Figures];

    // ---- RPC round trips per uncached verify, from the uncached instance's /metrics
    const start = await counts();
    for (let i = 0; i < SEQUENTIAL; i++) {
      const res = await fetch(`${uncached.base}${requests.verify}`);
      if (res.status !== 200) throw new Error(`verify answered ${res.status}`);
      await res.arrayBuffer();
    }
    const end = await counts();
    const sequentialRpc = end.rpc - start.rpc;
    const sequentialVerifies = end.verifies - start.verifies;
    const cachedText = await (await fetch(`${cached.base}/metrics`)).text();
    const lookups = (result: string) =>
      cachedText
        .split('\n')
        .filter((l) => l.startsWith('cache_lookups_total{') && l.includes(`result="${result}"`))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    // the A2A verify's cost relative to the REST verify's: REST requests/s over A2A's, per round; and the server
    // CPU time of one over the other's
    const a2aCost = 1 / (a2a.ratios[2] as number);
    const a2aCpu = (a2a.cpuPerRequest as number) / (verify.cpuPerRequest as number);

    console.log(
      [
        `RPC round trips per uncached verify (GET /metrics of the uncached instance):`,
        `  one at a time: ${sequentialRpc} round trips for ${sequentialVerifies} verifies = ${(sequentialRpc / sequentialVerifies).toFixed(2)} per verify`,
        `  under load (${CONNECTIONS} connections): ${underLoad.rpc} round trips for ${underLoad.verifies} verifies = ` +
          `${(underLoad.rpc / underLoad.verifies).toFixed(2)} per verify (viem batches the JSON-RPC calls made in the same tick into one HTTP request)`,
        `cached instance: cache hits ${lookups('hit')}, misses ${lookups('miss')}`,
        `goals, requests/s against the bare route in the same rounds:`,
        `  trivial route behind the app middleware >= 90%: ${pct(stack.ratio)}`,
        `  cached verify >= 80%: ${pct(verify.ratio)}`,
        `  cached info >= 80%: ${pct(info.ratio)}`,
        `  A2A verify intent costs at most 2x the REST verify: ${a2aCost.toFixed(2)}x in requests/s, ${a2aCpu.toFixed(2)}x in server CPU per request`,
      ].join('\n'),
    );
  }
} finally {
  await apps.stop();
}
