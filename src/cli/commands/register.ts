// register: open a registration session through the SDK, show the QR code in the terminal, follow the stage while the
// human scans, then export the key the service generated into a 0600 file and print the agent id.
import { type RegistrationRequest, RegistryClient } from '../../client/registration.js';
import { chainIdOf } from '../../core/networks.js';
import { MODE_RULES, REGISTRATION_MODES, type RegistrationMode } from '../../core/registration-modes.js';
import { addressArgument, COMMON_HELP, networkArgument, type parseCommand, secondsArgument, serviceUrl, startCommand } from '../arguments.js';
import { type Command, shellQuote } from '../command.js';
import { EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.js';
import { checkKeyFileFree, DEFAULT_KEY_FILE, keyFileOf, writeKeyFile } from '../key-file.js';
import { showOpenedSession } from '../session-opened.js';
import { followSession } from '../session-wait.js';

const DEFAULT_MODE = 'wallet-free';
const DEFAULT_NETWORK = 'mainnet';
const DEFAULT_TIMEOUT_S = 30 * 60;
/** The service generates the key of these modes and hands it out once; in the others a wallet holds it. */
const EXPORTED: readonly RegistrationMode[] = REGISTRATION_MODES.filter((mode) => !MODE_RULES[mode].externalKey);

const USAGE = `Usage: agent-identity-registry register [--mode MODE] [--network NETWORK] [--human 0x…] [options]

Registers an agent bound to a human: opens a session, shows the QR code for the human's identity app (and the
scan page), waits while the human scans and the chain registers the agent, then writes the agent's key to a file
only you can read (0600) and prints the agent id.

  --mode MODE          ${EXPORTED.join(', ')} (default ${DEFAULT_MODE}):
${EXPORTED.map((mode) => `                         ${mode.padEnd(15)} ${MODE_RULES[mode].label}`).join('\n')}
                       (privy and smartwallet keep the agent key in the human's wallet: register those with the SDK)
  --network NETWORK    mainnet or testnet, or the chain id 42220 or 11142220 (default ${DEFAULT_NETWORK}, as everywhere in
                       the service). On the service's local chains only testnet accepts the mock identity app's documents
  --human 0x…          the human's wallet address: required by linked (it owns the agent's NFT) and ed25519-linked
                       (it becomes the guardian)
  --key-file PATH      where the key goes (default ./${DEFAULT_KEY_FILE}); an existing file is never replaced…
  --force              …unless this is given
  --timeout SECONDS    how long to wait for the human (default ${DEFAULT_TIMEOUT_S}, a session's lifetime)
  --minimum-age N      ask the human to prove an age of at least 18 or 21
  --ofac               ask for the sanctions-list check
  --nationality        ask the human to disclose the nationality
  --name               ask the human to disclose the name

The registry allows one agent per human unless configured otherwise (MAX_AGENTS_PER_HUMAN): a second registration of
the same person fails with TooManyAgentsForHuman. On the local chains, register as another person with the mock
identity app's --document-number.

${COMMON_HELP}

Output: the QR code, the scan page and the deep link, a stage line while waiting, then the agent id and the key file.
With --json, one JSON object per line: {"event":"session",...}, {"event":"stage","stage":...} at each change, and
{"event":"registered","agentId":...,"keyFile":...}.

${EXIT_CODES_HELP}`;

const OPTIONS = {
  mode: { type: 'string' },
  network: { type: 'string' },
  human: { type: 'string' },
  'key-file': { type: 'string' },
  force: { type: 'boolean' },
  timeout: { type: 'string' },
  'minimum-age': { type: 'string' },
  ofac: { type: 'boolean' },
  nationality: { type: 'boolean' },
  name: { type: 'boolean' },
} as const;

function requestOf(values: ReturnType<typeof parseCommand<typeof OPTIONS>>['values']): RegistrationRequest {
  const mode = (values.mode ?? DEFAULT_MODE) as RegistrationMode;
  if (!(REGISTRATION_MODES as readonly string[]).includes(mode)) {
    throw usageError(`--mode must be one of ${REGISTRATION_MODES.join(', ')}, got ${JSON.stringify(values.mode)}`);
  }
  if (!EXPORTED.includes(mode)) {
    throw usageError(
      `--mode ${mode} keeps the agent key in the human's wallet, which signs the registration: register it with the SDK (RegistryClient.openRegistration with agentSignature), or use ${EXPORTED.join(', ')}`,
    );
  }
  const network = networkArgument(values.network ?? DEFAULT_NETWORK, '--network');
  if (MODE_RULES[mode].needsHumanAddress && values.human === undefined) {
    throw usageError(`--mode ${mode} needs --human 0x… (the human's wallet address)`);
  }
  if (!MODE_RULES[mode].needsHumanAddress && values.human !== undefined) {
    throw usageError(`--human does not apply to --mode ${mode}: the agent owns its own NFT`);
  }
  const minimumAge = values['minimum-age'];
  if (minimumAge !== undefined && !['0', '18', '21'].includes(minimumAge)) {
    throw usageError(`--minimum-age must be 18 or 21, got ${JSON.stringify(minimumAge)}`);
  }
  const disclosures = {
    ...(minimumAge !== undefined ? { minimumAge: Number(minimumAge) as 0 | 18 | 21 } : {}),
    ...(values.ofac ? { ofac: true } : {}),
    ...(values.nationality ? { nationality: true } : {}),
    ...(values.name ? { name: true } : {}),
  };
  return {
    mode,
    network,
    ...(values.human !== undefined ? { humanAddress: addressArgument(values.human, '--human') } : {}),
    ...(Object.keys(disclosures).length > 0 ? { disclosures } : {}),
  };
}

export const register: Command = {
  name: 'register',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, OPTIONS, USAGE, { max: 0 });
    if (!started) return EXIT.ok;
    const { values, out } = started;
    const base = serviceUrl(values.url);
    const request = requestOf(values);
    const keyFile = values['key-file'] ?? DEFAULT_KEY_FILE;
    const force = values.force === true;
    const timeoutMs = secondsArgument(values.timeout, '--timeout', DEFAULT_TIMEOUT_S);
    checkKeyFileFree(keyFile, force);

    const client = new RegistryClient(base);
    const session = await client.openRegistration(request);
    out.say(
      `Registration session opened on ${request.network} (chain ${chainIdOf(request.network ?? DEFAULT_NETWORK)}), agent ${session.agentAddress}.`,
    );
    await showOpenedSession(out, session, 'register the agent');
    const resume = (token: string) =>
      `agent-identity-registry export --url ${shellQuote(base)} --token ${shellQuote(token)} --key-file ${shellQuote(keyFile)}${force ? ' --force' : ''}`;
    const done = await followSession({ client, kind: 'registration', token: session.sessionToken, timeoutMs, out, resume });
    const key = await client.exportKey(done.sessionToken);
    const path = writeKeyFile(keyFile, keyFileOf(key, base), force);
    out.emit({
      event: 'registered',
      agentId: key.agentId,
      agentAddress: key.agentAddress,
      network: key.network,
      chainId: chainIdOf(key.network),
      keyType: key.keyType,
      keyFile: path,
      ...(typeof done['txHash'] === 'string' ? { txHash: done['txHash'] } : {}),
    });
    out.say(`Agent ${key.agentId} registered on ${key.network} (chain ${chainIdOf(key.network)}): ${key.agentAddress}`);
    out.say(`Its ${key.keyType} key is in ${path} (mode 0600: keep it secret; the service hands it out only once).`);
    out.say(`Check it: agent-identity-registry verify ${chainIdOf(key.network)} ${key.agentId}`);
    return EXIT.ok;
  },
};
