// Registering and removing agents in tests the way it happens for real: userDefinedData built by the core
// codecs, the human played by the identity app, everything through the registry's verifySelfProof.
import type { Address, Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { agentRegistryAbi } from '../../src/chain/artifacts/index.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { configIndexFor, type ConfigIndex, type MinimumAge } from '../../src/core/disclosures.js';
import { linkedRegistrationData, walletFreeRegistrationData } from '../../src/core/registration-data.js';
import { prove, type MockDocument, type ProveResult, type RequestedDisclosures } from '../../src/identity-app/index.js';
import type { TestSystem } from './chain.js';

export const newAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

export interface ProveArgs {
  userId: Address;
  userDefinedData: string;
  disclosures?: Partial<RequestedDisclosures>;
  document?: MockDocument;
  now?: Date;
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
  });
}

export function expectSubmitted(result: ProveResult): asserts result is Extract<ProveResult, { status: 'submitted' }> {
  expect(result.status === 'submitted' ? 'submitted' : result.reason).toBe('submitted');
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

async function finish(system: TestSystem, agent: LocalAccount, human: Address, result: ProveResult): Promise<RegisteredAgent> {
  expectSubmitted(result);
  const agentKey = addressAgentKey(agent.address);
  const agentId = await system.gateway.registry.agentIdOf(agentKey);
  expect(agentId).toBeGreaterThan(0n);
  return { agentId, agent, agentKey, human, txHash: result.txHash, nullifier: result.nullifier };
}

const nonceOf = (system: TestSystem, agent: Address): Promise<bigint> =>
  system.client.readContract({ address: system.deployment.contracts.registry, abi: agentRegistryAbi, functionName: 'agentNonces', args: [agent] });

/** K (linked): a new agent key bound to `human`, whose wallet owns the NFT. */
export async function registerLinked(system: TestSystem, options: RegisterOptions = {}): Promise<RegisteredAgent> {
  const agent = options.agent ?? newAccount();
  const human = options.human ?? newAccount().address;
  const configIndex = configOf(options);
  const userDefinedData = await linkedRegistrationData(agent, human, {
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce: await nonceOf(system, agent.address),
    configIndex,
  });
  const result = await submitProof(system, {
    userId: human,
    userDefinedData,
    disclosures: { minimumAge: options.minimumAge ?? 0, ofac: options.ofac ?? false },
    ...(options.document ? { document: options.document } : {}),
  });
  return finish(system, agent, human, result);
}

/** W (wallet-free): the agent owns its own NFT; optional guardian. */
export async function registerWalletFree(
  system: TestSystem,
  options: RegisterOptions & { guardian?: Address } = {},
): Promise<RegisteredAgent> {
  const agent = options.agent ?? newAccount();
  const configIndex = configOf(options);
  const userDefinedData = await walletFreeRegistrationData(agent, options.guardian ?? null, {
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce: await nonceOf(system, agent.address),
    configIndex,
  });
  const result = await submitProof(system, {
    userId: agent.address,
    userDefinedData,
    disclosures: { minimumAge: options.minimumAge ?? 0, ofac: options.ofac ?? false },
    ...(options.document ? { document: options.document } : {}),
  });
  return finish(system, agent, agent.address, result);
}
