// What every benchmark starts from: a fresh in-memory local chain with our contracts, and funded wallets.
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type ChainClient, type ChainWallet, type ClientOptions, createChainClient, createChainWallet } from '../src/chain/clients.js';
import { ChainGateway, createNetworkGateway } from '../src/chain/gateway.js';
import { RegistryGateway } from '../src/chain/registry-gateway.js';
import { addressAgentKey } from '../src/core/agent-key.js';
import { linkedRegistrationData } from '../src/core/registration-data.js';
import { type Deployment, deployContracts } from '../src/devnet/deploy.js';
import { type DevChain, startDevChain } from '../src/devnet/devchain.js';
import { fund } from '../src/devnet/embedded.js';
import { prove } from '../src/identity-app/index.js';

export interface LocalSystem {
  chain: DevChain;
  /** Client options for the chain (fast polling: anvil mines at once). */
  local: ClientOptions;
  client: ChainClient;
  attester: PrivateKeyAccount;
  deployment: Deployment;
  newWallet(): Promise<ChainWallet>;
  /** The service's gateway over this chain, serving both networks; `onRequest` counts RPC round trips. */
  gateway(onRequest?: () => void): ChainGateway;
}

export async function startLocalSystem(chainId = 11142220): Promise<LocalSystem> {
  const network = chainId === 42220 ? 'mainnet' : 'testnet';
  const chain = await startDevChain({ chainId });
  const local: ClientOptions = { rpcUrl: chain.rpcUrl, pollingIntervalMs: 20 };
  const client = createChainClient(network, local);
  const newWallet = async (): Promise<ChainWallet> => {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund(client, account.address);
    return createChainWallet(network, account, local);
  };
  const attester = privateKeyToAccount(generatePrivateKey());
  const deployment = await deployContracts({ client, wallet: await newWallet(), attester: attester.address });
  const gateway = (onRequest?: () => void): ChainGateway => {
    const network = createNetworkGateway('testnet', {
      clientOptions: onRequest ? { ...local, onRequest } : local,
      contracts: deployment.contracts,
      registryDeployBlock: deployment.registryDeployBlock,
      embedded: true,
    });
    return new ChainGateway({ mainnet: network, testnet: network });
  };
  return { chain, local, client, attester, deployment, newWallet, gateway };
}

/** Registers a new agent (linked mode: an agent key bound to a new human) through the mock identity app. */
export async function registerLinkedAgent(system: LocalSystem): Promise<{ agent: PrivateKeyAccount; agentId: bigint }> {
  const { client, attester, deployment, newWallet } = system;
  const chainId = await client.getChainId();
  const registry = new RegistryGateway(client, deployment.contracts.registry);
  const agent = privateKeyToAccount(generatePrivateKey());
  const human = privateKeyToAccount(generatePrivateKey()).address;
  const userDefinedData = await linkedRegistrationData(agent, human, {
    chainId,
    registry: deployment.contracts.registry,
    nonce: await registry.registrationNonce(agent.address),
    configIndex: 0,
  });
  const proof = await prove({
    client,
    wallet: await newWallet(),
    attester,
    request: {
      registry: deployment.contracts.registry,
      chainId,
      scopeSeed: 'self-agent-id',
      userId: human,
      userDefinedData,
      disclosures: { minimumAge: 0, ofac: false },
    },
  });
  if (proof.status !== 'submitted') throw new Error(`registration reverted: ${proof.reason}`);
  const agentId = await registry.agentIdOf(addressAgentKey(agent.address));
  if (agentId === 0n) throw new Error('the agent was not registered');
  return { agent, agentId };
}
