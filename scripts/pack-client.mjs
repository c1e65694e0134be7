// npm run pack:client: the published package `agent-identity-registry` (packages/client): the client SDK (the
// `./client` export, with its declarations) and the command line, without the service. It stages into
// packages/client the compiled modules the SDK and the CLI import (followed from dist/, built first if stale) and the
// bin launcher, checks that every package they import is a dependency of packages/client/package.json at the root's
// exact version, then (with --pack DIR) runs `npm pack` there and prints the tarball's path.
// `npm pack` or `npm publish` in packages/client runs it first too (prepack, with --stage-only).
// Plain JavaScript, like build.mjs: it runs before anything is compiled.
// @ts-check
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, staleReason } from './build.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const PACKAGE = join(ROOT, 'packages', 'client');
/** What the package offers: the SDK and the command line. */
const ENTRIES = ['client/index.js', 'cli/main.js'];

/** Static imports and re-exports, dynamic imports, and require() calls (an optional native binding is required). */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s(?:[^'"]*?\sfrom\s)?['"]([^'"]+)['"]|(?:\bimport|\brequire)\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * Every compiled module the entries reach through relative imports (with the declarations beside them), and every
 * bare specifier they import.
 * @returns {{ files: Set<string>, packages: Map<string, string> }}
 */
function closure() {
  /** @type {Set<string>} */
  const files = new Set();
  /** @type {Map<string, string>} package name -> a module importing it */
  const packages = new Map();
  /** @param {string} file a path under dist/ */
  const visit = (file) => {
    if (files.has(file)) return;
    const path = join(DIST, file);
    if (!existsSync(path)) throw new Error(`dist/${file} is missing: is the build complete?`);
    files.add(file);
    for (const match of readFileSync(path, 'utf8').matchAll(IMPORT)) {
      const specifier = /** @type {string} */ (match[1] ?? match[2]);
      if (specifier.startsWith('.')) {
        visit(relative(DIST, resolve(dirname(path), specifier)));
      } else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : /** @type {string} */ (specifier.split('/')[0]);
        if (!packages.has(name)) packages.set(name, file);
      }
    }
    // a declaration file imports what its module's types need (express's, for requireAgent)
    const declaration = file.replace(/\.js$/, '.d.ts');
    if (file.endsWith('.js') && existsSync(join(DIST, declaration))) visit(declaration);
  };
  for (const entry of ENTRIES) visit(entry);
  return { files, packages };
}

/** Copies the SDK and the CLI into packages/client, after checking its dependencies against their imports. */
export async function stage() {
  const reason = staleReason();
  if (reason) {
    console.error(`Building dist/ (${reason})…`);
    await build();
  }
  const { files, packages } = closure();
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
  const problems = [];
  if (pkg.version !== root.version) problems.push(`version ${pkg.version} is not the project's ${root.version}`);
  const declared = { ...pkg.dependencies, ...pkg.peerDependencies };
  for (const [name, importer] of packages) {
    if (!(name in declared)) problems.push(`dist/${importer} imports ${name}, which is not a dependency`);
  }
  for (const [name, version] of Object.entries(pkg.dependencies ?? {})) {
    if (root.dependencies?.[name] !== version) problems.push(`${name}@${version} is not the project's pin (${root.dependencies?.[name] ?? 'none'})`);
    if (!packages.has(name)) problems.push(`${name} is a dependency that nothing imports`);
  }
  if (problems.length > 0) throw new Error(`packages/client/package.json: ${problems.join('; ')}`);

  rmSync(join(PACKAGE, 'dist'), { recursive: true, force: true });
  rmSync(join(PACKAGE, 'bin'), { recursive: true, force: true });
  for (const file of files) {
    mkdirSync(dirname(join(PACKAGE, 'dist', file)), { recursive: true });
    copyFileSync(join(DIST, file), join(PACKAGE, 'dist', file));
  }
  mkdirSync(join(PACKAGE, 'bin'));
  copyFileSync(join(ROOT, 'bin', 'agent-identity-registry.js'), join(PACKAGE, 'bin', 'agent-identity-registry.js'));
  return files.size;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const count = await stage();
    const at = process.argv.indexOf('--pack');
    if (at !== -1) {
      const destination = resolve(process.argv[at + 1] ?? '.');
      mkdirSync(destination, { recursive: true });
      // --ignore-scripts: prepack would stage again what was staged just now
      const output = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
        cwd: PACKAGE,
        encoding: 'utf8',
      });
      const [{ filename }] = JSON.parse(output);
      console.log(join(destination, filename));
    } else if (!process.argv.includes('--stage-only')) {
      console.log(`packages/client: ${count} files staged`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
