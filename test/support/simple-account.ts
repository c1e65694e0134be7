// The published SimpleAccount of @account-abstraction/contracts 0.7.0 (an ECDSA owner) as a viem smart account:
// the bundler serves any v0.7 account, not only our passkey account.
import { type Address, encodeFunctionData, getAddress, type Hex, type LocalAccount, parseAbi } from 'viem';
import { entryPoint07Abi, getUserOperationHash, type SmartAccount, toSmartAccount } from 'viem/account-abstraction';
import { accountAbstractionArtifact, ENTRY_POINT_V07 } from '../../src/chain/aa/entry-point.js';
import type { ChainClient, ChainWallet } from '../../src/chain/clients.js';

const simpleAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, uint256[] value, bytes[] func)',
]);
const factoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);

/** viem's stub for ECDSA accounts: well-formed, so validation reports a failed signature instead of reverting. */
const STUB_SIGNATURE: Hex =
  '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c';

/** The published SimpleAccountFactory v0.7, bound to the canonical EntryPoint (which must be there). */
export async function deploySimpleAccountFactory(client: ChainClient, wallet: ChainWallet): Promise<Address> {
  const { abi, bytecode } = accountAbstractionArtifact('SimpleAccountFactory');
  const args = [ENTRY_POINT_V07];
  const hash = await wallet.deployContract({ abi, bytecode, args, chain: wallet.chain, account: wallet.account });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`SimpleAccountFactory deployment failed (${hash})`);
  return getAddress(receipt.contractAddress);
}

export interface SimpleAccountOptions {
  client: ChainClient;
  factory: Address;
  owner: LocalAccount;
  /** Signs the operations (default: the owner); another key makes the account refuse them. */
  signer?: LocalAccount;
  salt?: bigint;
}

export function toSimpleAccount(options: SimpleAccountOptions): Promise<SmartAccount> {
  const { client, factory, owner, salt = 0n } = options;
  const signer = options.signer ?? owner;
  let address: Address | undefined;
  const getAddress = async (): Promise<Address> => {
    address ??= await client.readContract({ address: factory, abi: factoryAbi, functionName: 'getAddress', args: [owner.address, salt] });
    return address;
  };
  return toSmartAccount({
    client,
    entryPoint: { abi: entryPoint07Abi, address: ENTRY_POINT_V07, version: '0.7' },
    getAddress,
    async encodeCalls(calls) {
      const [only] = calls;
      if (calls.length === 1 && only) {
        return encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [only.to, only.value ?? 0n, only.data ?? '0x'] });
      }
      return encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'executeBatch',
        args: [calls.map((call) => call.to), calls.map((call) => call.value ?? 0n), calls.map((call) => call.data ?? '0x')],
      });
    },
    async getFactoryArgs() {
      return { factory, factoryData: encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner.address, salt] }) };
    },
    async getStubSignature() {
      return STUB_SIGNATURE;
    },
    async signMessage({ message }) {
      return signer.signMessage({ message });
    },
    async signTypedData(typedData) {
      return signer.signTypedData(typedData);
    },
    async signUserOperation({ chainId = client.chain.id, ...userOperation }) {
      const hash = getUserOperationHash({
        chainId,
        entryPointAddress: ENTRY_POINT_V07,
        entryPointVersion: '0.7',
        userOperation: { ...userOperation, sender: await getAddress() },
      });
      return signer.signMessage({ message: { raw: hash } });
    },
  });
}
