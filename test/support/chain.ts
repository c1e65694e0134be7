// A freshly deployed contract set on the run's anvil, owned by an account of this test file alone.
import type { Hex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { inject } from 'vitest';
import { type ChainClient, type ChainWallet, createChainClient, createChainWallet } from '../../src/chain/clients.js';
import { createNetworkGateway, type NetworkGateway } from '../../src/chain/gateway.js';
import type { NetworkName } from '../../src/core/networks.js';
import { type Deployment, deployContracts } from '../../src/devnet/deploy.js';
import { fund } from '../../src/devnet/embedded.js';

/** A wallet whose account is a local one, so it can also sign as an agent key (agents.ts, the demo verifier). */
export type LocalChainWallet = ChainWallet & { account: PrivateKeyAccount };

export interface TestSystem {
  network: NetworkName;
  rpcUrl: string;
  client: ChainClient;
  /** Deployer, owner of the hub and holder of the registry's roles. */
  operator: ChainWallet;
  attester: PrivateKeyAccount;
  /** The attester's private key, for tools that load it from a file (the identity-app CLI's DATA_DIR). */
  attesterKey: Hex;
  deployment: Deployment;
  gateway: NetworkGateway;
  /** A new funded wallet on this chain. */
  newWallet(): Promise<LocalChainWallet>;
}

export const LOCAL = { timeoutMs: 5_000, pollingIntervalMs: 20 } as const;

/** A contract set on the run's anvil of `network`, or on the anvil at `rpcUrl` (a test that reorganises its chain). */
export async function deployTestSystem(network: NetworkName = 'testnet', rpcUrl: string = inject('rpc')[network]): Promise<TestSystem> {
  const client = createChainClient(network, { rpcUrl, ...LOCAL });
  const newWallet = async (): Promise<LocalChainWallet> => {
    const account = privateKeyToAccount(generatePrivateKey());
    await fund(client, account.address);
    // createChainWallet keeps the account it is given
    return createChainWallet(network, account, { rpcUrl, ...LOCAL }) as LocalChainWallet;
  };
  const operator = await newWallet();
  const attesterKey = generatePrivateKey();
  const attester = privateKeyToAccount(attesterKey);
  const deployment = await deployContracts({ client, wallet: operator, attester: attester.address });
  const gateway = createNetworkGateway(network, {
    clientOptions: { rpcUrl, ...LOCAL },
    contracts: deployment.contracts,
    registryDeployBlock: deployment.registryDeployBlock,
    embedded: true,
  });
  return { network, rpcUrl, client, operator, attester, attesterKey, deployment, gateway, newWallet };
}
