// Sending a contract call and waiting for it to be mined, viem-action style, with a typed error for the one
// outcome callers handle differently: a transaction that was mined but reverted.
import {
  type Abi,
  BaseError,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type TransactionReceipt,
  type WriteContractParameters,
} from 'viem';
import type { ChainClient, ChainWallet } from '../clients.js';

export class TransactionRevertedError extends BaseError {
  override name = 'TransactionRevertedError';

  constructor(readonly hash: Hex) {
    super(`Transaction ${hash} was mined but reverted`);
  }
}

const GAS_HEADROOM_DIVISOR = 5n;

/** Sends `call` from the wallet's account and resolves with the receipt once mined; throws TransactionRevertedError if it reverted. */
export async function sendAndWait<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
  args extends ContractFunctionArgs<abi, 'nonpayable' | 'payable', functionName>,
>(
  client: ChainClient,
  wallet: ChainWallet,
  call: Omit<WriteContractParameters<abi, functionName, args>, 'chain' | 'account'>,
): Promise<TransactionReceipt> {
  const request = { ...call, chain: wallet.chain, account: wallet.account } as WriteContractParameters;
  // The estimate is the least gas that succeeded in the pending block; the mined block differs (timestamp,
  // other transactions), so a bare estimate can run out of gas. A fifth more is what relayers commonly add.
  const estimate = await client.estimateContractGas(request as Parameters<ChainClient['estimateContractGas']>[0]);
  const hash = await wallet.writeContract({ ...request, gas: estimate + estimate / GAS_HEADROOM_DIVISOR } as WriteContractParameters);
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new TransactionRevertedError(hash);
  return receipt;
}
