// userDefinedData for the ECDSA registration actions, with the agent key's challenge signature: what a
// caller (or our registration service) hands to the identity app so the registry accepts the agent.
import type { Address, LocalAccount } from 'viem';
import { registrationChallengeHash, signRegistrationChallenge } from './challenge.js';
import type { ConfigIndex } from './disclosures.js';
import { advancedRegisterUserData, walletFreeRegisterUserData } from './user-data.js';

export interface ChallengeContext {
  chainId: number;
  registry: Address;
  /** The registry's agentNonces(agent) at the time of signing. */
  nonce: bigint;
  configIndex: ConfigIndex;
}

/** K: the agent consents to `human`, whose wallet will own the agent NFT. The proof's userId is `human`. */
export async function linkedRegistrationData(agent: LocalAccount, human: Address, context: ChallengeContext): Promise<string> {
  const hash = registrationChallengeHash({ human, chainId: context.chainId, registry: context.registry, nonce: context.nonce });
  const signature = await signRegistrationChallenge(agent, hash);
  return advancedRegisterUserData({ configIndex: context.configIndex, agent: agent.address, signature });
}

/**
 * W: the agent owns its own NFT; the proof's userId is the agent's address, so the challenge binds the
 * agent to itself. An optional guardian may revoke it later.
 */
export async function walletFreeRegistrationData(agent: LocalAccount, guardian: Address | null, context: ChallengeContext): Promise<string> {
  const hash = registrationChallengeHash({
    human: agent.address,
    chainId: context.chainId,
    registry: context.registry,
    nonce: context.nonce,
  });
  const signature = await signRegistrationChallenge(agent, hash);
  return walletFreeRegisterUserData({ configIndex: context.configIndex, agent: agent.address, guardian, signature });
}
