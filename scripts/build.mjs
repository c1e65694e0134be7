// npm run build (and `npm install`, through prepare): compiles src/ into dist/, the JavaScript that `npm start`
// runs and the ./client export. With --if-stale (prestart, the test setup) it compiles only when something under
// src/ or a tsconfig changed since the last build, so an up-to-date start pays a few milliseconds, not a compile.
// Plain JavaScript on purpose: it runs before anything is compiled, and without tsx's start-up cost.
// @ts-check
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
/** Written after a successful build, its mtime set to when that build started. */
const STAMP = join(DIST, '.build-stamp');
/** The service's JavaScript, and the client SDK's declarations (only the SDK is a library: the service needs none). */
const CONFIGS = ['tsconfig.build.json', 'tsconfig.client.json'];

/**
 * The newest mtime under `dir`, folders included: a deleted or renamed file changes its folder's mtime.
 * @param {string} dir
 * @returns {number}
 */
function newestMtime(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** @returns {string | undefined} why a build is needed, or undefined when dist/ is up to date */
export function staleReason() {
  if (!existsSync(STAMP) || !existsSync(join(DIST, 'main.js'))) return 'no build yet';
  const built = statSync(STAMP).mtimeMs;
  const inputs = Math.max(newestMtime(join(ROOT, 'src')), ...['tsconfig.json', ...CONFIGS].map((name) => statSync(join(ROOT, name)).mtimeMs));
  return inputs > built ? 'sources changed since the last build' : undefined;
}

/**
 * Every file under `dir` (paths relative to it), skipping dot entries (the stamp, builds under way).
 * @param {string} dir
 * @returns {string[]}
 */
function filesUnder(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name), base) : [relative(base, join(dir, entry.name))]));
}

/**
 * Runs the project's own tsc on one config, writing into `outDir`.
 * @param {string} config
 * @param {string} outDir
 * @returns {Promise<void>}
 */
function tsc(config, outDir) {
  const bin = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  const child = spawn(process.execPath, [bin, '-p', join(ROOT, config), '--outDir', outDir], { cwd: ROOT, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`tsc -p ${config} failed (${signal ?? `exit code ${code}`})`))));
  });
}

/**
 * Compiles src/ into dist/ (both configs side by side); rejects when tsc reports an error. tsc writes into a folder
 * of its own, then each file is renamed into dist/: a service starting meanwhile never reads half a file.
 */
export async function build() {
  const startedAt = new Date();
  const next = join(DIST, `.next-${process.pid}`);
  try {
    const results = await Promise.allSettled(CONFIGS.map((config) => tsc(config, next)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const built = filesUnder(next);
    for (const file of built) {
      mkdirSync(dirname(join(DIST, file)), { recursive: true });
      renameSync(join(next, file), join(DIST, file));
    }
    // output of sources since deleted or renamed
    const current = new Set(built);
    for (const file of filesUnder(DIST)) if (!current.has(file)) rmSync(join(DIST, file));
  } finally {
    rmSync(next, { recursive: true, force: true });
  }
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  // a source saved while tsc ran is newer than this, so the next check builds again
  utimesSync(STAMP, startedAt, startedAt);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reason = process.argv.includes('--if-stale') ? staleReason() : 'requested';
  if (reason) {
    if (reason !== 'requested') console.error(`Building dist/ (${reason})…`);
    try {
      await build();
    } catch (error) {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    }
  }
}
