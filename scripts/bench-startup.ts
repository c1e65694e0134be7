// npm run bench:startup: how long `npm start` takes to a healthy service, and where the time goes. Each run starts
// the real service process on a fresh DATA_DIR (first start: chains created, contracts deployed, demo agent
// registered), stops it with SIGINT as Ctrl-C does, and starts it again on the same DATA_DIR (restart: everything
// reused). The service logs its phases once it is up (the `startup` field, src/startup-timer.ts); this script adds
// what only the outside sees: `launch` (spawn until the service's Node process started: npm and the prestart build
// check, or bare Node) and `healthy` (spawn until the first 200 from GET /api/health, polled every 10 ms). A restart
// must send no transaction: each chain's block height at healthy is compared with the first start's.
// Environment: RUNS (default 5), VIA (npm: `npm start`, the default; node: `node dist/main.js`).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartupTimings } from '../src/startup-timer.js';
import { freePort } from '../test/support/service-process.js';
import { startArguments } from './start-command.js';

const RUNS = Number(process.env['RUNS'] ?? 5);
const VIA = process.env['VIA'] === 'node' ? 'node' : 'npm';
const NETWORKS = ['mainnet', 'testnet'] as const;
const ROOT = join(import.meta.dirname, '..');

const now = (): number => performance.timeOrigin + performance.now();

async function blockNumber(rpcUrl: string): Promise<number> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  return Number(((await res.json()) as { result: string }).result);
}

interface Start {
  /** Named columns, in ms. */
  columns: Record<string, number>;
  timings: StartupTimings;
  heights: Record<string, number>;
}

/** Sends SIGINT to the launcher's whole process group (as Ctrl-C in a terminal does) and waits for it to exit. */
async function interrupt(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  try {
    process.kill(-child.pid!, 'SIGINT');
  } catch {
    return;
  }
  await exited;
}

async function startOnce(dataDir: string): Promise<Start> {
  const port = await freePort();
  const [command, args] = VIA === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, startArguments()];
  const spawnedAt = now();
  // its own process group, so that SIGINT reaches npm, its shell and the service alike
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  let timings: StartupTimings | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of output.split('\n').slice(0, -1)) {
      if (!line.includes('"startup"')) continue;
      timings = (JSON.parse(line) as { startup: StartupTimings }).startup;
    }
    output = output.slice(output.lastIndexOf('\n') + 1);
  });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  try {
    let healthyAt: number | undefined;
    for (const deadline = spawnedAt + 60_000; !healthyAt && now() < deadline; ) {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
      if (res?.status === 200) healthyAt = now();
      else await new Promise((resolve) => setTimeout(resolve, 10));
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${errors}`);
    }
    if (!healthyAt) throw new Error(`not healthy within 60 s:\n${errors}`);
    // the timing line is written before the first request is served, but may still be in the pipe
    for (let i = 0; !timings && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    if (!timings) throw new Error('the service logged no startup timings');
    const heights = Object.fromEntries(
      await Promise.all(
        NETWORKS.map(async (network) => [network, await blockNumber(readFileSync(join(dataDir, 'chains', network, 'rpc-url'), 'utf8').trim())]),
      ),
    ) as Record<string, number>;
    const { phases, chains, processStartedAt } = timings;
    const columns: Record<string, number> = { launch: processStartedAt - spawnedAt, ...phases };
    for (const network of NETWORKS) {
      columns[`${network} rpc`] = chains[network]?.rpcMs ?? Number.NaN;
      columns[`${network} contracts`] = chains[network]?.contractsMs ?? Number.NaN;
    }
    columns['healthy'] = healthyAt - spawnedAt;
    return { columns, timings, heights };
  } finally {
    await interrupt(child, exited);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function table(title: string, starts: Start[]): void {
  const names = Object.keys(starts[0]!.columns);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const cell = (value: number): string => (Number.isNaN(value) ? '-' : value.toFixed(0)).padStart(7);
  console.log(`\n${title} (ms; phases in order, the two chains side by side within "chains")`);
  console.log(`${''.padEnd(width)}${starts.map((_, i) => `#${i + 1}`.padStart(7)).join('')}${'median'.padStart(8)}${'max'.padStart(7)}`);
  for (const name of names) {
    const values = starts.map((s) => s.columns[name]!);
    console.log(`${name.padEnd(width)}${values.map(cell).join('')} ${cell(median(values))}${cell(Math.max(...values))}`);
  }
}

// what npm start would build first is built now, so no run pays for a compile
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
console.log(
  `${RUNS} runs via ${VIA === 'npm' ? 'npm start' : 'node dist/main.js'}; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}`,
);

const firsts: Start[] = [];
const restarts: Start[] = [];
for (let run = 0; run < RUNS; run++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  try {
    const first = await startOnce(dataDir);
    const restart = await startOnce(dataDir);
    for (const network of NETWORKS) {
      if (restart.timings.chains[network]?.deployed) throw new Error(`the restart redeployed the contracts on ${network}`);
      if (restart.heights[network] !== first.heights[network]) {
        throw new Error(`the restart sent transactions on ${network}: block ${first.heights[network]} -> ${restart.heights[network]}`);
      }
    }
    firsts.push(first);
    restarts.push(restart);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
table('First start (fresh DATA_DIR)', firsts);
table('Restart (same DATA_DIR; no deployment, no transaction)', restarts);
const total = (starts: Start[]): string => {
  const healthy = starts.map((s) => s.columns['healthy']!);
  return `median ${median(healthy).toFixed(0)} ms, max ${Math.max(...healthy).toFixed(0)} ms`;
};
console.log(`\nspawn to healthy: first start ${total(firsts)}; restart ${total(restarts)}; load average now ${loadavg()[0]!.toFixed(2)}`);
