// Registration challenges: what an agent key signs so that the registry knows the agent consents to being
// bound to this human on this registry and chain (onchain-facts 1.8). The nonce makes old signatures stale.
import { type Address, encodePacked, type Hex, keccak256, type LocalAccount, parseSignature } from 'viem';

export const REGISTER_CHALLENGE_PREFIX = 'self-agent-id:register:';
export const REGISTER_ED25519_CHALLENGE_PREFIX = 'self-agent-id:register-ed25519:';

export interface ChallengeInput {
  /** The proof's userId (the human; for wallet-free modes the agent or derived address itself). */
  human: Address;
  chainId: number | bigint;
  registry: Address;
  /** agentNonces(agent) for ECDSA keys, ed25519Nonce(pubkey) for Ed25519 keys. */
  nonce: number | bigint;
}

export interface EcdsaSignatureParts {
  r: Hex;
  s: Hex;
  v: 27 | 28;
}

function challengeHash(prefix: string, input: ChallengeInput): Hex {
  return keccak256(
    encodePacked(
      ['string', 'address', 'uint256', 'address', 'uint256'],
      [prefix, input.human, BigInt(input.chainId), input.registry, BigInt(input.nonce)],
    ),
  );
}

/** keccak256 of the 127-byte packing "self-agent-id:register:" || human || chainId || registry || nonce. */
export function registrationChallengeHash(input: ChallengeInput): Hex {
  return challengeHash(REGISTER_CHALLENGE_PREFIX, input);
}

/** keccak256 of the 135-byte packing "self-agent-id:register-ed25519:" || human || chainId || registry || nonce. */
export function ed25519ChallengeHash(input: ChallengeInput): Hex {
  return challengeHash(REGISTER_ED25519_CHALLENGE_PREFIX, input);
}

/** EIP-191 personal signature over the 32 raw hash bytes, split as the K/W userData wants it (v = 27/28). */
export async function signRegistrationChallenge(account: LocalAccount, hash: Hex): Promise<EcdsaSignatureParts> {
  const signature = await account.signMessage({ message: { raw: hash } });
  const { r, s, yParity } = parseSignature(signature);
  return { r, s, v: yParity === 0 ? 27 : 28 };
}
