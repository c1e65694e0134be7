// How `npm start` runs the service (package.json's start script, node options included): the benchmarks that measure
// a started service spawn it the same way.
import { readFileSync } from 'node:fs';

/** node's arguments in the start script; `main` (another build's entry point) in place of its entry point. */
export function startArguments(main?: string): string[] {
  const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const [command, ...args] = scripts.start.trim().split(/\s+/);
  if (command !== 'node' || args.length === 0) throw new Error(`The start script is not "node [options] <entry point>": ${scripts.start}`);
  if (main !== undefined) args[args.length - 1] = main;
  return args;
}
