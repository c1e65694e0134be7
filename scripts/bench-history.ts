// npm run bench:history [-- 1000,10000,100000]: how the service starts, serves and follows a registry with a long
// history. For each N it registers N agents on a fresh local chain through the registry's real entry point
// (verifySelfProof with the mock identity app's attested proofs, as the relayer submits them), 200 registrations a
// block; ten humans (a hundred from 10,000 agents) hold ten agents each, every other agent has a human of its own, and one agent in a hundred is
// deregistered by its human's proof. Nothing is written behind the contracts' backs. Then it starts the service
// (`node dist/main.js`, as `npm start` runs it) against that chain as an external RPC and measures:
//   - spawn to healthy (GET /api/health says ok: the index is live), first start and a restart on the same DATA_DIR;
//     and a first start on a fresh DATA_DIR with the chain behind REMOTE_RTT_MS of round trip (scripts/rpc-delay.ts),
//     as a provider some way off answers;
//   - JSON-RPC calls made by then (rpc_requests_total, all methods);
//   - the process's RSS: when healthy (the backfill's garbage still in V8's heap), settled (once V8's memory reducer
//     has collected it and given back the young generation: what the process keeps while serving; see settle()) and
//     its peak (VmHWM); and how many networks' indexes have moved to their temporary databases by the settled reading
//     (registry_index_on_disk: each moves once its network is live);
//   - the first indexing: start to healthy beyond the fastest of three starts with no history (not reported when
//     shorter than a start's own variation), and registry events per second over it;
//   - verify and agents-by-human (a human with 10 agents) latency, cold (the answer first asked, the route warmed up
//     by another answer) and warm, p50 and p99, over one keep-alive connection;
//   - the floor of that measurement on this machine: node:http alone (scripts/bench-references.ts) answering the same
//     by-human bytes, asked the same way right after. Below it, what is left of a p99 is the machine's, not ours.
import { readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { loadavg } from 'node:os';
import { startLocalSystem } from './local-system.js';
import { percentile } from './percentile.js';
import { capture, startReference } from './reference-process.js';
import { metricTotal, populate, tempDataDir } from './registry-history.js';
import { delayedRpc } from './rpc-delay.js';
import { type Started, startService, stopService } from './service-process.js';

const SIZES = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const PER_BLOCK = 200;
const SAMPLES = 200;
/** An address that holds no agent (the zero address is refused): the by-human route's warm-up. */
const NO_AGENTS = '0x000000000000000000000000000000000000dEaD';
/**
 * Block states the populated chain keeps in memory: anvil holds each kept state whole, so 128 (a full node's window)
 * of a 100,000-agent registry took over 20 GB. The service reads the latest state only; 16 keeps a reorg's worth.
 */
const HISTORY_STATES_KEPT = 16;

/** One keep-alive connection, as a client of the service keeps: fetch() would add about 0.7 ms a request here. */
const connection = new Agent({ keepAlive: true, maxSockets: 1 });

function timed(url: string): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: connection }, (res) => {
      res.resume();
      res.once('end', () => (res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`${url}: ${res.statusCode}`))));
    }).once('error', reject);
  });
}

/**
 * p50/p99 of `urls` asked once each (cold: the answer is not cached), then again (warm). `warmUp` is asked first, an
 * answer of the same route outside the sample: cold is about the answer, not about code not compiled yet.
 */
async function latency(warmUp: string, urls: string[]): Promise<{ cold: [number, number]; warm: [number, number] }> {
  await timed(warmUp);
  const cold: number[] = [];
  for (const url of urls) cold.push(await timed(url));
  const warm: number[] = [];
  for (const url of urls) warm.push(await timed(url));
  const pair = (values: number[]): [number, number] => [percentile(values, 50), percentile(values, 99)];
  return { cold: pair(cold), warm: pair(warm) };
}

/**
 * Settled: what the process keeps while serving, once V8's memory reducer has run. The reducer starts by itself when
 * allocation calms down, 30-90 s after the latency runs on this machine, and it is the one collection that gives the
 * young generation back (grown to 64 MB by a backfill, at any N): it is seen as the new space's committed size
 * (prom-client's nodejs_heap_space_size_total_bytes) falling below SETTLED_NEW_SPACE_MB. Read every SETTLE_POLL_S,
 * for at most SETTLE_MAX_S; a service still unsettled then is reported as such.
 */
const SETTLED_NEW_SPACE_MB = 16;
const SETTLE_POLL_S = 5;
const SETTLE_MAX_S = 240;

/** Seconds until the service's young generation is given back (undefined: not within SETTLE_MAX_S). */
async function settle(base: string): Promise<number | undefined> {
  const started = performance.now();
  for (;;) {
    const newSpaceMb = (await metricTotal(base, 'nodejs_heap_space_size_total_bytes', { space: 'new' })) / 2 ** 20;
    const waitedS = (performance.now() - started) / 1000;
    if (newSpaceMb < SETTLED_NEW_SPACE_MB) return waitedS;
    if (waitedS >= SETTLE_MAX_S) return undefined;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_S * 1000));
  }
}

/** A process's resident set now and at its peak (Linux: /proc/<pid>/status), in MB. */
function residentMb(pid: number | undefined): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
  return { now: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The round trip of the remote first start: a provider in another region. */
const REMOTE_RTT_MS = 40;

/** Starts with no history whose fastest is the baseline. */
const BASELINE_STARTS = 3;
/** How much two starts of the same service may differ on this machine: a shorter first indexing is not reported. */
const NOISE_MS = 300;

const ms = (value: number): string => value.toFixed(value < 10 ? 2 : 0);
const rows: Record<string, string | number>[] = [];
let baseline = 0;
const baselineMs: number[] = [];
const mainnet = await startLocalSystem(42220);
try {
  // what a first start costs with no history (the fastest of three: a start varies by a few hundred ms on a busy
  // machine): the rest of a first start to healthy is the first indexing. Each on a DATA_DIR of its own, as the first
  // start of each N is: a first start also creates the store and the signing key, which a restart only opens.
  const empty = await startLocalSystem(11142220);
  for (let i = 0; i < BASELINE_STARTS; i++) {
    const emptyDir = tempDataDir();
    const started = await startService({ testnet: empty, mainnet }, emptyDir);
    baselineMs.push(started.healthyMs);
    await stopService(started);
    rmSync(emptyDir, { recursive: true, force: true });
  }
  baseline = Math.min(...baselineMs);
  await empty.chain.stop();

  for (const n of SIZES) {
    const testnet = await startLocalSystem(11142220, { statesKept: HISTORY_STATES_KEPT });
    const dataDir = tempDataDir();
    /** The services started for this N: one still running when a measurement fails is killed with the chain. */
    const services: Started[] = [];
    try {
      const populatedAt = performance.now();
      const population = await populate(testnet, n, { perBlock: PER_BLOCK });
      const populateS = (performance.now() - populatedAt) / 1000;
      const head = Number(await testnet.client.getBlockNumber({ cacheTime: 0 }));
      const historyBlocks = head - Number(testnet.deployment.registryDeployBlock);

      const first = await startService({ testnet, mainnet }, dataDir);
      services.push(first);
      const rpcCalls = await metricTotal(first.base, 'rpc_requests_total');
      const healthyRss = residentMb(first.child.pid).now;
      const chainId = 11142220;
      const sample = population.agents.filter((_, i) => i % Math.max(1, Math.floor(n / SAMPLES)) === 0).slice(0, SAMPLES);
      const verifyUrl = (agentId: bigint) => `${first.base}/api/agent/verify/${chainId}/${agentId}`;
      const byHumanPath = (human: string) => `/api/agent/agents/${chainId}/${human}`;
      const byHumanUrl = (human: string) => `${first.base}${byHumanPath(human)}`;
      // sampled agents are every (n / SAMPLES)th from the first: the second is not one of them
      const verify = await latency(
        verifyUrl(population.agents[1]?.agentId ?? 0n),
        sample.map((a) => verifyUrl(a.agentId)),
      );
      const byHuman = await latency(byHumanUrl(NO_AGENTS), population.busyHumans.map(byHumanUrl));
      const answers = await Promise.all([NO_AGENTS, ...population.busyHumans].map((human) => capture(first.base, 'GET', byHumanPath(human))));
      const reference = await startReference('node', answers);
      const floorUrls = population.busyHumans.map((human) => `${reference.base}${byHumanPath(human)}`);
      // a fresh process: its code is warmed up first, as the service's was by the runs before
      await latency(`${reference.base}${byHumanPath(NO_AGENTS)}`, floorUrls);
      const floor = await latency(`${reference.base}${byHumanPath(NO_AGENTS)}`, floorUrls);
      await reference.stop();
      const settledS = await settle(first.base);
      const rss = residentMb(first.child.pid);
      const onDisk = await metricTotal(first.base, 'registry_index_on_disk');
      await stopService(first);
      const restart = await startService({ testnet, mainnet }, dataDir);
      services.push(restart);
      const restartRpc = await metricTotal(restart.base, 'rpc_requests_total');
      await stopService(restart);
      const remote = await delayedRpc(testnet.chain.rpcUrl, REMOTE_RTT_MS);
      const remoteDir = tempDataDir();
      let remoteMs: number;
      try {
        const remoteStart = await startService({ testnet, mainnet }, remoteDir, { TESTNET_RPC_URL: remote.url });
        services.push(remoteStart);
        remoteMs = remoteStart.healthyMs;
        await stopService(remoteStart);
      } finally {
        await remote.close();
        rmSync(remoteDir, { recursive: true, force: true });
      }

      const events = n + population.deregistered.length;
      const indexingMs = first.healthyMs - baseline;
      // a first indexing shorter than a start's own variation is not told apart from it
      const measurable = indexingMs >= NOISE_MS;
      rows.push({
        agents: n,
        'populate s': Math.round(populateS),
        'history blocks': historyBlocks,
        'start to healthy ms': Math.round(first.healthyMs),
        'restart to healthy ms': Math.round(restart.healthyMs),
        [`start to healthy, ${REMOTE_RTT_MS} ms RTT, ms`]: Math.round(remoteMs),
        'RPC calls at start': rpcCalls,
        'RPC calls at restart': restartRpc,
        'RSS healthy / settled / peak MB': `${Math.round(healthyRss)} / ${Math.round(rss.now)}${settledS === undefined ? ' (unsettled)' : ''} / ${Math.round(rss.peak)}`,
        'settled after s': settledS === undefined ? `> ${SETTLE_MAX_S}` : Math.round(settledS),
        'indexes on disk, settled': `${onDisk} of 2`,
        'first indexing ms': measurable ? Math.round(indexingMs) : `< ${NOISE_MS} (noise)`,
        'events/s': measurable ? Math.round(events / (indexingMs / 1000)) : '-',
        'verify cold p50/p99 ms': `${ms(verify.cold[0])}/${ms(verify.cold[1])}`,
        'verify warm p50/p99 ms': `${ms(verify.warm[0])}/${ms(verify.warm[1])}`,
        'by-human (10 agents each) cold p50/p99 ms': `${ms(byHuman.cold[0])}/${ms(byHuman.cold[1])}`,
        'by-human warm p50/p99 ms': `${ms(byHuman.warm[0])}/${ms(byHuman.warm[1])}`,
        'floor: node:http, same bytes, p50/p99 ms': `${ms(floor.cold[0])}/${ms(floor.cold[1])}`,
      });
      console.log(`${n} agents measured`);
    } finally {
      for (const { child } of services) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await testnet.chain.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
} finally {
  await mainnet.chain.stop();
}
console.log(
  `\nbench:history (local chains, ${PER_BLOCK} registrations a block; first starts with no history ${baselineMs.map(Math.round).join(', ')} ms; load average ${loadavg()[0]?.toFixed(2)})`,
);
console.table(rows);
