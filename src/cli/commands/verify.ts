// verify: whether an agent is backed by a human, as the registry on chain says (through the service's verify query).
import { type AgentProof, RegistryClient } from '../../client/registration.js';
import { chainIdOf, type NetworkName } from '../../core/networks.js';
import { COMMON_HELP, networkArgument, serviceUrl, startCommand } from '../arguments.js';
import type { Command } from '../command.js';
import { EXIT, EXIT_CODES_HELP, usageError } from '../exit-codes.js';
import type { Output } from '../output.js';

const USAGE = `Usage: agent-identity-registry verify <chainId> <agentId>

Says whether the agent is backed by a human: registered, with a proof of human from the registry's own provider.
<chainId> is 42220 (mainnet) or 11142220 (testnet); the names mainnet and testnet work too.

${COMMON_HELP}

Output: one sentence, or with --json the service's verify answer plus "humanBacked".
Exit code 0 when the agent is human-backed, 1 when it is not (no proof, another provider's, or no such agent).

${EXIT_CODES_HELP}`;

/** Human-backed: a proof, and from the registry's own provider (a proof from another provider is not this registry's word). */
export const isHumanBacked = (proof: AgentProof): boolean => proof.isVerified && proof.isSelfProvider;

/** Prints the proof in a sentence (or JSON); the exit code says whether the agent is human-backed. */
export function reportProof(out: Output, proof: AgentProof, network: NetworkName): number {
  const backed = isHumanBacked(proof);
  out.emit({ ...proof, network, humanBacked: backed });
  const agent = `Agent ${proof.agentId} on ${network} (chain ${proof.chainId})`;
  if (backed) {
    const others = proof.agentCountForHuman === 1 ? 'its human has 1 agent' : `its human has ${proof.agentCountForHuman} agents`;
    out.say(
      `${agent} is human-backed: proof of human by the registry's provider ${proof.proofProvider} (${proof.strengthLabel}, strength ${proof.verificationStrength}); ${others}.`,
    );
  } else if (proof.isVerified) {
    out.say(`${agent} is NOT human-backed by this registry: its proof comes from another provider, ${proof.proofProvider}.`);
  } else {
    out.say(`${agent} is NOT human-backed: no proof of human (not registered, deregistered, or its proof was revoked).`);
  }
  return backed ? EXIT.ok : EXIT.failed;
}

export const verify: Command = {
  name: 'verify',
  usage: USAGE,
  async run(args) {
    const started = startCommand(args, {}, USAGE, { max: 2 });
    if (!started) return EXIT.ok;
    const { values, positionals, out } = started;
    const base = serviceUrl(values.url);
    const [chain, id] = positionals;
    if (chain === undefined || id === undefined) throw usageError('verify needs <chainId> <agentId>, e.g. verify 11142220 5');
    const network = networkArgument(chain, '<chainId>');
    if (!/^[1-9]\d{0,30}$/.test(id)) throw usageError(`<agentId> must be a positive whole number, got ${JSON.stringify(id)}`);
    const proof = await new RegistryClient(base).verifyAgent(chainIdOf(network), BigInt(id));
    return reportProof(out, proof, network);
  },
};
