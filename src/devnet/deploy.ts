// Deploys our contract set on a chain we run ourselves: the local identity hub, the registry (which
// registers its six verification configs on the hub), the proof provider, the Ed25519 verifier of the
// registry's "E" action, the two demo verifiers (EIP-712 and Ed25519) and a batch reader for multicall.
import { type Abi, type Address, getAddress, type Hex, keccak256 } from 'viem';
import type { ContractAddresses } from '../chain/celo-deployments.js';
import type { ChainClient, ChainWallet } from '../chain/clients.js';
import {
  agentDemoVerifierAbi,
  agentDemoVerifierBytecode,
  agentDemoVerifierEd25519Abi,
  agentDemoVerifierEd25519Bytecode,
  agentRegistryAbi,
  agentRegistryBytecode,
  batchReaderAbi,
  batchReaderBytecode,
  ed25519VerifierDeployerAbi,
  ed25519VerifierDeployerBytecode,
  humanProofProviderAbi,
  humanProofProviderBytecode,
  localIdentityHubAbi,
  localIdentityHubBytecode,
} from '../contracts/artifacts/index.js';

export interface Deployment {
  chainId: number;
  contracts: ContractAddresses;
  /** Block of the registry's deployment: where log scans start. */
  registryDeployBlock: bigint;
  /** Hash of the bytecode that was deployed, to notice when the contracts have changed since. */
  fingerprint: Hex;
}

/** Identifies the current build of our contracts. */
export const contractsFingerprint: Hex = keccak256(
  `0x${[
    localIdentityHubBytecode,
    agentRegistryBytecode,
    humanProofProviderBytecode,
    agentDemoVerifierBytecode,
    batchReaderBytecode,
    ed25519VerifierDeployerBytecode,
    agentDemoVerifierEd25519Bytecode,
  ]
    .map((code) => code.slice(2))
    .join('')}`,
);

async function deploy(
  client: ChainClient,
  wallet: ChainWallet,
  abi: Abi,
  bytecode: Hex,
  args: readonly unknown[],
): Promise<{ address: Address; blockNumber: bigint }> {
  const hash = await wallet.deployContract({ abi, bytecode, args });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deployment reverted (${hash})`);
  return { address: getAddress(receipt.contractAddress), blockNumber: receipt.blockNumber };
}

export interface DeployOptions {
  client: ChainClient;
  /** Deployer; becomes the hub's owner and holds the registry's roles. */
  wallet: ChainWallet;
  /** The document attester the local hub trusts. */
  attester: Address;
}

export async function deployContracts({ client, wallet, attester }: DeployOptions): Promise<Deployment> {
  const owner = wallet.account.address;
  const hub = await deploy(client, wallet, localIdentityHubAbi, localIdentityHubBytecode, [attester]);
  const registry = await deploy(client, wallet, agentRegistryAbi, agentRegistryBytecode, [hub.address, owner]);
  const scope = await client.readContract({ address: registry.address, abi: agentRegistryAbi, functionName: 'scope' });
  const provider = await deploy(client, wallet, humanProofProviderAbi, humanProofProviderBytecode, [hub.address, scope]);
  const setProvider = await wallet.writeContract({
    address: registry.address,
    abi: agentRegistryAbi,
    functionName: 'setSelfProofProvider',
    args: [provider.address],
  });
  // Ed25519VerifierDeployer's creation code leaves an Ed25519Verifier (with its fixed-base tables) at its address
  const ed25519Verifier = await deploy(client, wallet, ed25519VerifierDeployerAbi, ed25519VerifierDeployerBytecode, []);
  const setVerifier = await wallet.writeContract({
    address: registry.address,
    abi: agentRegistryAbi,
    functionName: 'setEd25519Verifier',
    args: [ed25519Verifier.address],
  });
  const demo = await deploy(client, wallet, agentDemoVerifierAbi, agentDemoVerifierBytecode, [registry.address]);
  const demoEd25519 = await deploy(client, wallet, agentDemoVerifierEd25519Abi, agentDemoVerifierEd25519Bytecode, [
    registry.address,
    ed25519Verifier.address,
  ]);
  const multicall = await deploy(client, wallet, batchReaderAbi, batchReaderBytecode, []);
  for (const [hash, name] of [
    [setProvider, 'setSelfProofProvider'],
    [setVerifier, 'setEd25519Verifier'],
  ] as const) {
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${name} reverted`);
  }

  return {
    chainId: await client.getChainId(),
    contracts: {
      registry: registry.address,
      proofProvider: provider.address,
      hub: hub.address,
      demoVerifier: demo.address,
      demoVerifierEd25519: demoEd25519.address,
      multicall: multicall.address,
    },
    registryDeployBlock: registry.blockNumber,
    fingerprint: contractsFingerprint,
  };
}
