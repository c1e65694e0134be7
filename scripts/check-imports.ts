// npm run check:imports: the import graph of src/ has no cycle (type-only imports count too: a cycle of types is
// still two modules that cannot be understood one without the other), and each folder imports only the folders
// below it (README, Architecture): core and the generated contracts import nothing, chain never imports the
// embedded dev chains, the feature rooms (sessions, aa, demo) import no adapter, the adapters (a2a, http, mcp) never
// import each other (mcp reads the REST schemas only), and only the composition root enters devnet. Exits 1 with
// every violation listed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', 'src');

/**
 * What each folder (first path segment under src/, or a module at the top of src/) may import besides itself:
 * whole folders, or single modules (paths under src/) where a folder may use one self-contained part of another.
 * main.ts, the composition root, may import anything and is not listed.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  contracts: [],
  store: ['core'],
  'metrics.ts': ['store'],
  'logger.ts': ['core'],
  'startup-timer.ts': [],
  chain: ['core', 'contracts'],
  // the local bundler and paymaster read the calls of a passkey account, check the header the proxy sends and
  // top up the deposit the service watches: those three modules, not the proxy service
  devnet: ['core', 'contracts', 'chain', 'store', 'aa/passkey-account.ts', 'aa/sponsoree-header.ts', 'aa/paymaster-deposit.ts'],
  // the one per-client limiter counts session creation and proxied calls alike
  sessions: ['core', 'chain', 'store', 'services/rate-limits.ts'],
  aa: ['core', 'contracts', 'chain', 'store', 'metrics.ts', 'services/rate-limits.ts'],
  services: ['core', 'chain', 'store', 'metrics.ts', 'sessions', 'aa', 'demo'],
  // the demo is built on the public use cases, and its own agent registers through the mock identity app
  demo: ['core', 'chain', 'store', 'services', 'identity-app'],
  // the mock identity app finds the embedded chains' accounts and durable block in DATA_DIR
  'identity-app': ['core', 'contracts', 'chain', 'devnet'],
  // the client SDK is published on its own: the pure domain, the generated ABIs and the passkey account
  client: ['core', 'contracts', 'aa/passkey-account.ts'],
  // the command line is a program on the SDK, as any user's would be: the SDK and the pure domain, no server internals
  // the mcp command is the stdio bridge, which speaks to the service only through the MCP SDK's client
  cli: ['core', 'client', 'mcp/stdio.ts'],
  'config.ts': ['core', 'chain', 'aa', 'devnet'],
  a2a: ['core', 'chain', 'store', 'metrics.ts', 'services', 'sessions', 'demo'],
  // the MCP tools take and answer exactly what the REST routes do: the routes' zod schemas, not the routes
  mcp: [
    'core',
    'store',
    'services',
    'sessions',
    'http/schemas/decimal-pattern.ts',
    'http/schemas/demo.ts',
    'http/schemas/fields.ts',
    'http/schemas/queries.ts',
    'http/schemas/registration.ts',
    'http/schemas/sessions.ts',
  ],
  http: ['core', 'chain', 'store', 'metrics.ts', 'services', 'sessions', 'aa', 'demo'],
};

/** Rooms with a narrow entrance: only these modules or folders may import them (besides the room itself). */
const ENTERED_ONLY_BY: Record<string, readonly string[]> = {
  // the embedded chains and the local ERC-4337 nodes are started by the composition root, nothing else
  devnet: ['main.ts', 'config.ts', 'identity-app'],
  // use cases are composed in services/index.ts and reached through the adapters
  aa: ['main.ts', 'config.ts', 'services/index.ts', 'http', 'client', 'devnet'],
  demo: ['main.ts', 'services/index.ts', 'http', 'a2a'],
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(ROOT);
const graph = new Map<string, string[]>();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets = [...text.matchAll(IMPORT)].map((match) => resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')));
  graph.set(
    file,
    targets.filter((target) => graph.has(target) || files.includes(target)),
  );
}

const problems: string[] = [];
const name = (file: string): string => relative(ROOT, file);
const layerOf = (path: string): string => path.split('/')[0] as string;
/** `rule` (a folder, a top-level module or a module path) covers the module at `path`. */
const covers = (rule: string, path: string): boolean => rule === path || layerOf(path) === rule;
const mayImport = (layer: string, path: string): boolean =>
  layer === 'main.ts' || layerOf(path) === layer || (MAY_IMPORT[layer]?.some((rule) => covers(rule, path)) ?? false);

const unruled = new Set<string>();
for (const [file, targets] of graph) {
  const from = name(file);
  const layer = layerOf(from);
  if (layer !== 'main.ts' && !(layer in MAY_IMPORT) && !unruled.has(layer)) {
    unruled.add(layer);
    problems.push(`layer: src/${layer} has no rule: say in MAY_IMPORT what it may import`);
  }
  for (const target of targets.map(name)) {
    if (!mayImport(layer, target)) problems.push(`layer: src/${from} imports src/${target}`);
    const entrances = ENTERED_ONLY_BY[layerOf(target)];
    if (entrances && layerOf(target) !== layer && !entrances.some((rule) => covers(rule, from)))
      problems.push(`entrance: src/${from} imports src/${target} (only ${entrances.join(', ')} may)`);
  }
}

// a single module a folder may import must not pull the rest of its own folder in behind it
for (const [layer, rules] of Object.entries(MAY_IMPORT)) {
  for (const module of rules.filter((rule) => rule.endsWith('.ts') && rule.includes('/'))) {
    for (const target of graph.get(join(ROOT, module)) ?? []) {
      if (!mayImport(layer, name(target))) problems.push(`layer: src/${module} (used by ${layer}) imports src/${name(target)}`);
    }
  }
}

// Tarjan's strongly connected components: every component of more than one module (or a self-import) is a cycle.
let index = 0;
const indexes = new Map<string, number>();
const lowlinks = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
function connect(file: string): void {
  indexes.set(file, index);
  lowlinks.set(file, index);
  index++;
  stack.push(file);
  onStack.add(file);
  for (const target of graph.get(file) ?? []) {
    if (!indexes.has(target)) {
      connect(target);
      lowlinks.set(file, Math.min(lowlinks.get(file) as number, lowlinks.get(target) as number));
    } else if (onStack.has(target)) {
      lowlinks.set(file, Math.min(lowlinks.get(file) as number, indexes.get(target) as number));
    }
  }
  if (lowlinks.get(file) !== indexes.get(file)) return;
  const component: string[] = [];
  let member: string;
  do {
    member = stack.pop() as string;
    onStack.delete(member);
    component.push(member);
  } while (member !== file);
  if (component.length > 1 || graph.get(file)?.includes(file)) problems.push(`cycle: ${component.map(name).sort().join(' <-> ')}`);
}
for (const file of graph.keys()) if (!indexes.has(file)) connect(file);

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`imports: ${graph.size} modules, no cycle, layers in order`);
