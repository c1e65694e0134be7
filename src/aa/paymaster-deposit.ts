// A paymaster's deposit on the EntryPoint: what sponsored operations are paid from.
import type { Address } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import type { ChainClient } from '../chain/clients.js';

export interface PaymasterOnChain {
  entryPoint: Address;
  paymaster: Address;
}

/** The paymaster's balance at the EntryPoint, in wei. */
export const readPaymasterDeposit = (client: ChainClient, { entryPoint, paymaster }: PaymasterOnChain): Promise<bigint> =>
  client.readContract({ address: entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [paymaster] });
