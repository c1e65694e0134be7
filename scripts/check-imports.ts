// npm run check:imports: the import graph of src/ has no cycle (type-only imports count too: a cycle of types is
// still two modules that cannot be understood one without the other), and the layers keep their direction:
// core imports no other layer, services import no adapter, and the two adapters (a2a, http) never import each
// other. Exits 1 with every violation listed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', 'src');
/** Folders a folder must not import from (first path segment under src/). */
const FORBIDDEN: Record<string, readonly string[]> = {
  core: ['a2a', 'http', 'services', 'sessions', 'store', 'chain', 'identity-app'],
  services: ['a2a', 'http'],
  sessions: ['a2a', 'http', 'services'],
  store: ['a2a', 'http', 'services', 'sessions', 'chain'],
  chain: ['a2a', 'http', 'services', 'sessions', 'store'],
  // the client SDK is published on its own: it may use the pure domain and nothing else of the service
  client: ['a2a', 'http', 'services', 'sessions', 'store', 'chain', 'identity-app'],
  a2a: ['http'],
  http: ['a2a'],
};
/**
 * Modules of a forbidden layer that a layer may still import, because they are self-contained: the passkey
 * smart account (viem and generated ABIs only) and the generated artifacts are part of the client SDK too.
 */
const ALLOWED: Record<string, readonly string[]> = {
  client: ['aa/passkey-account.ts', 'chain/artifacts/'],
};
const allowed = (from: string, target: string): boolean => (ALLOWED[from] ?? []).some((prefix) => target.startsWith(prefix));

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
const layerOf = (file: string): string => name(file).split('/')[0] as string;

// what the client may import must not pull the rest of its layer in behind it
for (const [from, prefixes] of Object.entries(ALLOWED)) {
  for (const [file, targets] of graph) {
    if (!prefixes.some((prefix) => name(file).startsWith(prefix))) continue;
    for (const target of targets) {
      if (!prefixes.some((prefix) => name(target).startsWith(prefix)))
        problems.push(`layer: src/${name(file)} (used by ${from}) imports src/${name(target)}`);
    }
  }
}

for (const [file, targets] of graph) {
  for (const target of targets) {
    if (FORBIDDEN[layerOf(file)]?.includes(layerOf(target)) && !allowed(layerOf(file), name(target))) {
      problems.push(`layer: src/${name(file)} imports src/${name(target)}`);
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
