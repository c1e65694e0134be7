// What every benchmark starts from: a fresh in-memory local chain with our contracts, and funded wallets.
import { ed25519 } from '@noble/curves/ed25519.js';
import { type Address, bytesToHex, type Hex, hexToBytes } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type ChainClient, type ChainWallet, type ClientOptions, createChainClient, createChainWallet } from '../src/chain/clients.js';
import { ChainGateway, createNetworkGateway } from '../src/chain/gateway.js';
import { RegistryGateway } from '../src/chain/registry-gateway.js';
import { addressAgentKey } from '../src/core/agent-key.js';
import { ed25519ChallengeHash } from '../src/core/challenge.js';
import { ed25519ExtKpub } from '../src/core/ed25519-key.js';
import type { NetworkName } from '../src/core/networks.js';
import { linkedRegistrationData } from '../src/core/registration-data.js';
import { ed25519RegisterUserData } from '../src/core/user-data.js';
import { type Deployment, deployContracts } from '../src/devnet/deploy.js';
import { type DevChain, startDevChain } from '../src/devnet/devchain.js';
import { fund } from '../src/devnet/embedded.js';
import { prove } from '../src/identity-app/index.js';

export interface LocalSystem {
  network: NetworkName;
  chain: DevChain;
  /** Client options for the chain (fast polling: anvil mines at once). */
  local: ClientOptions;
  client: ChainClient;
  attester: PrivateKeyAccount;
  deployment: Deployment;
  /** The deployer: it holds the registry's roles (e.g. setMaxAgentsPerHuman). */
  operator: ChainWallet;
  newWallet(): Promise<ChainWallet>;
  /** The service's gateway over this chain, serving both networks; `onRequest` counts RPC round trips. */
  gateway(onRequest?: () => void): ChainGateway;
}

/** `statesKept`: the chain's recent block states in memory (the devnet's default when absent). */
export async function startLocalSystem(chainId = 11142220, options: { statesKept?: number } = {}): Promise<LocalSystem> {
  const network = chainId === 42220 ? 'mainnet' : 'testnet';
  const chain = await startDevChain({ chainId, ...options });
  const local: ClientOptions = { rpcUrl: chain.rpcUrl, pollingIntervalMs: 20 };
  const client = createChainClient(network, local);
  const newWallet = async (): Promise<ChainWallet> => {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund(client, account.address);
    return createChainWallet(network, account, local);
  };
  const attester = privateKeyToAccount(generatePrivateKey());
  const operator = await newWallet();
  const deployment = await deployContracts({ client, wallet: operator, attester: attester.address });
  const gateway = (onRequest?: () => void): ChainGateway => {
    const network = createNetworkGateway('testnet', {
      clientOptions: onRequest ? { ...local, onRequest } : local,
      contracts: deployment.contracts,
      registryDeployBlock: deployment.registryDeployBlock,
      embedded: true,
    });
    return new ChainGateway({ mainnet: network, testnet: network });
  };
  return { network, chain, local, client, attester, deployment, operator, newWallet, gateway };
}

/** Submits a proof for `human` carrying `userDefinedData`, from a fresh funded relayer. */
async function proveForNewHuman(system: LocalSystem, human: Address, userDefinedData: string): Promise<void> {
  const proof = await prove({
    client: system.client,
    wallet: await system.newWallet(),
    attester: system.attester,
    request: {
      registry: system.deployment.contracts.registry,
      chainId: await system.client.getChainId(),
      scopeSeed: 'self-agent-id',
      userId: human,
      userDefinedData,
      disclosures: { minimumAge: 0, ofac: false },
    },
  });
  if (proof.status !== 'submitted') throw new Error(`registration reverted: ${proof.reason}`);
}

/** Registers a new Ed25519 agent (its key signs the challenge; a new human is its guardian) through the mock identity app. */
export async function registerEd25519Agent(system: LocalSystem): Promise<{ seed: Hex; publicKey: Hex; agentId: bigint }> {
  const registry = new RegistryGateway(system.client, system.deployment.contracts.registry);
  const seed = ed25519.utils.randomSecretKey();
  const publicKey = bytesToHex(ed25519.getPublicKey(seed));
  const human = privateKeyToAccount(generatePrivateKey()).address;
  const challenge = ed25519ChallengeHash({
    human,
    chainId: await system.client.getChainId(),
    registry: system.deployment.contracts.registry,
    nonce: await registry.ed25519Nonce(publicKey),
  });
  const userDefinedData = ed25519RegisterUserData({
    configIndex: 0,
    pubkey: publicKey,
    signature: ed25519.sign(hexToBytes(challenge), seed),
    extKpub: ed25519ExtKpub(publicKey),
    guardian: human,
  });
  await proveForNewHuman(system, human, userDefinedData);
  const agentId = await registry.agentIdOf(publicKey);
  if (agentId === 0n) throw new Error('the agent was not registered');
  return { seed: bytesToHex(seed), publicKey, agentId };
}

/** Registers a new agent (linked mode: an agent key bound to a new human) through the mock identity app. */
export async function registerLinkedAgent(system: LocalSystem): Promise<{ agent: PrivateKeyAccount; agentId: bigint }> {
  const registry = new RegistryGateway(system.client, system.deployment.contracts.registry);
  const agent = privateKeyToAccount(generatePrivateKey());
  const human = privateKeyToAccount(generatePrivateKey()).address;
  const userDefinedData = await linkedRegistrationData(agent, human, {
    chainId: await system.client.getChainId(),
    registry: system.deployment.contracts.registry,
    nonce: await registry.registrationNonce(agent.address),
    configIndex: 0,
  });
  await proveForNewHuman(system, human, userDefinedData);
  const agentId = await registry.agentIdOf(addressAgentKey(agent.address));
  if (agentId === 0n) throw new Error('the agent was not registered');
  return { agent, agentId };
}
