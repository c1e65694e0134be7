// What the proxy forwards: one JSON-RPC 2.0 request whose method is on its route's allow-list (the interface's
// lists: an ERC-7769 bundler's user-operation methods, an ERC-7677 paymaster's), validated with zod. The OpenAPI
// document shows these same schemas.
import type { JSONRPCVersionTwoRequest } from 'jayson';
import { z } from 'zod';
import { badRequest } from '../core/errors.js';
import { findDuplicateKey } from './json-duplicate-keys.js';

export const BUNDLER_METHODS = [
  'eth_chainId',
  'eth_supportedEntryPoints',
  'eth_estimateUserOperationGas',
  'eth_sendUserOperation',
  'eth_getUserOperationReceipt',
  'eth_getUserOperationByHash',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
] as const;

export const PAYMASTER_METHODS = ['pm_sponsorUserOperation', 'pm_getPaymasterData', 'pm_getPaymasterStubData', 'eth_chainId'] as const;

/** A method name shown back in a refusal, cut short: it is the caller's text. */
const shown = (value: string): string => (value.length > 100 ? `${value.slice(0, 100)}…` : value);

const jsonRpcRequestSchema = <const M extends readonly [string, ...string[]]>(methods: M) =>
  z.object({
    jsonrpc: z.literal('2.0', { error: 'Invalid JSON-RPC request: jsonrpc must be "2.0"' }),
    method: z.enum(methods, {
      error: (issue) =>
        typeof issue.input === 'string'
          ? `Method not allowed: ${shown(issue.input)} (allowed: ${methods.join(', ')})`
          : 'Invalid JSON-RPC request: method must be a string',
    }),
    params: z.array(z.unknown(), { error: 'Invalid params: params must be an array' }).optional(),
    id: z.union([z.string(), z.number(), z.null()], { error: 'Invalid JSON-RPC request: id must be a string, a number or null' }),
  });

export const bundlerRequestSchema = jsonRpcRequestSchema(BUNDLER_METHODS).meta({
  id: 'BundlerRequest',
  description: 'One JSON-RPC 2.0 request (no batch) to an ERC-4337 bundler, with a method of this list',
});
export const paymasterRequestSchema = jsonRpcRequestSchema(PAYMASTER_METHODS).meta({
  id: 'PaymasterRequest',
  description: 'One JSON-RPC 2.0 request (no batch) to an ERC-7677 paymaster, with a method of this list',
});

export type JsonRpcRequestSchema = typeof bundlerRequestSchema | typeof paymasterRequestSchema;

/** The body text as a request of `schema`; 400 naming the first problem. */
export function parseJsonRpcRequest(text: string, schema: JsonRpcRequestSchema): JSONRPCVersionTwoRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('Invalid JSON body');
  }
  // Refused, not re-serialized: the upstream gets the caller's bytes (its numbers and escapes untouched), and those
  // bytes must have one reading, the one checked here.
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    throw badRequest(
      `Invalid JSON body: duplicate key ${JSON.stringify(shown(duplicate.key))}${duplicate.path ? ` in ${shown(duplicate.path)}` : ''}`,
    );
  }
  if (Array.isArray(value)) throw badRequest('Batch requests are not supported');
  if (typeof value !== 'object' || value === null) throw badRequest('Invalid JSON-RPC request: the body must be a JSON object');
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'Invalid JSON-RPC request');
  const { jsonrpc, method, params, id } = parsed.data;
  return { jsonrpc, method, params, id };
}
