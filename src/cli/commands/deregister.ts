// deregister: the agent's human proves again (QR code in the terminal, stage while waiting) and the agent's NFT is
// burned; the agent of a key file, or one named by its address.
import { RegistryClient } from '../../client/registration.js';
import { chainIdOf } from '../../core/networks.js';
import { addressArgument, COMMON_HELP, networkArgument, secondsArgument, serviceUrl, startCommand } from '../arguments.js';
import { type Command, shellQuote } from '../command.js';
import { EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.js';
import { DEFAULT_KEY_FILE, readKeyFile } from '../key-file.js';
import { showOpenedSession } from '../session-opened.js';
import { followSession } from '../session-wait.js';

const DEFAULT_TIMEOUT_S = 30 * 60;

const USAGE = `Usage: agent-identity-registry deregister [--key-file PATH | --agent 0x… --network NETWORK | --token TOKEN]
                                         [--timeout SECONDS]

Removes an agent: opens a deregistration session, shows the QR code for the agent's human, who proves again in the
identity app, and waits until the chain has burned the agent's NFT. The key file is left as it is (its agent is
gone: delete it when you no longer need the key).

  --key-file PATH      the agent of this key file (default ./${DEFAULT_KEY_FILE}); its service unless --url is given
  --agent 0x…          the agent's address instead (for an Ed25519 agent: the address agent info reports)
  --network NETWORK    with --agent: mainnet or testnet (or 42220, 11142220); default mainnet
  --token TOKEN        follow a deregistration session opened before (the token it printed when it stopped waiting)
  --timeout SECONDS    how long to wait for the human (default ${DEFAULT_TIMEOUT_S})

${COMMON_HELP}

${EXIT_CODES_HELP}`;

const OPTIONS = {
  'key-file': { type: 'string' },
  agent: { type: 'string' },
  network: { type: 'string' },
  timeout: { type: 'string' },
  token: { type: 'string' },
} as const;

export const deregister: Command = {
  name: 'deregister',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, OPTIONS, USAGE, { max: 0 });
    if (!started) return EXIT.ok;
    const { values, out } = started;
    const timeoutMs = secondsArgument(values.timeout, '--timeout', DEFAULT_TIMEOUT_S);
    const resume = (base: string) => (token: string) => `agent-identity-registry deregister --url ${shellQuote(base)} --token ${shellQuote(token)}`;
    if (values.token !== undefined) {
      if (values.agent !== undefined || values['key-file'] !== undefined)
        throw usageError('--token follows an open session: give no --agent or --key-file');
      const base = serviceUrl(values.url);
      const done = await followSession({
        client: new RegistryClient(base),
        kind: 'deregistration',
        token: values.token,
        timeoutMs,
        out,
        resume: resume(base),
      });
      out.emit({ event: 'deregistered', agentId: done['agentId'], agentAddress: done['agentAddress'], network: done['network'] });
      out.say(`Agent ${String(done['agentId'])} deregistered on ${String(done['network'])}: its NFT is burned.`);
      return EXIT.ok;
    }
    let target: { base: string; agentAddress: string; network: 'mainnet' | 'testnet' };
    if (values.agent !== undefined) {
      if (values['key-file'] !== undefined) throw usageError('give --agent or --key-file, not both');
      target = {
        base: serviceUrl(values.url),
        agentAddress: addressArgument(values.agent, '--agent'),
        network: networkArgument(values.network ?? 'mainnet', '--network'),
      };
    } else {
      if (values.network !== undefined) throw usageError('--network goes with --agent: a key file names its network');
      const key = readKeyFile(values['key-file'] ?? DEFAULT_KEY_FILE);
      target = { base: values.url === undefined ? key.service : serviceUrl(values.url), agentAddress: key.agentAddress, network: key.network };
    }
    const client = new RegistryClient(target.base);
    const session = await client.openDeregistration({ agentAddress: target.agentAddress, network: target.network });
    out.say(`Deregistration session opened for agent ${session.agentId} on ${target.network} (chain ${chainIdOf(target.network)}).`);
    await showOpenedSession(out, session, 'remove the agent (its own human must prove)');
    const done = await followSession({ client, kind: 'deregistration', token: session.sessionToken, timeoutMs, out, resume: resume(target.base) });
    out.emit({
      event: 'deregistered',
      agentId: session.agentId,
      agentAddress: session.agentAddress,
      network: target.network,
      ...(typeof done['txHash'] === 'string' ? { txHash: done['txHash'] } : {}),
    });
    out.say(`Agent ${session.agentId} deregistered on ${target.network}: its NFT is burned.`);
    return EXIT.ok;
  },
};
