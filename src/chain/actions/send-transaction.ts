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
  const hash = await wallet.writeContract({ ...call, chain: wallet.chain, account: wallet.account } as WriteContractParameters);
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new TransactionRevertedError(hash);
  return receipt;
}
