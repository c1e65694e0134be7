// What a registration session hands to the identity app for each mode: the agent's key material, the
// proof's userId, and the userDefinedData carrying the agent's signed consent (onchain-facts 1.7, 1.8).
import { ed25519 } from '@noble/curves/ed25519.js';
import { type Address, bytesToHex, type Hex, hexToBytes, isHex, parseSignature, recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { RegistryGateway } from '../chain/registry-gateway.js';
import { parseAccountAddress } from '../core/addresses.js';
import { addressAgentKey } from '../core/agent-key.js';
import { type EcdsaSignatureParts, ed25519ChallengeHash, registrationChallengeHash } from '../core/challenge.js';
import type { ConfigIndex } from '../core/disclosures.js';
import { ED25519_PUBLIC_KEY_RULE, ed25519AgentAddress, ed25519ExtKpub, isEd25519PublicKey } from '../core/ed25519-key.js';
import { badRequest, ServiceError } from '../core/errors.js';
import { linkedRegistrationData, walletFreeRegistrationData } from '../core/registration-data.js';
import { MODE_RULES, type RegistrationMode } from '../core/registration-modes.js';
import { advancedRegisterUserData, ed25519RegisterUserData, walletFreeRegisterUserData } from '../core/user-data.js';

export interface EnrollmentRequest {
  mode: RegistrationMode;
  humanAddress?: Address;
  /** privy / smartwallet: the wallet-held agent key's address and its signature of the challenge. */
  agentAddress?: string;
  agentSignature?: string;
  /** smartwallet: the smart account (humanAddress) consents to guard the agent: its signature of the same challenge. */
  guardianSignature?: string;
  /** ed25519 modes, bring-your-own key: 64 hex public key and 128 hex signature of the challenge. */
  ed25519Pubkey?: string;
  ed25519Signature?: string;
}

export interface Enrollment {
  agentAddress: Address;
  /** The registry's key for the agent: padded address, or the raw Ed25519 public key. */
  agentKey: Hex;
  /** Whom the proof is for (SelfApp.userId). */
  userId: Address;
  userDefinedData: string;
  /** Keys the service generated; they travel only inside the encrypted session token. */
  secrets: { agentPrivateKey?: Hex; ed25519PrivateKey?: Hex };
}

export interface EnrollmentContext {
  chainId: number;
  registry: RegistryGateway;
  configIndex: ConfigIndex;
}

const stripHex = (value: string): string => (value.startsWith('0x') || value.startsWith('0X') ? value.slice(2) : value);

function ecdsaSignatureParts(signature: string, mode: RegistrationMode): EcdsaSignatureParts {
  const hex = `0x${stripHex(signature)}` as Hex;
  if (!isHex(hex) || hex.length !== 132) {
    throw badRequest(`agentSignature must be the 65-byte (130 hex) signature of the challenge from your ${mode} wallet`);
  }
  const v = hex.slice(-2).toLowerCase();
  // parseSignature throws on any other recovery byte: the caller's mistake, said as such
  if (!['1b', '1c', '00', '01'].includes(v)) {
    throw badRequest(`agentSignature must end in its recovery byte v: 1b or 1c (27 or 28), or 00 or 01; got ${v}`);
  }
  const { r, s, yParity } = parseSignature(hex);
  return { r, s, v: yParity === 0 ? 27 : 28 };
}

async function alreadyRegistered(registry: RegistryGateway, agentKey: Hex): Promise<void> {
  const agentId = await registry.agentIdOf(agentKey);
  if (agentId !== 0n) throw new ServiceError(409, `This agent key is already registered as agent ${agentId}; deregister it first`);
}

/** linked / wallet-free: the service generates the secp256k1 key and signs the challenge with it. */
async function generatedEcdsa(mode: RegistrationMode, human: Address | undefined, ctx: EnrollmentContext): Promise<Enrollment> {
  const agentPrivateKey = generatePrivateKey();
  const agent = privateKeyToAccount(agentPrivateKey);
  // A key made a moment ago has never signed a challenge: its nonce is 0, no need to ask the chain.
  const challenge = { chainId: ctx.chainId, registry: ctx.registry.address, nonce: 0n, configIndex: ctx.configIndex };
  const walletFree = MODE_RULES[mode].action === 'W';
  const userDefinedData = walletFree
    ? await walletFreeRegistrationData(agent, null, challenge)
    : await linkedRegistrationData(agent, human as Address, challenge);
  return {
    agentAddress: agent.address,
    agentKey: addressAgentKey(agent.address),
    userId: walletFree ? agent.address : (human as Address),
    userDefinedData,
    secrets: { agentPrivateKey },
  };
}

/**
 * smartwallet: the passkey smart account named as humanAddress becomes the agent's guardian (it can revoke the
 * agent), so it must consent: it signs the same challenge the agent key signed, the way a smart account signs
 * (ERC-1271 once deployed, ERC-6492 while still counterfactual; a plain wallet's ECDSA works too).
 */
async function checkGuardianConsent(guardianSignature: string | undefined, guardian: Address, hash: Hex, registry: RegistryGateway): Promise<void> {
  const howTo =
    'the smart account named as humanAddress signs the same challengeHash as a personal message (ERC-1271 once deployed, ERC-6492 while counterfactual) and sends it as guardianSignature';
  if (!guardianSignature) throw badRequest(`smartwallet mode needs the guardian's consent: ${howTo}`);
  const signature = `0x${stripHex(guardianSignature)}` as Hex;
  if (!isHex(signature) || signature.length < 132 || signature.length > MAX_GUARDIAN_SIGNATURE_HEX) {
    throw badRequest(`guardianSignature must be 0x-hex of 65 to ${(MAX_GUARDIAN_SIGNATURE_HEX - 2) / 2} bytes: ${howTo}`);
  }
  if (!(await registry.personalSignatureIsValid(guardian, hash, signature))) throw badRequest(`guardianSignature does not verify: ${howTo}`);
}

/** A WebAuthn assertion wrapped for ERC-7739 and ERC-6492 is about 1.5 KB; room to spare, not unbounded. */
const MAX_GUARDIAN_SIGNATURE_HEX = 2 + 2 * 8_192;

/** privy / smartwallet: the human's wallet provider holds the key; it signed the challenge we published. */
async function walletHeldEcdsa(request: EnrollmentRequest, human: Address, ctx: EnrollmentContext): Promise<Enrollment> {
  const { mode } = request;
  if (!request.agentAddress || !request.agentSignature) {
    throw badRequest(
      `${mode} mode: the agent key lives in the human's ${mode === 'privy' ? 'Privy embedded wallet' : 'passkey smart account'}, so the service cannot sign for it. ` +
        'Get the challenge from POST /api/agent/register/challenge {"mode","network","agentAddress","humanAddress"}, ' +
        'sign its challengeHash as a personal message (EIP-191, the 32 raw bytes) with the agent key, and send agentAddress and agentSignature here',
    );
  }
  const agent = parseAccountAddress(request.agentAddress, 'agentAddress', `the agent key in the ${mode} wallet`);
  const walletFree = MODE_RULES[mode].action === 'W';
  const agentKey = addressAgentKey(agent);
  await alreadyRegistered(ctx.registry, agentKey);
  const nonce = await ctx.registry.registrationNonce(agent);
  const challengeHuman = walletFree ? agent : human;
  const hash = registrationChallengeHash({ human: challengeHuman, chainId: ctx.chainId, registry: ctx.registry.address, nonce });
  const signature = ecdsaSignatureParts(request.agentSignature, mode);
  const signer = await recoverMessageAddress({ message: { raw: hash }, signature: `0x${stripHex(request.agentSignature)}` as Hex }).catch(
    () => undefined,
  );
  if (signer !== agent) {
    throw badRequest(
      'agentSignature does not verify: sign the challengeHash of POST /api/agent/register/challenge (same mode, network and addresses) with the agent key',
    );
  }
  if (mode === 'smartwallet') await checkGuardianConsent(request.guardianSignature, human, hash, ctx.registry);
  const userDefinedData = walletFree
    ? walletFreeRegisterUserData({ configIndex: ctx.configIndex, agent, guardian: human, signature })
    : advancedRegisterUserData({ configIndex: ctx.configIndex, agent, signature });
  return { agentAddress: agent, agentKey, userId: walletFree ? agent : human, userDefinedData, secrets: {} };
}

/** ed25519 / ed25519-linked: the caller's own key (with its signature of the challenge) or one we generate. */
async function ed25519Key(request: EnrollmentRequest, human: Address | undefined, ctx: EnrollmentContext): Promise<Enrollment> {
  const own = request.ed25519Pubkey !== undefined || request.ed25519Signature !== undefined;
  if (own && (!request.ed25519Pubkey || !request.ed25519Signature)) {
    throw badRequest('Send both ed25519Pubkey and ed25519Signature to register your own Ed25519 key, or neither to have the service generate one');
  }
  let seed: Uint8Array | undefined;
  let pubkeyHex: Hex;
  if (own) {
    const pub = stripHex(request.ed25519Pubkey as string);
    if (!/^[0-9a-fA-F]{64}$/.test(pub) || !isEd25519PublicKey(`0x${pub}`)) {
      throw badRequest(`ed25519Pubkey ${ED25519_PUBLIC_KEY_RULE}`);
    }
    pubkeyHex = `0x${pub.toLowerCase()}`;
  } else {
    seed = ed25519.utils.randomSecretKey();
    pubkeyHex = bytesToHex(ed25519.getPublicKey(seed));
  }
  const agentAddress = ed25519AgentAddress(pubkeyHex);
  const challengeHuman = human ?? agentAddress;
  const nonce = own ? await ctx.registry.ed25519Nonce(pubkeyHex) : 0n;
  if (own) await alreadyRegistered(ctx.registry, pubkeyHex);
  const challenge = hexToBytes(ed25519ChallengeHash({ human: challengeHuman, chainId: ctx.chainId, registry: ctx.registry.address, nonce }));

  let signature: Uint8Array;
  if (seed) {
    signature = ed25519.sign(challenge, seed);
  } else {
    const sig = stripHex(request.ed25519Signature as string);
    if (!/^[0-9a-fA-F]{128}$/.test(sig)) throw badRequest('ed25519Signature must be 128 hex characters (the 64-byte Ed25519 signature R || S)');
    signature = hexToBytes(`0x${sig}`);
    if (!ed25519.verify(signature, challenge, hexToBytes(pubkeyHex))) {
      throw badRequest(
        'ed25519Signature does not verify: sign the challengeHash of POST /api/agent/register/ed25519-challenge (same pubkey, network and humanAddress) as 32 raw bytes',
      );
    }
  }
  const userDefinedData = ed25519RegisterUserData({
    configIndex: ctx.configIndex,
    pubkey: pubkeyHex,
    signature,
    extKpub: ed25519ExtKpub(pubkeyHex),
    guardian: human ?? null,
  });
  return {
    agentAddress,
    agentKey: pubkeyHex,
    userId: challengeHuman,
    userDefinedData,
    secrets: seed ? { ed25519PrivateKey: bytesToHex(seed) } : {},
  };
}

export function enrollAgent(request: EnrollmentRequest, ctx: EnrollmentContext): Promise<Enrollment> {
  const rules = MODE_RULES[request.mode];
  const human = rules.needsHumanAddress ? request.humanAddress : undefined;
  if (rules.keyType === 'ed25519') return ed25519Key(request, request.mode === 'ed25519-linked' ? human : undefined, ctx);
  if (rules.externalKey) return walletHeldEcdsa(request, human as Address, ctx);
  return generatedEcdsa(request.mode, human, ctx);
}

export interface Challenge {
  challengeHash: Hex;
  /** Decimal text: the registry's nonce for this key, bound into the hash. */
  nonce: string;
  /** The address the challenge binds the agent to (the proof's userId). */
  human: Address;
  chainId: number;
  registry: Address;
}

/** The challenge a wallet-held (privy, smartwallet) agent key signs before the session is opened. */
export async function ecdsaChallenge(
  request: { mode: RegistrationMode; agentAddress: Address; humanAddress: Address },
  ctx: Omit<EnrollmentContext, 'configIndex'>,
): Promise<Challenge> {
  const human = MODE_RULES[request.mode].action === 'W' ? request.agentAddress : request.humanAddress;
  const nonce = await ctx.registry.registrationNonce(request.agentAddress);
  const challengeHash = registrationChallengeHash({ human, chainId: ctx.chainId, registry: ctx.registry.address, nonce });
  return { challengeHash, nonce: nonce.toString(), human, chainId: ctx.chainId, registry: ctx.registry.address };
}

/** The challenge an Ed25519 agent key signs (32 raw bytes) to register itself. */
export async function ed25519Challenge(
  request: { pubkey: string; humanAddress?: Address },
  ctx: Omit<EnrollmentContext, 'configIndex'>,
): Promise<Challenge> {
  const pub = stripHex(request.pubkey);
  if (!/^[0-9a-fA-F]{64}$/.test(pub) || !isEd25519PublicKey(`0x${pub}`)) {
    throw badRequest(`pubkey ${ED25519_PUBLIC_KEY_RULE}`);
  }
  const pubkey = `0x${pub.toLowerCase()}` as Hex;
  const human = request.humanAddress ?? ed25519AgentAddress(pubkey);
  const nonce = await ctx.registry.ed25519Nonce(pubkey);
  const challengeHash = ed25519ChallengeHash({ human, chainId: ctx.chainId, registry: ctx.registry.address, nonce });
  return { challengeHash, nonce: nonce.toString(), human, chainId: ctx.chainId, registry: ctx.registry.address };
}
