// Plays the human on a test network: builds the mock-document disclosure, has it attested, and submits it
// through the registry's verifySelfProof exactly as Self's relayer does on Celo (never a direct hub call).
import { type Address, BaseError, ContractFunctionRevertedError, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import { sendAndWait, TransactionRevertedError } from '../chain/actions/send-transaction.js';
import type { ChainClient, ChainWallet } from '../chain/clients.js';
import { agentRegistryAbi, localIdentityHubAbi } from '../contracts/artifacts/index.js';
import { attestDisclosure, proofPayload, userContextData } from './attestation.js';
import { buildDisclosureOutput, type GenericDiscloseOutputV2 } from './disclosure-output.js';
import { attestationIdOf, type MockDocument, mockDocumentFor } from './document.js';
import type { ProofRequest } from './request.js';

/** The registry's functions plus the hub's errors, so reverts from either decode by name. */
export const verifySelfProofAbi = [...agentRegistryAbi, ...localIdentityHubAbi.filter((item) => item.type === 'error')] as const;

export interface ProveOptions {
  client: ChainClient;
  /** A funded account that sends the transaction (the relayer's role). */
  wallet: ChainWallet;
  /** The document attester the hub trusts. */
  attester: LocalAccount;
  request: ProofRequest;
  /** The document the human "scans"; default: a mock passport of its own for the request's userId. */
  document?: MockDocument;
  /** The hub the attestation is for; default: the registry's hubV2(). */
  hub?: Address;
  /** The proof's current date; default: the latest block's timestamp (so chains with shifted time work). */
  now?: Date;
  /**
   * Replaces the disclosure before the attester signs it; default: none, the app submits what the document
   * reveals. For tests that play a dishonest (or buggy) app, e.g. an expiryDate in a format the app never
   * emits: the hub accepts whatever the trusted attester signed, so the registry must cope with it. The
   * result's nullifier is the one of the returned disclosure.
   */
  disclose?: (output: GenericDiscloseOutputV2) => GenericDiscloseOutputV2;
}

export interface RevertInfo {
  name: string;
  args: readonly unknown[];
}

export type ProveResult =
  | { status: 'submitted'; txHash: Hex; blockNumber: bigint; nullifier: bigint; attestationId: Hex }
  | { status: 'reverted'; reason: string; error: RevertInfo; txHash?: Hex };

function formatArg(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The custom error (name and args) behind a failed call, or the error's short message when it has none. */
export function decodeRevert(error: unknown): RevertInfo {
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) {
      if (reverted.data) return { name: reverted.data.errorName, args: reverted.data.args ?? [] };
      if (reverted.signature) return { name: reverted.signature, args: [] };
      return { name: reverted.reason ?? 'unknown revert', args: [] };
    }
    return { name: error.shortMessage, args: [] };
  }
  return { name: error instanceof Error ? error.message : String(error), args: [] };
}

const describeRevert = (info: RevertInfo): string => `${info.name}(${info.args.map(formatArg).join(', ')})`;

/** What a proof is attested for: the chain, the registry's scope and hub, and the proof's date. */
export interface ProofContext {
  chainId: number;
  scope: bigint;
  hub: Address;
  now: Date;
}

/** The registry's scope and hub and the chain's time, read once; many proofs may share them. */
export async function proofContext(client: ChainClient, registry: Address, options: Pick<ProveOptions, 'hub' | 'now'> = {}): Promise<ProofContext> {
  const [chainId, scope, hub, now] = await Promise.all([
    client.getChainId(),
    client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'scope' }),
    options.hub ?? client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'hubV2' }),
    options.now ?? client.getBlock().then((block) => new Date(Number(block.timestamp) * 1000)),
  ]);
  return { chainId, scope, hub, now };
}

/** The arguments of verifySelfProof for one request, attested as the app would: no chain access. */
export async function attestedProof(
  options: Pick<ProveOptions, 'attester' | 'request' | 'document' | 'disclose'>,
  { chainId, scope, hub, now }: ProofContext,
): Promise<{ args: readonly [Hex, Hex]; nullifier: bigint; attestationId: Hex }> {
  const { attester, request } = options;
  const document = options.document ?? mockDocumentFor(request.userId);
  const attestationId = attestationIdOf(document.documentType);
  const context = userContextData({
    destChainId: request.chainId,
    userId: request.userId,
    userDefinedData: request.userDefinedData,
  });
  const built = buildDisclosureOutput({
    document,
    requested: request.disclosures,
    scope,
    userIdentifier: BigInt(request.userId),
    now,
  });
  const output = options.disclose ? options.disclose(built) : built;
  const proof = await attestDisclosure(attester, {
    hub,
    chainId, // the attester signs for the hub on the chain it runs on; destChainId is the request's
    scope,
    attestationId,
    userContextData: context,
    output,
    mockDocument: document.mock ?? true,
    currentDate: BigInt(Math.floor(now.getTime() / 1000)),
  });
  return { args: [proofPayload(attestationId, proof), context] as const, nullifier: output.nullifier, attestationId };
}

export async function prove(options: ProveOptions): Promise<ProveResult> {
  const { client, wallet, request } = options;
  const registry = request.registry;
  const { args, nullifier, attestationId } = await attestedProof(options, await proofContext(client, registry, options));

  const call = {
    address: registry,
    abi: verifySelfProofAbi,
    functionName: 'verifySelfProof',
    args,
    account: wallet.account,
  } as const;
  try {
    await client.simulateContract(call);
  } catch (error) {
    const info = decodeRevert(error);
    return { status: 'reverted', reason: describeRevert(info), error: info };
  }
  let receipt: TransactionReceipt;
  try {
    receipt = await sendAndWait(client, wallet, { address: call.address, abi: call.abi, functionName: call.functionName, args: call.args });
  } catch (error) {
    if (!(error instanceof TransactionRevertedError)) throw error;
    // Simulated fine but reverted when mined (the state moved in between): replay to name the error.
    const info = await client.simulateContract(call).then((): RevertInfo => ({ name: 'transaction reverted', args: [] }), decodeRevert);
    return { status: 'reverted', reason: describeRevert(info), error: info, txHash: error.hash };
  }
  return { status: 'submitted', txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, nullifier, attestationId };
}
