// npm run profile:queries: where the time of a cached query goes. The real app (scripts/query-apps.ts) serves
// one target under load (autocannon in a worker thread, so the main thread's profile is the server's) while V8's
// sampling CPU profiler runs on the main thread (node:inspector). Prints the top frames by self time and by total
// time, aggregated by function and file (a recursive function counts once per sample), and writes the
// .cpuprofile (open it in Chrome DevTools or speedscope) under .profiles/.
//
// Arguments: the target, one of verify (default), info, ref (the trivial route behind the middleware), a2a (the
// verify intent over POST /api/a2a); --without=<part>[,<part>] builds the app without those parts of the stack;
// --built profiles the build in dist/ (what `npm start` runs; build it first) rather than the sources.
// Environment: DURATION (seconds under the profiler, default 10), CONNECTIONS (default 10), TOP (rows, default 25),
// LOG_LEVEL (default info, to /dev/null as in the benchmark).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';
import autocannon from 'autocannon';
import { STACK_PARTS, type StackPart } from '../src/http/app.js';
import { queryRequests, REFERENCE_PATH, startQueryApps } from './query-apps.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const TOP = Number(process.env['TOP'] ?? 25);
const LOG_LEVEL = process.env['LOG_LEVEL'] ?? 'info';
const OUT_DIR = '.profiles';
const TARGETS = ['verify', 'info', 'ref', 'a2a'] as const;

const args = process.argv.slice(2);
const target = (args.find((a) => !a.startsWith('--')) ?? 'verify') as (typeof TARGETS)[number];
if (!TARGETS.includes(target)) throw new Error(`target must be one of ${TARGETS.join(', ')}`);
const without = (args
  .find((a) => a.startsWith('--without='))
  ?.slice('--without='.length)
  .split(',') ?? []) as StackPart[];
for (const part of without) if (!STACK_PARTS.includes(part)) throw new Error(`--without: ${part} is not one of ${STACK_PARTS.join(', ')}`);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/** "function file:line:column", the file relative to the project (node_modules shortened to the package's path). */
function frameKey({ functionName, url, lineNumber, columnNumber }: ProfileNode['callFrame']): string {
  const path = url.startsWith('file://') ? relative(process.cwd(), new URL(url).pathname) : url;
  const file = path.includes('node_modules/') ? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length) : path;
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}:${columnNumber + 1}` : ''}`;
}

/** Self and total sample counts per frame key; total counts a key once per stack, however deep it recurses. */
function aggregate(profile: CpuProfile): { self: Map<string, number>; total: Map<string, number>; samples: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let samples = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    samples += hits;
    const key = frameKey(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + hits);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = frameKey((byId.get(id) as ProfileNode).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + hits);
    }
  }
  return { self, total, samples };
}

const top = (counts: Map<string, number>, samples: number, exclude: (key: string) => boolean) =>
  [...counts]
    .filter(([key]) => !exclude(key))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([frame, count]) => ({ '%': ((100 * count) / samples).toFixed(1), frame }));

const apps = await startQueryApps(LOG_LEVEL);
try {
  const app = await apps.instance({ cached: true, tuning: { without }, built: args.includes('--built') });
  const requests = queryRequests(apps.agentId);
  const load: autocannon.Options = {
    url: `${app.base}${target === 'verify' ? requests.verify : target === 'info' ? requests.info : target === 'ref' ? REFERENCE_PATH : requests.a2aVerify.path}`,
    connections: CONNECTIONS,
    workers: 1,
    ...(target === 'a2a' ? { method: 'POST', body: requests.a2aVerify.body, headers: { 'content-type': 'application/json' } } : {}),
  };
  const check = await fetch(
    load.url,
    load.body ? { method: 'POST', body: load.body as string, headers: load.headers as Record<string, string> } : {},
  );
  if (check.status !== 200) throw new Error(`${load.url} answered ${check.status}: ${(await check.text()).slice(0, 200)}`);
  await autocannon({ ...load, duration: 2 });

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const result = await autocannon({ ...load, duration: DURATION });
  const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
  session.disconnect();

  mkdirSync(OUT_DIR, { recursive: true });
  const file = join(OUT_DIR, `${target}${without.length ? `-without-${without.join('+')}` : ''}-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));

  const { self, total, samples } = aggregate(profile);
  const idle = (self.get('(idle) ') ?? 0) / samples;
  console.log(
    `${target}${without.length ? ` without ${without.join(', ')}` : ''}: ${Math.round(result.requests.average)} requests/s under the profiler, ` +
      `p99 ${result.latency.p99} ms; ${samples} samples, ${(idle * 100).toFixed(1)}% idle; profile in ${file}`,
  );
  console.log('top frames by self time');
  console.table(top(self, samples, () => false));
  // the roots every sample has are no news
  const roots = (key: string): boolean => key.startsWith('(root)') || key.startsWith('(idle)') || key.startsWith('(program)');
  console.log('top frames by total time (self and callees)');
  console.table(top(total, samples, roots));
} finally {
  await apps.stop();
}
