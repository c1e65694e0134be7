// The identity app's success report is a hint, not a fact: whoever holds a session's callback token can post any
// txHash. Before the service believes it, the chain must show that transaction mined, sent to the session's
// registry, carrying this session's proof (the userIdentifier and userDefinedData of its deep link, which the hub
// binds the proof to), and successful. A hash the chain does not know is given a bounded time (mempool, RPC
// latency), then the session fails saying so. Whatever the report said, the registry's own state still completes
// a session (each kind's syncWithChain looks at it first).
import type { Hex } from 'viem';
import type { RegistryTransaction } from '../chain/actions/registry-transactions.js';
import type { NetworkGateway } from '../chain/gateway.js';
import { userDefinedDataBytes } from '../core/user-data.js';

/** How long a reported transaction may stay unknown to the chain: a local chain mines at once; Celo gets longer. */
export const REPORTED_TX_TIMEOUT_MS = { embedded: 60_000, external: 300_000 } as const;

/** What the chain says of a reported transaction. */
export type ReportedTransaction =
  /** Not mined, or not known at all: perhaps still in a mempool. */
  | { verdict: 'unknown' }
  | { verdict: 'reverted' }
  /** Mined, but not this session's proof: the reason says why. */
  | { verdict: 'foreign'; reason: string }
  /** This session's proof, mined and successful: what it did at the registry. */
  | { verdict: 'confirmed'; transaction: RegistryTransaction };

/** Whom the session's proof is for and what it asks: what the deep link told the identity app. */
export interface ProofRequest {
  userId: Hex;
  userDefinedData: string;
}

export async function checkReportedTransaction(gateway: NetworkGateway, hash: Hex, request: ProofRequest): Promise<ReportedTransaction> {
  const transaction = await gateway.registry.transaction(hash);
  if (!transaction) return { verdict: 'unknown' };
  if (transaction.status === 'reverted') return { verdict: 'reverted' };
  const submission = await gateway.registry.proofSubmission(hash);
  if (submission.kind === 'not-to-registry') return { verdict: 'foreign', reason: `Transaction ${hash} is not a proof submitted to the registry` };
  if (submission.kind === 'not-a-proof') return { verdict: 'foreign', reason: `Transaction ${hash} is not a verifySelfProof call` };
  const sameUser = submission.userIdentifier === BigInt(request.userId);
  const sameRequest = submission.userDefinedData.toLowerCase() === userDefinedDataBytes(request.userDefinedData).toLowerCase();
  if (!sameUser || !sameRequest) return { verdict: 'foreign', reason: `Transaction ${hash} carries another session's proof` };
  return { verdict: 'confirmed', transaction };
}

/** The failure reason of a report the chain never confirmed. */
export const neverConfirmed = (hash: Hex, waitedMs: number): string =>
  `The identity app reported transaction ${hash} but the chain never confirmed it (waited ${Math.round(waitedMs / 1000)} s)`;
