// status: where a registration session is (its token), or whether the agent of a key file is still human-backed.
import { RegistryClient } from '../../client/registration.js';
import { COMMON_HELP, serviceUrl, startCommand } from '../arguments.js';
import type { Command } from '../command.js';
import { EXIT, EXIT_CODES_HELP } from '../exit-codes.js';
import { DEFAULT_KEY_FILE, readKeyFile } from '../key-file.js';
import { reportProof } from './verify.js';

const USAGE = `Usage: agent-identity-registry status [--token TOKEN | --key-file PATH]

With --token: the stage of a registration session (qr-ready, proof-received, completed or failed), and the agent id
once it is completed (pick the key up with export --token).
Without: whether the agent of the key file (default ./${DEFAULT_KEY_FILE}) is still human-backed, as verify says it;
the service asked is the key file's unless --url is given.

  --token TOKEN        a registration session's token
  --key-file PATH      a key file that register or export wrote

${COMMON_HELP}

Exit codes: with --token, 0 when the service answered (whatever the stage; a failed session: 1); with a key file, as
verify: 0 human-backed, 1 not.

${EXIT_CODES_HELP}`;

const OPTIONS = {
  token: { type: 'string' },
  'key-file': { type: 'string' },
} as const;

export const status: Command = {
  name: 'status',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, OPTIONS, USAGE, { max: 0 });
    if (!started) return EXIT.ok;
    const { values, out } = started;
    if (values.token === undefined) {
      const key = readKeyFile(values['key-file'] ?? DEFAULT_KEY_FILE);
      const base = values.url === undefined ? key.service : serviceUrl(values.url);
      return reportProof(out, await new RegistryClient(base).verifyAgent(key.chainId, key.agentId), key.network);
    }
    const state = await new RegistryClient(serviceUrl(values.url)).registrationStatus(values.token);
    const { sessionToken: _token, ...shown } = state;
    out.emit(shown);
    const agent = typeof state['agentId'] === 'number' ? `, agent ${state['agentId']}` : '';
    out.say(`Registration ${state.stage}${agent}${state.error ? `: ${state.error}` : ''} (session expires ${state.expiresAt}).`);
    for (const instruction of state.humanInstructions ?? []) out.say(`  ${instruction}`);
    return state.stage === 'failed' ? EXIT.failed : EXIT.ok;
  },
};
