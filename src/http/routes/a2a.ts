// The A2A agent's endpoints as entries of the route table. The handlers are the A2A agent's (src/a2a/agent.ts),
// handed over by the composition root. JSON-RPC requests pass the JSON-RPC front first (json-rpc-front.ts: parse
// errors, invalid requests, unknown methods, notifications and batches, as the specification answers them), which
// hands a request of a streaming method to the SDK's handler and every other request to the agent's `call`.
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { A2A_PATH, AGENT_CARD_PATHS } from '../../core/endpoints.js';
import { ServiceError } from '../../core/errors.js';
import type { AgentMessageLimits } from '../../services/agent-message-limits.js';
import { UNTIL_SIGNING_KEY_CHANGES } from '../../services/answer-reuse.js';
import type { StreamLimits } from '../../services/stream-limits.js';
import { type JsonRpcMethods, jsonRpcFront } from '../json-rpc-front.js';
import type { SkillSummary } from '../llms-txt.js';
import { keepResponse } from '../response-cache.js';
import { bodyLimitText, type Route } from '../route.js';
import {
  type JsonRpcAnswer,
  type JsonRpcRequest,
  jsonRpcAnswerSchema,
  jsonRpcBatchSchema,
  jsonRpcError,
  jsonRpcRequestSchema,
} from '../schemas/json-rpc.js';
import { admitStream } from '../stream-admission.js';

/** The A2A agent's handlers, ready to be mounted at any path. */
export interface A2aHttpHandlers {
  /** GET: the service's agent card. */
  card: RequestHandler;
  /** POST: one JSON-RPC 2.0 request in req.body, answered over HTTP (a stream for the streaming methods). */
  rpc: RequestHandler;
  /**
   * One JSON-RPC request of a method that does not stream (alone, in a batch, or a notification), in the HTTP
   * request's context: its answer. Given the response (a lone request), it may set headers on it.
   */
  call(request: JsonRpcRequest, req: Request, res?: Response): Promise<JsonRpcAnswer>;
  /** The card's skills, one per intent (what onboarding texts list). */
  skills: readonly SkillSummary[];
}

const TAGS = ['A2A'];

/** The A2A v1.0 methods (header A2A-Version: 1.0). */
const V1_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
] as const;

/** The A2A v0.3 methods (no A2A-Version header, or 0.3). */
const V03_METHODS = [
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
] as const;

/** The JSON-RPC methods the endpoint answers (A2A v1.0, then v0.3): the values of its requests' rpc_method label. */
export const A2A_RPC_METHODS = [...V1_METHODS, ...V03_METHODS] as const;

/** Each version's methods; a streaming method's notification is sent as its non-streaming method (a subscription only streams). */
const VERSIONS: Record<'1.0' | '0.3', JsonRpcMethods> = {
  '1.0': {
    known: new Set(V1_METHODS),
    streaming: new Map([
      ['SendStreamingMessage', 'SendMessage'],
      ['SubscribeToTask', undefined],
    ]),
    notFound: (method) =>
      (V03_METHODS as readonly string[]).includes(method)
        ? `Method not found: ${method} is an A2A v0.3 method: send it without the A2A-Version header, or use its v1.0 name`
        : `Method not found: ${shown(method)} (A2A v1.0 methods: ${V1_METHODS.join(', ')})`,
  },
  '0.3': {
    known: new Set(V03_METHODS),
    streaming: new Map([
      ['message/stream', 'message/send'],
      ['tasks/resubscribe', undefined],
    ]),
    notFound: (method) =>
      (V1_METHODS as readonly string[]).includes(method)
        ? `Method not found: ${method} is an A2A v1.0 method: send it with the header A2A-Version: 1.0`
        : `Method not found: ${shown(method)} (A2A v0.3 methods: ${V03_METHODS.join(', ')}; v1.0 methods with A2A-Version: 1.0)`,
  },
};

/** A method name shown back in an answer, cut short: it is the caller's text. */
const shown = (method: string): string => JSON.stringify(method.length > 100 ? `${method.slice(0, 100)}…` : method);

/** The methods of the version the request asks for: v0.3 without the header; another version is the SDK's to refuse. */
const methodsOf = (req: Request): JsonRpcMethods | undefined => {
  const version = req.header('A2A-Version') || '0.3';
  return version === '1.0' || version === '0.3' ? VERSIONS[version] : undefined;
};

/** JSON-RPC's implementation-defined server error: the stream limits refused the request. */
const TOO_MANY_STREAMS = -32000;

/** The task a streaming request follows: the one it resubscribes to, or the one its message continues. */
function taskFollowed(request: { params?: unknown }): string | undefined {
  const params = request.params as { id?: unknown; message?: { taskId?: unknown; task_id?: unknown } } | undefined;
  const id = params?.id ?? params?.message?.taskId ?? params?.message?.task_id;
  // the caller's text: a bounded key
  return typeof id === 'string' && id !== '' ? `task:${id.slice(0, 200)}` : undefined;
}

/** A streaming request passes the stream limits first; a refusal is 429 with Retry-After and a JSON-RPC error. */
function admittingStreams(rpc: RequestHandler, streams: StreamLimits): RequestHandler {
  return (req, res, next) => {
    const request = req.body as JsonRpcRequest;
    try {
      admitStream(streams, req, res, taskFollowed(request));
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(error.status).json(jsonRpcError(request.id ?? null, TOO_MANY_STREAMS, error.message));
      return;
    }
    return rpc(req, res, next);
  };
}

export function a2aRoutes(handlers: A2aHttpHandlers, limits: AgentMessageLimits, streams: StreamLimits): Route[] {
  const bodyLimit = bodyLimitText(limits.maxBodyBytes);
  return [
    ...[...AGENT_CARD_PATHS, A2A_PATH].map(
      (path): Route => ({
        method: 'get',
        path,
        summary: "This service's A2A agent card",
        description:
          'One skill per intent (register, status, lookup, verify, deregister, freshness, help), with examples. ' +
          'Without an A2A-Version header (or with 0.3) the card is v0.3-shaped (url, preferredTransport, protocolVersion 0.3); ' +
          'with A2A-Version: 1.0 it is the v1.0 card (supportedInterfaces). Both carry `signatures`: one JWS by the key that ' +
          "signs now (A2A v1.0 section 8.4; kid and jku name the service's JWKS), over the v1.0 fields, which the v0.3 " +
          'card repeats (supportedInterfaces), so either verifies with the same signature.',
        tags: ['Discovery'],
        cors: path === A2A_PATH ? 'a2a' : 'public',
        responses: { 200: { description: 'The agent card' }, 304: { description: 'Not modified (ETag)' } },
        handler: (req, res, next) => {
          keepResponse(res, UNTIL_SIGNING_KEY_CHANGES);
          return handlers.card(req, res, next);
        },
      }),
    ),
    {
      method: 'post',
      path: A2A_PATH,
      summary: 'A2A JSON-RPC 2.0 endpoint (A2A v1.0 and v0.3)',
      description:
        'A2A v1.0 methods (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask and the ' +
        'push notification config methods) with header A2A-Version: 1.0; v0.3 methods (message/send, message/stream, ' +
        'tasks/get, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/*) without the header. ' +
        'Push notification webhooks must be public https URLs unless the operator allows private networks. Intents: ' +
        '{"intent": "verify", "agentId": 5, "network": "testnet"} as a data part, JSON in a text part, or plain text. ' +
        'JSON-RPC 2.0 as specified: batches (at most 100 requests; streaming methods alone), notifications (no id: ' +
        'handled, answered 204 without a body), -32700 for a body that is not JSON, -32600 for an invalid request, ' +
        '-32601 for an unknown method. A stream lives at most STREAM_MAX_LIFETIME_MS (10 min), then ends: resubscribe; ' +
        'at most MAX_STREAMS_PER_CLIENT (8) are open per client and MAX_STREAMS_PER_SUBJECT (4) per task (429 beyond). ' +
        'Protocol errors are JSON-RPC error objects with HTTP 200; a body over ' +
        `${limits.maxBodyBytes} bytes is refused unread with 413, a charset other than UTF-8 or an unknown Content-Encoding with 415, ` +
        'both with a JSON-RPC error object. Messages (message/send, message/stream, SendMessage, SendStreamingMessage) are ' +
        `limited per client address to ${limits.rate.rule.limit} a minute, together with POST /api/demo/chat, and each message ` +
        `to ${limits.maxMessageBytes} bytes as JSON: beyond either, a -32602 error saying which (data: {status: 429 with ` +
        'retryAfterSeconds, and Retry-After on a lone request; or status 413}).',
      tags: TAGS,
      cors: 'a2a',
      ownBody: true,
      bodyLimit: limits.maxBodyBytes,
      body: z.union([jsonRpcRequestSchema, jsonRpcBatchSchema]).describe('One JSON-RPC 2.0 request, or a batch: an array of them'),
      responses: {
        200: {
          description: 'JSON-RPC response (an array for a batch), or an SSE stream for streaming methods',
          schema: z.union([jsonRpcAnswerSchema, z.array(jsonRpcAnswerSchema)]),
          contentType: 'text/event-stream',
        },
        204: { description: 'Only notifications were sent: no answer' },
        413: { description: `The body is over ${limits.maxBodyBytes} bytes: a JSON-RPC error object (-32600, id null)`, schema: jsonRpcAnswerSchema },
        415: {
          description: 'A charset other than UTF-8 or an unknown Content-Encoding: a JSON-RPC error object (-32600, id null)',
          schema: jsonRpcAnswerSchema,
        },
        429: {
          description:
            'A streaming request beyond the stream limits (open streams per client, per task, in all): a JSON-RPC error object ' +
            '(-32000) naming the limit, with Retry-After',
          schema: jsonRpcAnswerSchema,
        },
      },
      handler: jsonRpcFront({
        limit: bodyLimit,
        methodsOf,
        single: handlers.rpc,
        stream: admittingStreams(handlers.rpc, streams),
        call: handlers.call,
      }),
    },
  ];
}
