// The ERC-4337 stack of a chain we run ourselves: EntryPoint v0.7 and SimpleAccountFactory v0.7 at their canonical
// addresses, the passkey account factory and the sponsor paymaster, all through the deterministic deployment proxy.
// Their addresses follow from the bytecode (and the paymaster's owner and signer), so they are the same on both
// local chains and after a restart, and a start only sends what is missing: no record to keep, and a changed
// contract lands at a new address by itself.
import { type Address, encodeAbiParameters, getContractAddress, type Hex, keccak256, parseEther, stringToHex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { DEFAULT_MINIMUM_DEPOSIT, readPaymasterDeposit } from '../../aa/paymaster-deposit.js';
import type { ChainClient, ChainWallet } from '../../chain/clients.js';
import { passkeyAccountFactoryBytecode, sponsorPaymasterBytecode } from '../../contracts/artifacts/index.js';
import { DETERMINISTIC_DEPLOYER, deployDeterministic, deployEntryPointV07, ENTRY_POINT_V07 } from './entry-point.js';
import { deploySimpleAccountFactoryV07, SIMPLE_ACCOUNT_FACTORY_V07, SIMPLE_ACCOUNT_V07 } from './simple-account-factory.js';

export interface AccountAbstractionAddresses {
  entryPoint: Address;
  /** PasskeyAccountFactory: the smartwallet mode's passkey accounts. */
  accountFactory: Address;
  paymaster: Address;
  /** The canonical SimpleAccountFactory v0.7: what standard ERC-4337 clients (viem, permissionless) look for. */
  simpleAccountFactory: Address;
  /** The SimpleAccount implementation its accounts proxy to (its `accountImplementation()`). */
  simpleAccountImplementation: Address;
}

export interface DeployAccountAbstractionOptions {
  client: ChainClient;
  /** Sends the deployments and the deposit. */
  wallet: ChainWallet;
  /** The key that approves sponsored UserOperations (held by the service). */
  paymasterSigner: Address;
  /** The paymaster's owner (signer changes, withdrawals, stake); default: the wallet's account. */
  paymasterOwner?: Address;
  /** The paymaster's deposit on the EntryPoint is brought back to this… */
  deposit?: bigint;
  /** …whenever it is below this. */
  minimumDeposit?: bigint;
}

const FACTORY_SALT: Hex = keccak256(stringToHex('agent-identity-registry:PasskeyAccountFactory'));
const PAYMASTER_SALT: Hex = keccak256(stringToHex('agent-identity-registry:SponsorPaymaster'));
const DEFAULT_DEPOSIT = parseEther('100');

const deterministicAddress = (bytecode: Hex, salt: Hex): Address =>
  getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER, salt, bytecode });

/** The paymaster's creation code: its constructor arguments are part of it, hence of its address. */
function paymasterCreationCode(owner: Address, signer: Address): Hex {
  return `${sponsorPaymasterBytecode}${encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [owner, signer]).slice(2)}`;
}

/** The addresses deployAccountAbstraction uses, without touching a chain. */
export function accountAbstractionAddresses(paymasterOwner: Address, paymasterSigner: Address): AccountAbstractionAddresses {
  return {
    entryPoint: ENTRY_POINT_V07,
    accountFactory: deterministicAddress(passkeyAccountFactoryBytecode, FACTORY_SALT),
    paymaster: deterministicAddress(paymasterCreationCode(paymasterOwner, paymasterSigner), PAYMASTER_SALT),
    simpleAccountFactory: SIMPLE_ACCOUNT_FACTORY_V07,
    simpleAccountImplementation: SIMPLE_ACCOUNT_V07,
  };
}

const hasCode = async (client: ChainClient, address: Address): Promise<boolean> => {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
};

/** Runs a deployment; when another sender deployed the same code first (parallel starts, tests), that one counts. */
async function deployOnce(client: ChainClient, address: Address, deploy: () => Promise<unknown>): Promise<void> {
  try {
    await deploy();
  } catch (error) {
    if (!(await hasCode(client, address))) throw error;
  }
}

/**
 * Deploys what is missing of EntryPoint v0.7, SimpleAccountFactory v0.7, PasskeyAccountFactory and SponsorPaymaster,
 * and tops the paymaster's EntryPoint deposit up to `deposit` when it is under `minimumDeposit`. Safe to call on
 * every start.
 */
export async function deployAccountAbstraction(options: DeployAccountAbstractionOptions): Promise<AccountAbstractionAddresses> {
  const { client, wallet, paymasterSigner } = options;
  const owner = options.paymasterOwner ?? wallet.account.address;
  const target = options.deposit ?? DEFAULT_DEPOSIT;
  const minimum = options.minimumDeposit ?? DEFAULT_MINIMUM_DEPOSIT;
  const addresses = accountAbstractionAddresses(owner, paymasterSigner);
  const { entryPoint, accountFactory, paymaster, simpleAccountFactory } = addresses;

  // one round trip on a restart: the four codes and the deposit, batched
  const [entryPointThere, simpleFactoryThere, factoryThere, paymasterThere, balance] = await Promise.all([
    hasCode(client, entryPoint),
    hasCode(client, simpleAccountFactory),
    hasCode(client, accountFactory),
    hasCode(client, paymaster),
    readPaymasterDeposit(client, { entryPoint, paymaster }).catch(() => 0n),
  ]);
  // one sender: the deployments go one after the other
  if (!entryPointThere) await deployOnce(client, entryPoint, () => deployEntryPointV07(client, wallet));
  if (!simpleFactoryThere) await deployOnce(client, simpleAccountFactory, () => deploySimpleAccountFactoryV07(client, wallet));
  if (!factoryThere) {
    await deployOnce(client, accountFactory, () => deployDeterministic(client, wallet, passkeyAccountFactoryBytecode, FACTORY_SALT));
  }
  if (!paymasterThere) {
    const creationCode = paymasterCreationCode(owner, paymasterSigner);
    await deployOnce(client, paymaster, () => deployDeterministic(client, wallet, creationCode, PAYMASTER_SALT));
  }
  if (balance < minimum && target > balance) {
    const hash = await wallet.writeContract({
      address: entryPoint,
      abi: entryPoint07Abi,
      functionName: 'depositTo',
      args: [paymaster],
      value: target - balance,
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`the paymaster's EntryPoint deposit reverted (${hash})`);
  }
  return addresses;
}
