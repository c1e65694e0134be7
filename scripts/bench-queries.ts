// npm run bench:queries: throughput and latency of the public queries over real HTTP on a local chain, against
// a trivial Express route in the same run as the reference; then the RPC round trips an uncached verify costs,
// read from GET /metrics.
//
// Two instances of the real app (createApp with the real services) serve the same chain and agent:
// - "cached": its query service's log followers are started, so agent reads are cached and invalidated by
//   the registry's events, as in production;
// - "uncached": its query service is never started. A cache whose event follower is not live is bypassed
//   (src/services/agent-cache.ts, point 4), so every request reads the chain. This measures the real proof
//   path of verify; a fresh agent id per request cannot be had with a few agents, and the no-proof path of
//   an unknown id would measure a cheaper answer than the one that matters.
// The uncached instance has a Metrics registry of its own with nothing else talking to the chain (no
// follower polls), so its rpc_requests_total divided by its verify count is the cost of one uncached verify.
//
// A second reference, the same trivial route added to the cached app, shows what the app's middleware stack
// (request log, security headers, CORS, cache policy, metrics, body parser, routers) costs on its own.
//
// Load: autocannon in a worker thread (its own event loop), loopback only, CONNECTIONS connections, DURATION
// seconds per target split into ROUNDS rounds that interleave the targets (so background load on the
// machine hits all of them alike; ratios are taken within a round), after a 2-second warm-up each.
// Environment: DURATION (default 10), ROUNDS (default 2), CONNECTIONS (default 10), LOG_LEVEL (default info:
// the apps log every request, as in production, to /dev/null; silent shows what the request log costs).
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import express, { type Express } from 'express';
import { pino } from 'pino';
import { createApp } from '../src/http/app.js';
import { REDACTED_PATHS } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import type { AgentQueryService } from '../src/services/agent-queries.js';
import { createServices } from '../src/services/index.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { registerLinkedAgent, startLocalSystem } from './local-system.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const LOG_LEVEL = process.env['LOG_LEVEL'] ?? 'info';
const WARMUP = 2;
/** Sequential uncached verifies for the round-trip count (no concurrency, so no JSON-RPC batching across requests). */
const SEQUENTIAL = 50;
const CHAIN_ID = 11142220;
const REFERENCE_BODY = { ok: true, service: 'reference' };

const listen = async (app: Express): Promise<{ server: Server; base: string }> => {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

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
  /** Called around each measured run (e.g. to read /metrics). */
  around?: { before(): Promise<void>; after(): Promise<void> };
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Median over the rounds of this target's requests/s divided by the reference's in the same round. */
  ratio: number;
  non2xx: number;
  errors: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/**
 * Every target in turn, ROUNDS times, DURATION / ROUNDS seconds each (after one warm-up each): interleaving
 * the targets spreads any background load of the machine over all of them, and the ratio to the reference
 * is taken within each round. The first target is the reference.
 */
async function measure(targets: Target[]): Promise<Figures[]> {
  for (const target of targets) {
    const check = await fetch(target.url);
    if (check.status !== 200) throw new Error(`${target.name}: GET ${target.url} answered ${check.status}: ${(await check.text()).slice(0, 200)}`);
    await autocannon({ url: target.url, connections: CONNECTIONS, workers: 1, duration: WARMUP });
  }
  const runs = targets.map(() => [] as autocannon.Result[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, target] of targets.entries()) {
      await target.around?.before();
      runs[index]!.push(await autocannon({ url: target.url, connections: CONNECTIONS, workers: 1, duration: DURATION / ROUNDS }));
      await target.around?.after();
    }
  }
  const reference = runs[0] as autocannon.Result[];
  return targets.map((target, index) => {
    const results = runs[index] as autocannon.Result[];
    const seconds = results.reduce((sum, r) => sum + r.duration, 0);
    return {
      name: target.name,
      rps: results.reduce((sum, r) => sum + r.requests.total, 0) / seconds,
      p50: median(results.map((r) => r.latency.p50)),
      p99: median(results.map((r) => r.latency.p99)),
      ratio: median(results.map((r, round) => r.requests.average / (reference[round] as autocannon.Result).requests.average)),
      non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
      errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    };
  });
}

const system = await startLocalSystem(CHAIN_ID);
const { chain } = system;
const servers: Server[] = [];
const queryServices: AgentQueryService[] = [];
try {
  // ---- chain: contracts and one registered agent
  const { agentId } = await registerLinkedAgent(system);

  // ---- the two app instances and the reference
  const logger = pino({ level: LOG_LEVEL, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination('/dev/null'));
  const instance = async (cached: boolean) => {
    const metrics = new Metrics();
    const chains = system.gateway(() => metrics.rpcRequest('testnet'));
    const store = new MemoryStore();
    const publicUrl = 'http://127.0.0.1';
    const secret = randomBytes(32);
    const services = createServices({ chains, store, sessionSecret: secret, publicUrl, deepLinkScheme: 'selfapp', appName: 'bench', metrics });
    queryServices.push(services.queries);
    if (cached) await services.queries.start();
    const app = createApp({ chains, services, logger, version: 'bench', metrics, publicUrl });
    // The same trivial route behind the app's whole middleware stack (logging, security headers, CORS,
    // metrics, body parser, routers): what the stack costs, apart from the query itself.
    app.get('/ref', (_req, res) => {
      res.json(REFERENCE_BODY);
    });
    const listening = await listen(app);
    servers.push(listening.server);
    return { ...listening, metrics };
  };
  const cached = await instance(true);
  const uncached = await instance(false);

  const reference = express();
  reference.get('/ref', (_req, res) => {
    res.json(REFERENCE_BODY);
  });
  const ref = await listen(reference);
  servers.push(ref.server);

  const verifyPath = `/api/agent/verify/${CHAIN_ID}/${agentId}`;
  const infoPath = `/api/agent/info/${CHAIN_ID}/${agentId}`;
  const probe = await fetch(`${cached.base}${verifyPath}`);
  if (probe.status === 404 && ((await probe.json()) as { error?: string }).error?.startsWith('No endpoint')) {
    throw new Error('createApp does not mount the query routes (GET /api/agent/verify/...) yet: nothing to measure');
  }

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

  console.log(
    `agent ${agentId} on a local chain ${CHAIN_ID}; ${CONNECTIONS} connections, loopback; per target ${DURATION} s ` +
      `in ${ROUNDS} interleaved rounds, after a ${WARMUP} s warm-up; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
  );
  const results = await measure([
    { name: 'reference: GET /ref, bare express', url: `${ref.base}/ref` },
    { name: 'GET /ref behind the app middleware', url: `${cached.base}/ref` },
    { name: 'verify, cached', url: `${cached.base}${verifyPath}` },
    { name: 'verify, uncached', url: `${uncached.base}${verifyPath}`, around: countUncached },
    { name: 'info, cached', url: `${cached.base}${infoPath}` },
    { name: 'info, uncached', url: `${uncached.base}${infoPath}` },
  ]);
  console.table(
    results.map((r) => ({
      target: r.name,
      'requests/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'vs reference': `${Math.round(r.ratio * 100)}%`,
      'non-2xx': r.non2xx,
      errors: r.errors,
    })),
  );

  // ---- RPC round trips per uncached verify, from the uncached instance's /metrics
  const start = await counts();
  for (let i = 0; i < SEQUENTIAL; i++) {
    const res = await fetch(`${uncached.base}${verifyPath}`);
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

  console.log(
    [
      `RPC round trips per uncached verify (GET /metrics of the uncached instance):`,
      `  one at a time: ${sequentialRpc} round trips for ${sequentialVerifies} verifies = ${(sequentialRpc / sequentialVerifies).toFixed(2)} per verify`,
      `  under load (${CONNECTIONS} connections): ${underLoad.rpc} round trips for ${underLoad.verifies} verifies = ` +
        `${(underLoad.rpc / underLoad.verifies).toFixed(2)} per verify (viem batches the JSON-RPC calls made in the same tick into one HTTP request)`,
      `cached instance: cache hits ${lookups('hit')}, misses ${lookups('miss')}`,
      `goal: cached verify at least 50% of the reference's requests/s: ${Math.round((results[2] as Figures).ratio * 100)}%`,
    ].join('\n'),
  );
} finally {
  await Promise.all(queryServices.map((q) => q.stop().catch(() => undefined)));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await chain.stop();
}
