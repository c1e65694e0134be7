// What changes cached answers without a request of the service: a proof provider of its own changing its name or
// strength (no registry event says so), and a chain reorganisation (anvil_reorg). For tests of the caches' invalidation.
import { type Abi, type Address, encodeFunctionData, getAddress, type Hex, pad, toHex } from 'viem';
import { expect } from 'vitest';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import type { LocalChainWallet, TestSystem } from './chain.js';
import { compileTestContract } from './queries.js';
import { mined, registryAs, registryOf } from './registry.js';

/** An approved-provider contract whose owner can rename it and change its strength (accepts any proof). */
export function mutableProviderArtifact(): { abi: Abi; bytecode: Hex } {
  return compileTestContract(
    'MutableProofProvider',
    `contract MutableProofProvider {
    address private immutable owner = msg.sender;
    string public providerName;
    uint8 public verificationStrength;
    constructor(string memory name_, uint8 strength_) { providerName = name_; verificationStrength = strength_; }
    function setProviderName(string calldata name_) external { require(msg.sender == owner); providerName = name_; }
    function setVerificationStrength(uint8 strength_) external { require(msg.sender == owner); verificationStrength = strength_; }
    function verifyHumanProof(bytes calldata proof, bytes calldata) external pure returns (bool, uint256) {
        return (true, uint256(keccak256(proof)));
    }
}`,
  );
}

/** A mutable provider deployed by the operator and approved by the registry. */
export async function deployMutableProvider(system: TestSystem, name: string, strength: number): Promise<{ address: Address; abi: Abi }> {
  const artifact = mutableProviderArtifact();
  const deployed = await mined(system, system.operator.deployContract({ ...artifact, args: [name, strength] }));
  const address = getAddress(deployed.contractAddress!);
  await mined(system, registryAs(system, system.operator).write.addProofProvider([address]));
  return { address, abi: artifact.abi };
}

/** registerWithHumanProof calldata with `provider`: `proof` decides the nullifier (the provider hashes it). */
export const providerRegistration = (provider: Address, proof: string, agentKey: Hex): Hex =>
  encodeFunctionData({ abi: agentRegistryAbi, functionName: 'registerWithHumanProof', args: ['', provider, toHex(proof), agentKey] });

/** A new wallet registers its own agent with `provider`; its id and the block it was registered in. */
export async function registerWithProvider(
  system: TestSystem,
  provider: Address,
  proof: string,
): Promise<{ wallet: LocalChainWallet; agentId: bigint; blockNumber: bigint }> {
  const wallet = await system.newWallet();
  const agentKey = pad(wallet.account.address);
  const receipt = await mined(
    system,
    wallet.sendTransaction({ to: system.deployment.contracts.registry, data: providerRegistration(provider, proof, agentKey) }),
  );
  return { wallet, agentId: await registryOf(system).read.getAgentId([agentKey]), blockNumber: receipt.blockNumber };
}

/** The chain drops its last blocks down to `fromBlock` (included) and mines as many new ones, with `replay` in the first. */
export async function reorgFrom(system: TestSystem, fromBlock: bigint, replay: Hex[] = []): Promise<void> {
  const head = await system.client.getBlockNumber({ cacheTime: 0 });
  const depth = Number(head - fromBlock + 1n);
  await system.client.request({
    method: 'anvil_reorg',
    params: [depth, replay.map((raw) => [raw, 0])],
  } as never);
  expect(await system.client.getBlockNumber({ cacheTime: 0 })).toBe(head);
}
