// What one transaction did at the registry, and the reads sessions need to follow the human's proof on chain.
// viem-style actions: (client, params) => typed result. A transaction that is not mined yet, or that the node
// does not know, reads as `undefined`, never as an error: a session asks again at its next status read. A node
// that does not answer is an error, though: "unknown to the chain" must not be concluded from an outage.
import { type Address, decodeFunctionData, type Hex, isAddressEqual, parseEventLogs, size, slice, TransactionReceiptNotFoundError } from 'viem';
import { agentRegistryAbi } from '../../contracts/artifacts/index.js';
import type { ChainClient } from '../clients.js';

export interface RegistryTransaction {
  hash: Hex;
  status: 'success' | 'reverted';
  /** Agents minted by this transaction (the registry's Registered events). */
  registered: bigint[];
  /** Agents whose proof this transaction refreshed (HumanProofRefreshed). */
  refreshed: bigint[];
  /** Nullifiers this transaction identified (NullifierIdentified). */
  identified: bigint[];
}

export interface TransactionParams {
  registry: Address;
  hash: Hex;
}

/** The registry's events of a mined transaction (other contracts' logs are left out); undefined while not mined. */
export async function readRegistryTransaction(client: ChainClient, { registry, hash }: TransactionParams): Promise<RegistryTransaction | undefined> {
  const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  });
  if (!receipt) return undefined;
  const logs = receipt.logs.filter((log) => isAddressEqual(log.address, registry));
  const events = parseEventLogs({ abi: agentRegistryAbi, logs });
  const registered: bigint[] = [];
  const refreshed: bigint[] = [];
  const identified: bigint[] = [];
  for (const event of events) {
    if (event.eventName === 'Registered') registered.push(event.args.agentId);
    else if (event.eventName === 'HumanProofRefreshed') refreshed.push(event.args.agentId);
    else if (event.eventName === 'NullifierIdentified') identified.push(event.args.nullifier);
  }
  return { hash, status: receipt.status, registered, refreshed, identified };
}

/** What a transaction submitted: a proof to the registry (whom it is for, what it asks), or something else. */
export type ProofSubmission = { kind: 'proof'; userIdentifier: bigint; userDefinedData: Hex } | { kind: 'not-to-registry' } | { kind: 'not-a-proof' };

/** Reads a transaction's call: verifySelfProof(proofPayload, userContextData) sent to the registry? */
export async function readProofSubmission(client: ChainClient, { registry, hash }: TransactionParams): Promise<ProofSubmission> {
  const transaction = await client.getTransaction({ hash });
  if (!transaction.to || !isAddressEqual(transaction.to, registry)) return { kind: 'not-to-registry' };
  try {
    const call = decodeFunctionData({ abi: agentRegistryAbi, data: transaction.input });
    if (call.functionName !== 'verifySelfProof') return { kind: 'not-a-proof' };
    const [, userContextData] = call.args as readonly [Hex, Hex];
    // userContextData = destChainId (32 bytes) || userIdentifier (32 bytes) || userDefinedData
    return {
      kind: 'proof',
      userIdentifier: BigInt(slice(userContextData, 32, 64)),
      userDefinedData: size(userContextData) > 64 ? slice(userContextData, 64) : '0x',
    };
  } catch {
    return { kind: 'not-a-proof' };
  }
}

/**
 * The transaction that minted `agentId`, from the registry's Registered logs of the one block it was registered in:
 * a range of one block, which every provider serves (a search from the deploy block is refused by many).
 */
export async function findRegistrationTransaction(
  client: ChainClient,
  { registry, agentId, block }: { registry: Address; agentId: bigint; block: bigint },
): Promise<Hex | undefined> {
  const events = await client.getContractEvents({
    address: registry,
    abi: agentRegistryAbi,
    eventName: 'Registered',
    args: { agentId },
    fromBlock: block,
    toBlock: block,
  });
  return events[0]?.transactionHash ?? undefined;
}

/** proofExpiresAt(agentId): unix seconds, 0 without a proof. */
export function readProofExpiry(client: ChainClient, { registry, agentId }: { registry: Address; agentId: bigint }): Promise<bigint> {
  return client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'proofExpiresAt', args: [agentId] });
}
