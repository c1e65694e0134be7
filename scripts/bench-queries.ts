// npm run bench:queries: the public queries of the started service, as `npm start` runs it (the build in dist/, by
// `node dist/main.js`, with its embedded chains, a DATA_DIR of its own and its request log at info, written to a
// file), against references answering the same bytes: node:http alone and bare express, each in a process of its
// own (scripts/bench-references.ts).
//
// The agent is the service's own demo agent, registered on the embedded test chain at first start. Each target's
// answer is captured from the service once, and the references serve exactly those bytes (status, header lines,
// body; Date and the connection's headers are each server's own):
// - cached verify and info, answered by the response cache in front of express: against node:http (goal >= 50%);
// - a trivial route that goes through express (GET /docs, a constant page nothing caches): against bare express
//   (goal >= 85%);
// - the A2A verify intent (POST /api/a2a, message/send): against bare express reading and parsing the same body and
//   sending the same answer (goal >= 40%);
// - p99 latency at CONNECTIONS connections (goal <= 3 ms), and the service's RSS after 1M requests of its REST
//   targets (verify, info, the card, reputation, /docs).
//
// Load: autocannon in a worker thread, loopback, CONNECTIONS connections; every target DURATION seconds split into
// ROUNDS rounds that interleave the targets (background load on the machine hits all alike; ratios are taken within a
// round, their median reported), after a 2-second warm-up each. Server CPU per request is each process's CPU time over
// its measured runs (what it uses idle taken off). The machine's other work shows in the load average printed.
// Environment: DURATION (default 10), ROUNDS (default 2), CONNECTIONS (default 10), REQUESTS (default 1000000: the
// RSS run; 0 skips it), KEEP_DATA (set: the temporary DATA_DIR and the service's log are left in place).
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { privateKeyToAccount } from 'viem/accounts';
import type { CapturedAnswer } from './bench-references.js';
import { queryRequests, CHAIN_ID as TESTNET } from './query-requests.js';
import { capture, type Served, startReference, stopper } from './reference-process.js';
import { startArguments } from './start-command.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const REQUESTS = Number(process.env['REQUESTS'] ?? 1_000_000);
const WARMUP = 2;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The kernel's clock ticks per second (/proc/<pid>/stat counts CPU time in them). */
const CLOCK_TICKS = 100;

/** The processes this run started, stopped at its end. */
const started: Served[] = [];

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/** User and system CPU time of a process, from /proc (µs, at clock-tick resolution). */
function procCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:')) as string;
  return Number(line.split(/\s+/)[1]) / 1024;
};

/** The service as `npm start` runs it, on a DATA_DIR of its own; resolves once it answers. */
async function startService(dataDir: string): Promise<Served & { pid: number }> {
  const port = await freePort();
  const log = openSync(join(dataDir, 'service.log'), 'a');
  const child = spawn(process.execPath, startArguments(), {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // one load generator is one client: its messages are counted as any client's are, but never refused
      AGENT_MESSAGES_PER_MINUTE: '1000000000',
    },
    stdio: ['ignore', log, log],
  });
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the service exited (${code}); see ${dataDir}/service.log`))),
  );
  started.push({ base, cpu: async () => 0, stop: stopper(child) });
  const deadline = Date.now() + 180_000;
  for (;;) {
    const up = await Promise.race([
      fetch(`${base}/.well-known/self-agent-id.json`).then(
        (res) => res.ok,
        () => false,
      ),
      exited,
    ]);
    if (up) break;
    if (Date.now() > deadline) throw new Error('the service did not answer within 180 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const pid = child.pid as number;
  return { base, pid, cpu: async () => procCpu(pid), stop: async () => {} };
}

/** The demo agent's id: the agent of the address its key (in DATA_DIR) stands for, once the owner index has it. */
async function demoAgentId(base: string, dataDir: string): Promise<number> {
  const { privateKey } = JSON.parse(readFileSync(join(dataDir, 'demo-agent-testnet.json'), 'utf8')) as { privateKey: `0x${string}` };
  const address = privateKeyToAccount(privateKey).address;
  for (let attempt = 0; attempt < 240; attempt++) {
    const res = await fetch(`${base}/api/agent/agents/${TESTNET}/${address}`);
    if (res.ok) {
      const { agents } = (await res.json()) as { agents: number[] };
      if (agents.length > 0) return agents[0] as number;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the demo agent ${address} has no agent on the test chain`);
}

interface Target {
  name: string;
  server: Served;
  path: string;
  /** A POST with this JSON body; default GET. */
  body?: string;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  cpuPerRequest: number;
  /** Requests/s of each round. */
  rounds: number[];
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const load = (target: Target, options: Partial<autocannon.Options>): autocannon.Options => ({
  url: `${target.server.base}${target.path}`,
  connections: CONNECTIONS,
  workers: 1,
  ...(target.body ? { method: 'POST', body: target.body, headers: { 'content-type': 'application/json' } } : {}),
  ...options,
});

/** Every target in turn, ROUNDS times, after a warm-up each, with each server's CPU time over its runs. */
async function measure(targets: Target[]): Promise<Map<Target, Figures>> {
  for (const target of targets) await autocannon(load(target, { duration: WARMUP }));
  const servers = [...new Set(targets.map((t) => t.server))];
  const idleSeconds = 3;
  const idleStart = await Promise.all(servers.map((s) => s.cpu()));
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const idleRate = new Map(await Promise.all(servers.map(async (s, i) => [s, ((await s.cpu()) - (idleStart[i] as number)) / idleSeconds] as const)));
  const runs = new Map<Target, autocannon.Result[]>(targets.map((t) => [t, []]));
  const cpu = new Map<Target, number>(targets.map((t) => [t, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      const before = await target.server.cpu();
      const result = await autocannon(load(target, { duration: DURATION / ROUNDS }));
      runs.get(target)?.push(result);
      cpu.set(target, (cpu.get(target) as number) + (await target.server.cpu()) - before - (idleRate.get(target.server) as number) * result.duration);
    }
  }
  return new Map(
    targets.map((target) => {
      const results = runs.get(target) as autocannon.Result[];
      const total = results.reduce((sum, r) => sum + r.requests.total, 0);
      return [
        target,
        {
          rps: total / results.reduce((sum, r) => sum + r.duration, 0),
          p50: median(results.map((r) => r.latency.p50)),
          p99: median(results.map((r) => r.latency.p99)),
          non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
          errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
          cpuPerRequest: (cpu.get(target) as number) / total,
          rounds: results.map((r) => r.requests.average),
        },
      ];
    }),
  );
}

const pct = (ratio: number): string => `${Math.round(ratio * 100)}%`;

const dataDir = mkdtempSync(join(tmpdir(), 'bench-queries-'));
try {
  const service = await startService(dataDir);
  const agentId = await demoAgentId(service.base, dataDir);
  const requests = queryRequests(agentId);
  const paths = { verify: requests.verify, info: requests.info, trivial: '/docs' };
  const { body } = requests.a2aVerify;
  // the second request of each cached read is the response cache's hit: its bytes are what the references send
  const answers: CapturedAnswer[] = [];
  for (const path of Object.values(paths)) {
    await capture(service.base, 'GET', path);
    answers.push(await capture(service.base, 'GET', path));
  }
  answers.push(await capture(service.base, 'POST', '/api/a2a', body));
  const [node, bare] = await Promise.all([startReference('node', answers), startReference('express', answers)]);
  started.push(node, bare);
  console.log(
    `demo agent ${agentId} on the embedded test chain; ${CONNECTIONS} connections, loopback; per target ${DURATION} s in ${ROUNDS} ` +
      `interleaved rounds after a ${WARMUP} s warm-up; ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)}`,
  );

  const t = {
    nodeVerify: { name: 'verify, node:http', server: node, path: paths.verify },
    verify: { name: 'verify, cached (service)', server: service, path: paths.verify },
    nodeInfo: { name: 'info, node:http', server: node, path: paths.info },
    info: { name: 'info, cached (service)', server: service, path: paths.info },
    bareVerify: { name: 'verify bytes, bare express', server: bare, path: paths.verify },
    bareTrivial: { name: 'GET /docs, bare express', server: bare, path: paths.trivial },
    trivial: { name: 'GET /docs through express (service)', server: service, path: paths.trivial },
    bareA2a: { name: 'A2A verify bytes, bare express', server: bare, path: '/api/a2a', body },
    a2a: { name: 'A2A verify intent (service)', server: service, path: '/api/a2a', body },
  } satisfies Record<string, Target>;
  const figures = await measure(Object.values(t));
  const of = (target: Target) => figures.get(target) as Figures;
  /** Median over the rounds of a target's requests/s over its reference's in the same round. */
  const ratio = (target: Target, reference: Target): number => median(of(target).rounds.map((rps, i) => rps / (of(reference).rounds[i] as number)));
  console.table(
    Object.values(t).map((target) => ({
      target: target.name,
      'requests/s': Math.round(of(target).rps),
      'p50 ms': of(target).p50,
      'p99 ms': of(target).p99,
      'server CPU µs/request': Math.round(of(target).cpuPerRequest),
      'non-2xx': of(target).non2xx,
      errors: of(target).errors,
    })),
  );

  let rss = '';
  if (REQUESTS > 0) {
    const before = rssMb(service.pid);
    const rotation = [paths.verify, paths.info, `/api/cards/${TESTNET}/${agentId}`, `/api/reputation/${TESTNET}/${agentId}`, paths.trivial];
    const began = performance.now();
    const result = await autocannon({
      url: service.base,
      connections: CONNECTIONS,
      workers: 1,
      amount: REQUESTS,
      requests: rotation.map((path) => ({ method: 'GET', path })),
    });
    const seconds = (performance.now() - began) / 1000;
    rss =
      `RSS of the service: ${before.toFixed(0)} MB before, ${rssMb(service.pid).toFixed(0)} MB after ${result.requests.total} requests ` +
      `(${rotation.length} REST targets in turn, ${Math.round(result.requests.total / seconds)} requests/s, ${result.non2xx} non-2xx, ` +
      `${result.errors + result.timeouts} errors)`;
  }

  /** A target's server CPU per request against its reference's: the share of the reference's throughput one core would give. */
  const cpuRatio = (target: Target, reference: Target): number => of(reference).cpuPerRequest / of(target).cpuPerRequest;
  const both = (target: Target, reference: Target): string =>
    `${pct(ratio(target, reference))} in requests/s, ${pct(cpuRatio(target, reference))} by server CPU per request`;
  console.log(
    [
      'goals, as a share of the reference: requests/s in the same rounds (moved by whatever else the machine runs), and',
      'server CPU per request (what one core would give):',
      `  cached verify >= 50% of node:http: ${both(t.verify, t.nodeVerify)} (${pct(ratio(t.verify, t.bareVerify))} of bare express)`,
      `  cached info >= 50% of node:http: ${both(t.info, t.nodeInfo)}`,
      `  trivial route through express >= 85% of bare express: ${both(t.trivial, t.bareTrivial)}`,
      `  A2A verify >= 40% of bare express answering the same POST: ${both(t.a2a, t.bareA2a)}; ` +
        `${pct(ratio(t.a2a, t.bareVerify))} of bare express's GET of verify's bytes`,
      `  p99 <= 3 ms at ${CONNECTIONS} connections: verify ${of(t.verify).p99} ms, info ${of(t.info).p99} ms, /docs ${of(t.trivial).p99} ms, ` +
        `A2A ${of(t.a2a).p99} ms (node:http's verify ${of(t.nodeVerify).p99} ms, bare express's ${of(t.bareVerify).p99} ms)`,
      ...(rss ? [rss] : []),
    ].join('\n'),
  );
} finally {
  await Promise.all(started.map((server) => server.stop()));
  if (process.env['KEEP_DATA']) console.log(`DATA_DIR and the service's log: ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
}
