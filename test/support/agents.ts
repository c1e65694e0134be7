// Registering and removing agents in tests the way it happens for real: userDefinedData built by the core
// codecs, the human played by the identity app, everything through the registry's verifySelfProof.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { type Address, type Hex, hexToBytes, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { ed25519ChallengeHash } from '../../src/core/challenge.js';
import { type ConfigIndex, configIndexFor, type MinimumAge } from '../../src/core/disclosures.js';
import { type ExtKpub, ed25519ExtKpub } from '../../src/core/ed25519-key.js';
import { linkedRegistrationData, walletFreeRegistrationData } from '../../src/core/registration-data.js';
import { ed25519RegisterUserData } from '../../src/core/user-data.js';
import { type MockDocument, type ProveOptions, type ProveResult, prove, type RequestedDisclosures } from '../../src/identity-app/index.js';
import type { TestSystem } from './chain.js';
import { registryOf } from './registry.js';

export const newAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

export interface ProveArgs {
  userId: Address;
  userDefinedData: string;
  disclosures?: Partial<RequestedDisclosures>;
  document?: MockDocument;
  now?: Date;
  /** Plays a dishonest app: changes the disclosure before the trusted attester signs it (see ProveOptions). */
  disclose?: ProveOptions['disclose'];
}

/** Submits a proof for `userId` carrying `userDefinedData`, from a fresh funded relayer. */
export async function submitProof(system: TestSystem, args: ProveArgs): Promise<ProveResult> {
  const wallet = await system.newWallet();
  return prove({
    client: system.client,
    wallet,
    attester: system.attester,
    request: {
      registry: system.deployment.contracts.registry,
      chainId: system.deployment.chainId,
      scopeSeed: 'self-agent-id',
      userId: args.userId,
      userDefinedData: args.userDefinedData,
      disclosures: { minimumAge: 0, ofac: false, ...args.disclosures },
    },
    ...(args.document ? { document: args.document } : {}),
    ...(args.now ? { now: args.now } : {}),
    ...(args.disclose ? { disclose: args.disclose } : {}),
  });
}

export function expectSubmitted(result: ProveResult): asserts result is Extract<ProveResult, { status: 'submitted' }> {
  expect(result.status === 'submitted' ? 'submitted' : result.reason).toBe('submitted');
}

/** The registry's registration context of `agent` (its current nonce). */
async function registrationContext(system: TestSystem, agent: Address, configIndex: ConfigIndex) {
  return {
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce: await registryOf(system).read.agentNonces([agent]),
    configIndex,
  };
}

/** K userDefinedData signed by `agent` for `human` with the agent's current nonce. */
export async function linkedData(system: TestSystem, agent: LocalAccount, human: Address, configIndex: ConfigIndex = 0): Promise<string> {
  return linkedRegistrationData(agent, human, await registrationContext(system, agent.address, configIndex));
}

/** A real Ed25519 key pair (node:crypto) with its raw 32-byte public key. */
export interface Ed25519Agent {
  privateKey: KeyObject;
  pubkey: Hex;
  extKpub: ExtKpub;
}

export function newEd25519Agent(): Ed25519Agent {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const raw = Buffer.from(jwk.x ?? '', 'base64url');
  const pubkey = `0x${raw.toString('hex')}` as Hex;
  return { privateKey, pubkey, extKpub: ed25519ExtKpub(pubkey) };
}

/** E userDefinedData: the key signs the registration challenge for `human` with its current nonce. */
export async function ed25519Data(
  system: TestSystem,
  key: Ed25519Agent,
  human: Address,
  options: { configIndex?: ConfigIndex; guardian?: Address | null; extKpub?: ExtKpub } = {},
): Promise<string> {
  const nonce = await registryOf(system).read.ed25519Nonce([key.pubkey]);
  const challenge = ed25519ChallengeHash({
    human,
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce,
  });
  const signature = new Uint8Array(sign(null, hexToBytes(challenge), key.privateKey));
  return ed25519RegisterUserData({
    configIndex: options.configIndex ?? 0,
    pubkey: key.pubkey,
    signature,
    extKpub: options.extKpub ?? key.extKpub,
    guardian: options.guardian ?? null,
  });
}

export interface RegisteredAgent {
  agentId: bigint;
  agent: LocalAccount;
  agentKey: Hex;
  human: Address;
  txHash: Hex;
  nullifier: bigint;
}

interface RegisterOptions {
  minimumAge?: MinimumAge;
  ofac?: boolean;
  document?: MockDocument;
  human?: Address;
  agent?: LocalAccount;
}

const configOf = (o: RegisterOptions): ConfigIndex => configIndexFor({ minimumAge: o.minimumAge ?? 0, ofac: o.ofac ?? false });

/** Proves `human` with the registration's disclosures and checks that the agent got an id. */
async function register(
  system: TestSystem,
  options: RegisterOptions,
  agent: LocalAccount,
  human: Address,
  userDefinedData: string,
): Promise<RegisteredAgent> {
  const result = await submitProof(system, {
    userId: human,
    userDefinedData,
    disclosures: { minimumAge: options.minimumAge ?? 0, ofac: options.ofac ?? false },
    ...(options.document ? { document: options.document } : {}),
  });
  expectSubmitted(result);
  const agentKey = addressAgentKey(agent.address);
  const agentId = await system.gateway.registry.agentIdOf(agentKey);
  expect(agentId).toBeGreaterThan(0n);
  return { agentId, agent, agentKey, human, txHash: result.txHash, nullifier: result.nullifier };
}

/** K (linked): a new agent key bound to `human`, whose wallet owns the NFT. */
export async function registerLinked(system: TestSystem, options: RegisterOptions = {}): Promise<RegisteredAgent> {
  const agent = options.agent ?? newAccount();
  const human = options.human ?? newAccount().address;
  return register(system, options, agent, human, await linkedData(system, agent, human, configOf(options)));
}

/** W (wallet-free): the agent owns its own NFT; optional guardian. */
export async function registerWalletFree(system: TestSystem, options: RegisterOptions & { guardian?: Address } = {}): Promise<RegisteredAgent> {
  const agent = options.agent ?? newAccount();
  const context = await registrationContext(system, agent.address, configOf(options));
  return register(system, options, agent, agent.address, await walletFreeRegistrationData(agent, options.guardian ?? null, context));
}

export interface RegisteredEd25519Agent {
  agentId: bigint;
  key: Ed25519Agent;
  /** The private key's 32-byte seed, as the SDK's signers take it. */
  seed: Hex;
  human: Address;
  nullifier: bigint;
}

/** E (Ed25519): the agent's own key signs the registration challenge for `human`, who becomes its guardian. */
export async function registerEd25519(system: TestSystem, options: Omit<RegisterOptions, 'agent'> = {}): Promise<RegisteredEd25519Agent> {
  const key = newEd25519Agent();
  const human = options.human ?? newAccount().address;
  const result = await submitProof(system, {
    userId: human,
    userDefinedData: await ed25519Data(system, key, human, { configIndex: configOf(options), guardian: human }),
    disclosures: { minimumAge: options.minimumAge ?? 0, ofac: options.ofac ?? false },
    ...(options.document ? { document: options.document } : {}),
  });
  expectSubmitted(result);
  const agentId = await system.gateway.registry.agentIdOf(key.pubkey);
  expect(agentId).toBeGreaterThan(0n);
  const seed = Buffer.from(key.privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  return { agentId, key, seed: `0x${seed.toString('hex')}`, human, nullifier: result.nullifier };
}
