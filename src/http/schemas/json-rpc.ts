// The JSON-RPC 2.0 envelope (https://www.jsonrpc.org/specification): the request and response objects and the
// error codes the specification reserves, validated with zod. The A2A endpoint's front (json-rpc/front.ts) checks
// every request and batch entry with these before the A2A SDK sees it; the OpenAPI document can show the same shapes.
import { z } from 'zod';

/** The error codes the specification defines. */
export const JSON_RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** A request id: a string, a number or null. Fractions are refused (the specification says they SHOULD NOT be used, and the A2A SDK refuses them). */
export const jsonRpcIdSchema = z
  .union([z.string(), z.number().int(), z.null()], { error: 'id must be a string, an integer or null' })
  .meta({ id: 'JsonRpcId' });

/**
 * One request. Without `id` it is a notification, which gets no answer. Members beyond these are left as they are:
 * the specification does not forbid them.
 */
export const jsonRpcRequestSchema = z
  .object({
    jsonrpc: z.literal('2.0', { error: 'jsonrpc must be exactly "2.0"' }),
    method: z.string({ error: 'method must be a string' }).min(1, { error: 'method must not be empty' }),
    params: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())], { error: 'params must be an object or an array when present' })
      .optional(),
    id: jsonRpcIdSchema.optional(),
  })
  .loose()
  .meta({ id: 'JsonRpcRequest', description: 'A JSON-RPC 2.0 request; without id, a notification (no answer)' });
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
  id?: string | number | null;
}

export const jsonRpcErrorSchema = z
  .object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() })
  .loose()
  .meta({ id: 'JsonRpcError' });

/** One answer: `result` or `error`, with the id of its request (null when the request's id could not be read). */
export const jsonRpcAnswerSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcIdSchema,
    result: z.unknown().optional(),
    error: jsonRpcErrorSchema.optional(),
  })
  .loose()
  .meta({ id: 'JsonRpcAnswer' });
export interface JsonRpcAnswer {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** A batch: a non-empty array of requests, answered by an array of the answers to those that are not notifications. */
export const jsonRpcBatchSchema = z.array(z.unknown()).min(1).meta({ id: 'JsonRpcBatch' });

/** An error answer. */
export const jsonRpcError = (id: string | number | null, code: number, message: string): JsonRpcAnswer => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/** The id of something that was meant as a request, when it has a valid one; null otherwise (as the specification answers). */
export function jsonRpcIdOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const parsed = jsonRpcIdSchema.safeParse((value as { id?: unknown }).id);
  return parsed.success ? parsed.data : null;
}

/** The request, or the message of its first problem (as the -32600 answer says it). */
export function parseJsonRpcRequest(value: unknown): { ok: true; request: JsonRpcRequest } | { ok: false; message: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'Invalid Request: a request must be a JSON object {"jsonrpc": "2.0", "method": ..., "params": ..., "id": ...}' };
  }
  const parsed = jsonRpcRequestSchema.safeParse(value);
  if (parsed.success) return { ok: true, request: parsed.data };
  return { ok: false, message: `Invalid Request: ${parsed.error.issues[0]?.message ?? 'not a JSON-RPC 2.0 request'}` };
}
