#!/usr/bin/env node
// The agent-identity-registry command. It runs the compiled CLI (dist/cli/main.js), which `npm install` builds in a
// clone and which the published package ships. In a clone whose dist/ is missing (installed with --ignore-scripts)
// or older than src/ (sources edited since the last build), it runs the sources through tsx instead, a dependency
// of the project: a command never waits for a build, and never runs code older than what it reads.
// Plain JavaScript: it runs before anything is compiled.
// @ts-check
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const source = new URL('../src/cli/main.ts', import.meta.url);
const build = new URL('../scripts/build.mjs', import.meta.url);

/** @returns {Promise<{ runCli(argv: readonly string[]): Promise<number> }>} */
async function load() {
  if (existsSync(source)) {
    const stale = !existsSync(compiled) || (existsSync(build) && (await import(build.href)).staleReason() !== undefined);
    if (stale) {
      const { tsImport } = await import('tsx/esm/api');
      return tsImport(fileURLToPath(source), import.meta.url);
    }
  }
  return import(compiled.href);
}

const { runCli } = await load();
const code = await runCli(process.argv.slice(2));
// exit once what was printed is written (an idle keep-alive connection must not hold the command open)
process.stdout.write('', () => process.exit(code));
