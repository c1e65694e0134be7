// npm run bench:scale: what a second instance on the same Redis buys. The real service (`node dist/main.js`) on a
// redis-server of this run: instance A with its embedded chains, instance B attached to A's chains through RPC URLs
// and the addresses A wrote to its DATA_DIR, both on REDIS_URL with the same SESSION_SECRET.
//
// Two reads, each under the same total load (CONNECTIONS connections, autocannon in worker threads):
// - verify: GET /api/agent/verify/{chainId}/{agentId} of a registered agent, the cache warm (no RPC per request);
// - status: GET /api/agent/register/status?token= of a session waiting for the human, what clients poll (a store
//   read and one registry call per request);
// first all connections on A alone ("one"), on B alone, then half on A and half on B at once ("two"). Rounds interleave the
// modes so that background load hits both alike. Also the CPU seconds each process used during each run
// (/proc/<pid>/stat), to show where a 2-core machine spends them.
// Environment: DURATION (seconds per run, default 10), ROUNDS (default 2), CONNECTIONS (default 20), LOG_LEVEL
// (default info: the instances log every request, as in production, to /dev/null).
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { startRedisServer } from '../test/support/redis-server.js';
import { freePort, serviceCommand, tsxBin } from '../test/support/service-process.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 20);
const LOG_LEVEL = process.env['LOG_LEVEL'] ?? 'info';
const WARMUP = 2;
const TESTNET_CHAIN_ID = 11142220;
const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const TICKS_PER_SECOND = 100;

interface Instance {
  base: string;
  child: ChildProcess;
  exited: Promise<unknown>;
}

async function startInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(serviceCommand[0], serviceCommand[1], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 900; i++) {
    if (child.exitCode !== null) break;
    if ((await fetch(`${base}/api/health`).catch(() => undefined))?.status === 200) return { base, child, exited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the instance on ${base} did not become healthy`);
}

/** The environment attaching an instance to the chains in `dataDir` (what instance A wrote there). */
function attachedTo(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const network of ['mainnet', 'testnet']) {
    const dir = join(dataDir, 'chains', network);
    const prefix = network.toUpperCase();
    const { contracts, registryDeployBlock } = JSON.parse(readFileSync(join(dir, 'deployment.json'), 'utf8')) as {
      contracts: Record<string, string | null>;
      registryDeployBlock: string;
    };
    env[`${prefix}_RPC_URL`] = readFileSync(join(dir, 'rpc-url'), 'utf8').trim();
    env[`${prefix}_REGISTRY_DEPLOY_BLOCK`] = registryDeployBlock;
    const names: Record<string, string> = {
      registry: 'REGISTRY',
      proofProvider: 'PROOF_PROVIDER',
      hub: 'HUB',
      demoVerifier: 'DEMO_VERIFIER',
      demoVerifierEd25519: 'DEMO_VERIFIER_ED25519',
      multicall: 'MULTICALL',
    };
    for (const [field, name] of Object.entries(names)) if (contracts[field]) env[`${prefix}_${name}_ADDRESS`] = contracts[field] as string;
  }
  return env;
}

async function json(url: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: body ? 'POST' : 'GET',
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const answer = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** user + system CPU seconds of a process so far (0 once it is gone). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The pids of a process's children (anvil under instance A). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

interface Figures {
  rps: number;
  /** Of the split load: the worse of the two instances' p99. */
  p99: number;
  non2xx: number;
  errors: number;
  cpu: Record<string, number>;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const loadAtStart = loadavg();
const redis = await startRedisServer();
const dirs = [mkdtempSync(join(tmpdir(), 'bench-scale-a-')), mkdtempSync(join(tmpdir(), 'bench-scale-b-'))] as const;
const instances: Instance[] = [];
try {
  // what `npm start` would do first: dist/ built from the current sources
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
  const shared = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'bench-scale:', SESSION_SECRET: randomBytes(32).toString('hex') };
  const a = await startInstance({ ...shared, DATA_DIR: dirs[0] });
  instances.push(a);
  const b = await startInstance({ ...shared, DATA_DIR: dirs[1], ...attachedTo(dirs[0]) });
  instances.push(b);

  // ---- a registered agent (the identity-app CLI on A's testnet) and a session still waiting for its human
  const registered = await json(`${a.base}/api/agent/register`, { mode: 'wallet-free', network: 'testnet' });
  await run(tsxBin, ['src/identity-app/cli.ts', 'approve', String(registered['deepLink']), '--data-dir', dirs[0]], { cwd: ROOT });
  let agentId = 0;
  for (let i = 0; i < 100 && !agentId; i++) {
    const status = await json(`${a.base}/api/agent/register/status?token=${encodeURIComponent(String(registered['sessionToken']))}`);
    agentId = Number(status['agentId'] ?? 0);
    if (!agentId) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!agentId) throw new Error('the agent did not register');
  const waiting = await json(`${a.base}/api/agent/register`, { mode: 'wallet-free', network: 'testnet' });
  const paths = {
    verify: `/api/agent/verify/${TESTNET_CHAIN_ID}/${agentId}`,
    status: `/api/agent/register/status?token=${encodeURIComponent(String(waiting['sessionToken']))}`,
  };

  const processes: Record<string, number[]> = {
    'instance A': [a.child.pid as number],
    'instance B': [b.child.pid as number],
    anvil: childrenOf(a.child.pid as number),
    redis: [redis.pid],
  };
  const cpuNow = () =>
    Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)]));

  /** One run: `connections` split over `bases`, at once; requests/s summed, the worse p99, CPU per process. */
  const load = async (path: string, bases: string[], duration: number): Promise<Figures> => {
    const before = cpuNow();
    const generatorBefore = process.cpuUsage();
    const results = await Promise.all(
      bases.map((base) => autocannon({ url: `${base}${path}`, connections: CONNECTIONS / bases.length, workers: 1, duration })),
    );
    const after = cpuNow();
    const generator = process.cpuUsage(generatorBefore);
    const cpu: Record<string, number> = {};
    for (const name of Object.keys(processes)) cpu[name] = ((after[name] as number) - (before[name] as number)) / duration;
    cpu['load generator'] = (generator.user + generator.system) / 1e6 / duration;
    return {
      rps: results.reduce((sum, r) => sum + r.requests.total / r.duration, 0),
      p99: Math.max(...results.map((r) => r.latency.p99)),
      non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
      errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
      cpu,
    };
  };

  // "B alone": what the instance attached through RPC costs per request, next to A with its embedded chains
  const modes = { one: [a.base], 'B alone': [b.base], two: [a.base, b.base] } as const;
  for (const path of Object.values(paths)) for (const bases of Object.values(modes)) await load(path, [...bases], WARMUP);
  const runs: Record<string, Figures[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [read, path] of Object.entries(paths)) {
      for (const [mode, bases] of Object.entries(modes)) {
        const figures = await load(path, [...bases], DURATION / ROUNDS);
        runs[`${read}/${mode}`] = [...(runs[`${read}/${mode}`] ?? []), figures];
      }
    }
  }

  console.log(
    `\nbench:scale: ${CONNECTIONS} connections in all, ${DURATION} s per read and mode in ${ROUNDS} rounds; ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}\n`,
  );
  console.log('read    instances   req/s   p99 ms  non-2xx  errors   CPU cores used: A, B, anvil, redis, load generator = sum');
  for (const [key, figures] of Object.entries(runs)) {
    const [read, mode] = key.split('/') as [string, string];
    const mean = (of: (f: Figures) => number) => figures.reduce((sum, f) => sum + of(f), 0) / figures.length;
    const cores = Object.keys(figures[0]?.cpu ?? {}).map((name) => mean((f) => f.cpu[name] as number));
    const columns = [
      read.padEnd(8),
      mode.padEnd(10),
      mean((f) => f.rps)
        .toFixed(0)
        .padStart(7),
      median(figures.map((f) => f.p99))
        .toFixed(0)
        .padStart(8),
      String(mean((f) => f.non2xx) * figures.length).padStart(8),
      String(mean((f) => f.errors) * figures.length).padStart(7),
      `   ${cores.map((c) => c.toFixed(2)).join(', ')} = ${cores.reduce((sum, c) => sum + c, 0).toFixed(2)}`,
    ];
    console.log(columns.join(''));
  }
  for (const read of Object.keys(paths)) {
    const rps = (mode: string) => (runs[`${read}/${mode}`] as Figures[]).reduce((sum, f) => sum + f.rps, 0) / ROUNDS;
    console.log(`${read}: two instances / one = ${(rps('two') / rps('one')).toFixed(2)}x req/s`);
  }
  const loadAverage = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(`load average at the end: ${loadAverage} (whatever else ran on the machine took cores from this run)`);
  console.log(
    `\nOn ${cpus().length} cores the load generator, both Node processes, anvil and Redis share the same CPUs: a second instance` +
      ' adds an event loop but no core, so the ratio shows what the machine lets it add (once the sum of the CPU columns' +
      ' reaches what the machine has free, requests/s stops growing), not what a second machine would. Splitting the load' +
      ' also costs CPU per request: each process keeps its own timers, log followers and GC, and status batches fewer' +
      ' registry calls per JSON-RPC round trip (the calls of one tick share a request) on the one anvil both instances read.',
  );
} finally {
  for (const instance of instances.reverse()) {
    instance.child.kill('SIGINT');
    await instance.exited;
  }
  await redis.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
