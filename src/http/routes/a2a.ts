// The A2A agent's endpoints as entries of the route table. The handlers are the A2A agent's (src/a2a/agent.ts),
// handed over by the composition root; the JSON-RPC handler parses its own body.
import type { RequestHandler } from 'express';
import { A2A_PATH, AGENT_CARD_PATHS } from '../../core/endpoints.js';
import type { Route } from '../route.js';

/** The A2A agent's handlers, ready to be mounted at any path. */
export interface A2aHttpHandlers {
  /** GET: the service's agent card. */
  card: RequestHandler;
  /** POST: JSON-RPC 2.0. */
  rpc: RequestHandler;
}

const TAGS = ['A2A'];

/** The JSON-RPC methods the endpoint answers (A2A v1.0, then v0.3): the values of its requests' rpc_method label. */
export const A2A_RPC_METHODS = [
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

export function a2aRoutes(handlers: A2aHttpHandlers): Route[] {
  return [
    ...[...AGENT_CARD_PATHS, A2A_PATH].map(
      (path): Route => ({
        method: 'get',
        path,
        summary: "This service's A2A agent card",
        description:
          'One skill per intent (register, status, lookup, verify, deregister, freshness, help), with examples. ' +
          'Without an A2A-Version header (or with 0.3) the card is v0.3-shaped (url, preferredTransport, protocolVersion 0.3); ' +
          'with A2A-Version: 1.0 it is the v1.0 card (supportedInterfaces).',
        tags: ['Discovery'],
        cors: path === A2A_PATH ? 'a2a' : 'public',
        responses: { 200: { description: 'The agent card' }, 304: { description: 'Not modified (ETag)' } },
        handler: handlers.card,
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
        'Protocol errors are JSON-RPC error objects with HTTP 200.',
      tags: TAGS,
      cors: 'a2a',
      ownBody: true,
      responses: { 200: { description: 'JSON-RPC response, or an SSE stream for streaming methods' } },
      handler: handlers.rpc,
    },
  ];
}
