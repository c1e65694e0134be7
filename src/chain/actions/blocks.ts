// Block reads, viem-action style.
import type { ChainClient } from '../clients.js';

/** Unix time (seconds) of a block. */
export async function readBlockTimestamp(client: ChainClient, { blockNumber }: { blockNumber: bigint }): Promise<number> {
  const block = await client.getBlock({ blockNumber, includeTransactions: false });
  return Number(block.timestamp);
}
