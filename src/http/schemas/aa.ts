// Shapes of the account-abstraction proxy: the query and request schemas are the service's own validators, so the
// document shows exactly what is checked; the answers are the token and the upstream's JSON-RPC response.
import { z } from 'zod';

export { aaQuerySchema } from '../../aa/aa-proxy.js';
export { bundlerRequestSchema, paymasterRequestSchema } from '../../aa/json-rpc-request.js';

export const aaTokenSchema = z
  .object({
    token: z.string().describe('Send it as the x-aa-proxy-token header; bound to this chain, client address and User-Agent'),
    expiresAt: z.number().int().describe('When it expires, unix milliseconds'),
  })
  .meta({ id: 'AaProxyToken' });

export const jsonRpcResponseSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.unknown().optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).loose().optional(),
  })
  .loose()
  .meta({ id: 'JsonRpcResponse', description: "The upstream's JSON-RPC response, passed through unchanged" });
