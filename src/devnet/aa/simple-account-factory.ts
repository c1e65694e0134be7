// The canonical SimpleAccountFactory v0.7 (eth-infinitism's reference ECDSA account, the default of viem's and
// permissionless' `toSimpleSmartAccount` for EntryPoint v0.7), deployed as on public chains: through the
// deterministic deployment proxy with a zero salt, the creation code being the published artifact of
// @account-abstraction/contracts@0.7.0 followed by the abi-encoded EntryPoint v0.7 address. The artifact is the
// build that was deployed (its metadata hash included), so this lands at the canonical address and a client that
// knows only that address finds the factory on our local chains too.
import { type Address, concat, encodeAbiParameters, getContractAddress, type Hex, isAddressEqual, parseAbi, zeroHash } from 'viem';
import type { ChainClient, ChainWallet } from '../../chain/clients.js';
import { accountAbstractionArtifact, DETERMINISTIC_DEPLOYER, deployDeterministic, ENTRY_POINT_V07 } from './entry-point.js';

export const SIMPLE_ACCOUNT_FACTORY_V07: Address = '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985';
/**
 * The SimpleAccount implementation every account of the factory proxies to (ERC-1967), what its
 * `accountImplementation()` returns: the factory's constructor creates it with CREATE, at the factory's first nonce.
 */
export const SIMPLE_ACCOUNT_V07: Address = getContractAddress({ opcode: 'CREATE', from: SIMPLE_ACCOUNT_FACTORY_V07, nonce: 1n });
/** The salt of the canonical deployment. */
export const SIMPLE_ACCOUNT_FACTORY_V07_SALT: Hex = zeroHash;

export const simpleAccountFactoryAbi = parseAbi([
  'function accountImplementation() view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);

/** The published artifact's bytecode with its constructor argument, the canonical EntryPoint v0.7. */
export function simpleAccountFactoryCreationCode(): Hex {
  const { bytecode } = accountAbstractionArtifact('SimpleAccountFactory');
  return concat([bytecode, encodeAbiParameters([{ type: 'address' }], [ENTRY_POINT_V07])]);
}

/** Where the deterministic deployment proxy puts `simpleAccountFactoryCreationCode()` with the canonical salt. */
export const simpleAccountFactoryCreate2Address = (): Address =>
  getContractAddress({
    opcode: 'CREATE2',
    from: DETERMINISTIC_DEPLOYER,
    salt: SIMPLE_ACCOUNT_FACTORY_V07_SALT,
    bytecode: simpleAccountFactoryCreationCode(),
  });

/** SimpleAccountFactory v0.7 at its canonical address (EntryPoint v0.7 must be there; already there: nothing sent). */
export async function deploySimpleAccountFactoryV07(client: ChainClient, wallet: ChainWallet): Promise<Address> {
  const address = await deployDeterministic(client, wallet, simpleAccountFactoryCreationCode(), SIMPLE_ACCOUNT_FACTORY_V07_SALT);
  if (!isAddressEqual(address, SIMPLE_ACCOUNT_FACTORY_V07)) {
    throw new Error(`SimpleAccountFactory artifact does not match the canonical v0.7 deployment (got ${address})`);
  }
  return address;
}
