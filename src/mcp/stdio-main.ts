// `node dist/mcp/stdio-main.js --url <base URL>`: the MCP server over stdio (stdio.ts), for hosts that start their
// servers as processes, and for the tests; the command line's `mcp` command runs the same bridge.
import { runStdioBridge } from './stdio.js';

const USAGE = 'usage: node dist/mcp/stdio-main.js --url <base URL of the service, e.g. http://localhost:3000>';

function urlArgument(argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--url');
  if (at >= 0) return argv[at + 1];
  return argv.find((arg) => arg.startsWith('--url='))?.slice('--url='.length);
}

const url = urlArgument(process.argv.slice(2));
if (!url || !URL.canParse(url)) {
  process.stderr.write(`${url ? `not a URL: ${url}\n` : ''}${USAGE}\n`);
  process.exit(2);
}
try {
  const bridge = await runStdioBridge({ url });
  await bridge.closed;
  process.exit(0);
} catch (error) {
  process.stderr.write(`could not serve ${url} over stdio: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
