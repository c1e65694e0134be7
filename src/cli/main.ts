// The agent-identity-registry command: register an agent from a terminal (the QR code drawn there), pick a session
// up, sign requests as the agent, check any agent. Built on the client SDK only, as any program using it would be.
// runCli resolves to the exit code; the launcher (bin/agent-identity-registry.js) sets it.
import { DEFAULT_URL, URL_VARIABLE } from './arguments.js';
import type { Command } from './command.js';
import { EXIT, EXIT_CODES_HELP, exitCodeOf } from './exit-codes.js';

/** Each command's module is loaded only to run it: a command pays for its own imports (viem, the signature schemes), not the others'. */
const COMMANDS: readonly { name: string; summary: string; load: () => Promise<Command> }[] = [
  {
    name: 'register',
    summary: 'register an agent: QR code in the terminal, wait for the human, key file (0600), agent id',
    load: async () => (await import('./commands/register.js')).register,
  },
  {
    name: 'status',
    summary: "a registration session's stage (--token), or whether the key file's agent is still human-backed",
    load: async () => (await import('./commands/status.js')).status,
  },
  {
    name: 'export',
    summary: "write a registered agent's key (a session's token) to a 0600 file, waiting for the session if needed",
    load: async () => (await import('./commands/export.js')).exportKey,
  },
  {
    name: 'deregister',
    summary: 'remove an agent: its human proves again (QR code in the terminal) and its NFT is burned',
    load: async () => (await import('./commands/deregister.js')).deregister,
  },
  {
    name: 'verify',
    summary: 'is agent <agentId> on chain <chainId> human-backed? (exit 0 yes, 1 no)',
    load: async () => (await import('./commands/verify.js')).verify,
  },
  {
    name: 'sign',
    summary: 'sign a request as the agent of a key file: a curl command with the signature headers',
    load: async () => (await import('./commands/sign.js')).sign,
  },
  {
    name: 'mcp',
    summary: "serve the registry's MCP tools over stdio to a host that starts servers as processes",
    load: async () => (await import('./commands/mcp.js')).mcp,
  },
];

const USAGE = `Usage: agent-identity-registry <command> [options]

Registers AI agents bound to a human with a registry service, and checks them.

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(11)} ${command.summary}`).join('\n')}

Run agent-identity-registry <command> --help for a command's options. Every command talks to the service at --url
(default $${URL_VARIABLE}, else ${DEFAULT_URL}) and prints JSON with --json.

${EXIT_CODES_HELP}`;

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

export async function runCli(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  const json = args.includes('--json');
  try {
    if (!command) {
      throw Object.assign(new Error(`unknown command ${JSON.stringify(name)}: use ${COMMANDS.map((c) => c.name).join(', ')} (see --help)`), {
        exitCode: EXIT.usage,
      });
    }
    return await (await command.load()).run(args);
  } catch (error) {
    const code = (error as { exitCode?: number }).exitCode ?? exitCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    if (json) process.stdout.write(`${JSON.stringify({ error: oneLine(message), exitCode: code })}\n`);
    else
      process.stderr.write(`agent-identity-registry${command ? ` ${command.name}` : ''}: ${message}${code === EXIT.usage ? ' (see --help)' : ''}\n`);
    return code;
  }
}
