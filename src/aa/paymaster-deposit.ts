// A paymaster's deposit on the EntryPoint: what sponsored operations are paid from.
import { type Address, parseEther } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import type { ChainClient } from '../chain/clients.js';

/**
 * Below this a paymaster's deposit counts as low (AA_PAYMASTER_LOW_DEPOSIT's default), and the local paymaster's is
 * topped up again at start.
 */
export const DEFAULT_MINIMUM_DEPOSIT = parseEther('10');

export interface PaymasterOnChain {
  entryPoint: Address;
  paymaster: Address;
}

/** The paymaster's balance at the EntryPoint, in wei. */
export const readPaymasterDeposit = (client: ChainClient, { entryPoint, paymaster }: PaymasterOnChain): Promise<bigint> =>
  client.readContract({ address: entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [paymaster] });
