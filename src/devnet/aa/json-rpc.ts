// What the bundler and paymaster services have in common: a table of JSON-RPC methods, and the one error type
// their methods throw, carrying the code wallets act on (ERC-7769 for the bundler; viem maps these codes and the
// EntryPoint's "AAxx" reasons to its own error classes).
import { BaseError } from 'viem';
import type { Sponsoree } from '../../aa/sponsoree-header.js';
import type { ChainClient } from '../../chain/clients.js';

export const RpcErrorCode = {
  invalidParams: -32602,
  methodNotFound: -32601,
  internal: -32603,
  /** Refused by the EntryPoint's validation: account creation or the account's validateUserOp (AA1x, AA2x). */
  validation: -32500,
  /** Refused by the paymaster's validatePaymasterUserOp (AA3x). */
  paymasterValidation: -32501,
  /** The account or the paymaster returned a time range that has passed, is about to, or has not begun. */
  outOfTimeRange: -32503,
  /** The account asked for a signature aggregator; this bundler supports none. */
  unsupportedAggregator: -32506,
  /** The account's (AA24) or the paymaster's (AA34) signature check failed. */
  signature: -32507,
  /** The operation's call reverts (gas estimation). */
  executionReverted: -32521,
  /** The paymaster's sponsorship policy refuses the operation (the message says which rule). */
  sponsorshipRefused: -32001,
} as const;

export class AaRpcError extends BaseError {
  override name = 'AaRpcError';

  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const invalidParams = (message: string): AaRpcError => new AaRpcError(RpcErrorCode.invalidParams, message);

/** What the HTTP side knows of a request beyond its body. */
export interface RpcContext {
  /** Who the proxy says asks (its MACed header); absent for a direct caller. */
  sponsoree?: Sponsoree;
}

/** A method of a service: its positional params, its result (JSON-ready: hex strings, no bigint). */
export type RpcMethod = (params: readonly unknown[], context?: RpcContext) => Promise<unknown>;

export interface RpcService {
  readonly methods: Readonly<Record<string, RpcMethod>>;
}

/** The JSON-RPC error object for anything a method threw: ours as is, anything else as an internal error. */
export function toJsonRpcError(error: unknown): { code: number; message: string; data?: Record<string, unknown> } {
  if (error instanceof AaRpcError) return { code: error.code, message: error.shortMessage, ...(error.data ? { data: error.data } : {}) };
  const message = error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.message : String(error);
  return { code: RpcErrorCode.internal, message: `Internal error: ${message}` };
}

/**
 * The chain's own id, asked once (again after a failure): operation hashes and paymaster approvals must use what
 * the EntryPoint computes with, whatever the client was configured with.
 */
export function chainIdOnce(client: ChainClient): () => Promise<number> {
  let chainId: Promise<number> | undefined;
  return () => {
    chainId ??= client.getChainId().catch((error: unknown) => {
      chainId = undefined;
      throw error;
    });
    return chainId;
  };
}
