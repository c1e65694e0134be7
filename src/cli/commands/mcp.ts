// mcp: the registry's MCP server over stdio, for hosts that start their servers as processes (desktop assistants,
// IDEs): the same tools and resources as the service's /mcp endpoint, forwarded to it (src/mcp/stdio.ts).
import { runStdioBridge } from '../../mcp/stdio.js';
import { COMMON_HELP, serviceUrl, startCommand } from '../arguments.js';
import type { Command } from '../command.js';
import { EXIT, EXIT_CODES_HELP } from '../exit-codes.js';

const USAGE = `Usage: agent-identity-registry mcp [--url <service>]

Serves the registry's MCP tools (lookup_agent, verify_agent, register_agent...) and resources over stdio, by
forwarding to the service's MCP endpoint (<service>/mcp, Streamable HTTP), progress notifications included. A host
starts it as its server process, e.g. {"command": "npx", "args": ["agent-identity-registry", "mcp", "--url", "http://127.0.0.1:3000"]}.
It runs until the host closes its stdin; nothing but MCP messages goes to stdout.

${COMMON_HELP}

${EXIT_CODES_HELP}`;

export const mcp: Command = {
  name: 'mcp',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, {}, USAGE, { max: 0 });
    if (!started) return EXIT.ok;
    const url = serviceUrl(started.values.url);
    // stdout carries MCP's messages: what the bridge has to say goes to stderr
    const bridge = await runStdioBridge({ url, log: (message) => process.stderr.write(`${message}\n`) });
    await bridge.closed;
    return EXIT.ok;
  },
};
