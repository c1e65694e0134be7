// What a tool answers: its REST answer as structured content (parsed with the REST schema, so it holds exactly the
// documented fields the output schema promises) with a sentence for the model; or, for a refusal, a tool error
// whose text is the REST error message (what to fix), never a protocol error. As on REST, a refusal of the caller's
// input is logged at warn without a stack, a failure of ours at error, and an unexpected one is not shown.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { serviceErrorOf } from '../core/errors.js';
import { PolicyRefusalError } from '../core/policy-refusal.js';

/** `value` as the REST schema `schema` documents it (fields it does not document left out). */
export const structured = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => schema.parse(value);

/**
 * A tool's answer: the sentence, other content (an image), then the structured content again as JSON text for clients
 * that read only text (`asText`: a lighter copy, e.g. without an image the answer already shows).
 */
export function answer(
  text: string,
  structuredContent: Record<string, unknown>,
  more: CallToolResult['content'] = [],
  asText: unknown = structuredContent,
): CallToolResult {
  return { content: [{ type: 'text', text }, ...more, { type: 'text', text: JSON.stringify(asText) }], structuredContent };
}

/** A refusal (or failure) as a tool error: the message says what to fix, and when to try again after a limit. */
export function toolError(tool: string, error: unknown, logger: Logger): CallToolResult {
  const refusal = serviceErrorOf(error);
  if (!refusal) {
    logger.error({ err: error, tool }, 'MCP tool failed');
    return errorResult('Internal error: the service could not answer this call; try again later');
  }
  const policy = refusal instanceof PolicyRefusalError ? { policy: refusal.policy } : {};
  if (refusal.status >= 500) logger.error({ err: refusal, tool, status: refusal.status }, 'MCP tool failed');
  else logger.warn({ tool, status: refusal.status, error: refusal.message, ...policy }, 'MCP tool call refused');
  const retry = refusal.retryAfterSeconds === undefined ? '' : ` (try again in ${refusal.retryAfterSeconds} s)`;
  return errorResult(`${refusal.message}${retry}`);
}

export const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });
