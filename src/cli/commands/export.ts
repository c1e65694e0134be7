// export: the key of a registration whose session was left (a time-out, Ctrl-C): waits until it completes, then
// writes the key the service generated into a 0600 file, as register does at its end.
import { RegistryClient } from '../../client/registration.js';
import { chainIdOf } from '../../core/networks.js';
import { COMMON_HELP, secondsArgument, serviceUrl, startCommand } from '../arguments.js';
import { type Command, shellQuote } from '../command.js';
import { EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.js';
import { checkKeyFileFree, DEFAULT_KEY_FILE, keyFileOf, writeKeyFile } from '../key-file.js';
import { followSession } from '../session-wait.js';

const DEFAULT_TIMEOUT_S = 30 * 60;

const USAGE = `Usage: agent-identity-registry export --token TOKEN [--key-file PATH] [--force] [--timeout SECONDS]

Picks up a registration session (the token register printed when it stopped waiting), waits until the agent is
registered, and writes the agent's key to a file only you can read (0600). The service hands a key out once: a
second export of the same session is refused (exit 1).

  --token TOKEN        the registration session's token
  --key-file PATH      where the key goes (default ./${DEFAULT_KEY_FILE}); an existing file is never replaced…
  --force              …unless this is given
  --timeout SECONDS    how long to wait for the human (default ${DEFAULT_TIMEOUT_S})

${COMMON_HELP}

${EXIT_CODES_HELP}`;

const OPTIONS = {
  token: { type: 'string' },
  'key-file': { type: 'string' },
  force: { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

export const exportKey: Command = {
  name: 'export',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, OPTIONS, USAGE, { max: 0 });
    if (!started) return EXIT.ok;
    const { values, out } = started;
    const base = serviceUrl(values.url);
    if (!values.token) throw usageError('export needs --token TOKEN (the registration session token)');
    const keyFile = values['key-file'] ?? DEFAULT_KEY_FILE;
    const force = values.force === true;
    const timeoutMs = secondsArgument(values.timeout, '--timeout', DEFAULT_TIMEOUT_S);
    checkKeyFileFree(keyFile, force);

    const client = new RegistryClient(base);
    const resume = (token: string) =>
      `agent-identity-registry export --url ${shellQuote(base)} --token ${shellQuote(token)} --key-file ${shellQuote(keyFile)}${force ? ' --force' : ''}`;
    const done = await followSession({ client, kind: 'registration', token: values.token, timeoutMs, out, resume });
    const key = await client.exportKey(done.sessionToken);
    const path = writeKeyFile(keyFile, keyFileOf(key, base), force);
    out.emit({ event: 'exported', agentId: key.agentId, agentAddress: key.agentAddress, network: key.network, keyType: key.keyType, keyFile: path });
    out.say(`Agent ${key.agentId} on ${key.network} (chain ${chainIdOf(key.network)}): ${key.agentAddress}`);
    out.say(`Its ${key.keyType} key is in ${path} (mode 0600: keep it secret).`);
    return EXIT.ok;
  },
};
