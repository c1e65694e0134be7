// A message to the agent (message/send, message/stream, SendMessage, SendStreamingMessage; alone, in a batch or as a
// notification) is admitted before the SDK sees it: counted against the client's budget of messages, which chat
// queries share (services/agent-message-limits.ts), and measured as the JSON it is, every part and its metadata,
// which is what a task would keep. A refusal is a JSON-RPC error object (HTTP 200, as every protocol error here):
// -32602, as the per-client push config limit answers, with the message saying which limit and when to try again;
// data {status: 429, retryAfterSeconds} or {status: 413}, the REST status of the same refusal. Nothing is stored
// for a refused message.
import type { Request } from 'express';
import { serviceErrorOf } from '../core/errors.js';
import type { AgentMessageLimits } from '../services/agent-message-limits.js';
import { clientKeyOf } from '../services/rate-limits.js';
import type { RpcAnswer, RpcRequest } from './json-rpc-call.js';

/** The methods that send a message, in both protocol versions. */
const MESSAGE_METHODS: ReadonlySet<string> = new Set(['message/send', 'message/stream', 'SendMessage', 'SendStreamingMessage']);
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A message refused: its answer, and for a rate refusal when to try again (a lone request's Retry-After). */
export interface Refusal {
  answer: RpcAnswer;
  retryAfterSeconds?: number;
}

/** The JSON size of the request's message, 0 when it has none (the SDK refuses that as malformed). */
function messageBytes(params: unknown): number {
  const message = params && typeof params === 'object' ? (params as { message?: unknown }).message : undefined;
  return message === undefined ? 0 : Buffer.byteLength(JSON.stringify(message));
}

/** Admits a JSON-RPC request (undefined) or refuses it; requests of other methods are always admitted. Never throws. */
export function messageAdmission(limits: AgentMessageLimits): (request: unknown, req: Request) => Promise<Refusal | undefined> {
  return async (request, req) => {
    if (!request || typeof request !== 'object') return undefined;
    const { method, params, id } = request as Partial<RpcRequest>;
    if (typeof method !== 'string' || !MESSAGE_METHODS.has(method)) return undefined;
    try {
      await limits.admit(clientKeyOf(req.ip), messageBytes(params), 'message');
      return undefined;
    } catch (thrown) {
      const error = serviceErrorOf(thrown);
      const answerId = id ?? null;
      if (!error) return { answer: { jsonrpc: '2.0', id: answerId, error: { code: INTERNAL_ERROR, message: 'Internal error' } } };
      const refused = error.status === 429 || error.status === 413;
      const data = { status: error.status, ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}) };
      return {
        answer: { jsonrpc: '2.0', id: answerId, error: { code: refused ? INVALID_PARAMS : INTERNAL_ERROR, message: error.message, data } },
        ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      };
    }
  };
}
