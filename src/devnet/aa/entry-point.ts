// ERC-4337 EntryPoint v0.7 at its canonical address, deployed from the published artifacts of
// @account-abstraction/contracts@0.7.0 through the deterministic deployment proxy (present on anvil), with the
// salt of the canonical deployment: the same creation code and salt give the same address on every chain.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Abi, type Address, concat, getContractAddress, type Hex, isAddressEqual } from 'viem';
import type { ChainClient, ChainWallet } from '../../chain/clients.js';

export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
/** Arachnid's deterministic deployment proxy: calldata = salt ‖ creation code, deploys with CREATE2. */
export const DETERMINISTIC_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
/** The salt the canonical v0.7 EntryPoint was deployed with. */
const ENTRY_POINT_V07_SALT: Hex = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';

interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

const require = createRequire(import.meta.url);

/** A Hardhat artifact of the published ERC-4337 contracts package, e.g. 'EntryPoint' or 'EntryPointSimulations'. */
export function accountAbstractionArtifact(name: string): Artifact {
  const path = require.resolve(`@account-abstraction/contracts/artifacts/${name}.json`);
  const { abi, bytecode } = JSON.parse(readFileSync(path, 'utf8')) as Artifact;
  return { abi, bytecode };
}

/** Deploys `bytecode` with CREATE2 through the deterministic deployer unless code is already there; returns the address. */
export async function deployDeterministic(client: ChainClient, wallet: ChainWallet, bytecode: Hex, salt: Hex): Promise<Address> {
  const address = getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER, salt, bytecode });
  const existing = await client.getCode({ address });
  if (existing && existing !== '0x') return address;
  const proxyCode = await client.getCode({ address: DETERMINISTIC_DEPLOYER });
  if (!proxyCode || proxyCode === '0x') throw new Error(`the deterministic deployment proxy ${DETERMINISTIC_DEPLOYER} is not on this chain`);
  const hash = await wallet.sendTransaction({
    to: DETERMINISTIC_DEPLOYER,
    data: concat([salt, bytecode]),
    chain: wallet.chain,
    account: wallet.account,
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const code = await client.getCode({ address });
  if (receipt.status !== 'success' || !code || code === '0x') throw new Error(`deterministic deployment to ${address} failed (${hash})`);
  return address;
}

/** EntryPoint v0.7 at 0x0000000071727De22E5E9d8BAf0edAc6f37da032 (already there: nothing sent). */
export async function deployEntryPointV07(client: ChainClient, wallet: ChainWallet): Promise<Address> {
  const address = await deployDeterministic(client, wallet, accountAbstractionArtifact('EntryPoint').bytecode, ENTRY_POINT_V07_SALT);
  if (!isAddressEqual(address, ENTRY_POINT_V07)) throw new Error(`EntryPoint artifact does not match the canonical v0.7 deployment (got ${address})`);
  return address;
}
