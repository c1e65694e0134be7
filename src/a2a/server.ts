// The A2A endpoint: the SDK's JSON-RPC handler at /api/a2a (A2A v1.0 and, through the SDK's compatibility
// layer, v0.3 for requests without an A2A-Version header), and the service's agent card at the well-known paths
// and on GET /api/a2a. The SDK handlers parse their own bodies, so this router is mounted before express.json().
// Tasks and push notification configs live on the store port (task-store.ts, push-config-store.ts), so
// tasks/get and webhooks keep working after a restart.

import { DefaultExecutionEventBusManager, type User } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { type Request, type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import type { RouteDoc } from '../http/openapi/route-doc.js';
import { SESSION_CREATION_LIMIT } from '../http/session-limit.js';
import type { Services } from '../services/index.js';
import { SessionTokens } from '../sessions/session-token.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import { SealedValues } from '../store/sealed-values.js';
import { A2A_PATH, serviceAgentCard } from './agent-card.js';
import { ClientAddress } from './client-address.js';
import { type ExecutorOptions, RegistryAgentExecutor } from './executor.js';
import { KeyValuePushConfigStore } from './push-config-store.js';
import type { PushTargetPolicy, Resolver } from './push-destination.js';
import { WebhookPushSender } from './push-sender.js';
import { RegistryRequestHandler } from './request-handler.js';
import { KeyValueTaskStore } from './task-store.js';

export interface A2aOptions extends ExecutorOptions {
  publicUrl: string;
  version: string;
  /** Where tasks, push configs and the session-creation counters are kept. */
  store: KeyValueStore;
  /** The service secret: seals push notification credentials at rest. */
  secret: Uint8Array;
  /** Which webhook destinations push notifications may reach. */
  pushPolicy: PushTargetPolicy;
  logger: Logger;
  /** Tests: how push hosts resolve, and the waits between delivery attempts. */
  pushResolver?: Resolver;
  pushRetryDelaysMs?: readonly number[];
}

export const AGENT_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;

export interface A2aRuntime {
  router: Router;
  executor: RegistryAgentExecutor;
  push: WebhookPushSender;
}

export function a2aRoutes(services: Services, options: A2aOptions): A2aRuntime {
  const card = serviceAgentCard({ publicUrl: options.publicUrl, version: options.version });
  const pushConfigs = new KeyValuePushConfigStore({
    store: options.store,
    sealed: new SealedValues(options.secret, 'a2a-push-config'),
    policy: options.pushPolicy,
    // a task has updates only while its session is open: its webhooks are kept twice that long, so the
    // configs of requests that never became a task (refused, or answered at once) do not linger
    ttlMs: 2 * SessionTokens.LIFETIME_MS,
    ...(options.pushResolver ? { resolve: options.pushResolver } : {}),
  });
  const push = new WebhookPushSender({
    configs: pushConfigs,
    policy: options.pushPolicy,
    logger: options.logger,
    userAgent: `agent-identity-registry/${options.version}`,
    ...(options.pushResolver ? { resolve: options.pushResolver } : {}),
    ...(options.pushRetryDelaysMs ? { retryDelaysMs: options.pushRetryDelaysMs } : {}),
  });
  const executor = new RegistryAgentExecutor(services, {
    ...options,
    push,
    sessionLimit: options.sessionLimit ?? { store: options.store, limit: SESSION_CREATION_LIMIT, windowMs: 60_000 },
  });
  const taskStore = new KeyValueTaskStore(options.store);
  // tasks left open by a previous process follow their sessions again (and notify their webhooks)
  void executor.resume(taskStore).catch((err: unknown) => options.logger.error({ err }, 'open A2A tasks could not be resumed'));
  const requestHandler = new RegistryRequestHandler(card, taskStore, executor, new DefaultExecutionEventBusManager(), pushConfigs, push);
  const legacyCompat = { enabled: true };
  const cardHandler = agentCardHandler({ agentCardProvider: requestHandler, legacyCompat });
  // No authentication exists (interface); the "user" is the client's address, which the session limit counts.
  const userBuilder = async (req: Request): Promise<User> => new ClientAddress(req.ip ?? 'unknown');
  const rpcHandler = jsonRpcHandler({ requestHandler, userBuilder, legacyCompat });

  const router = Router();
  // GET /api/a2a answers the card too; POST is JSON-RPC
  for (const path of [...AGENT_CARD_PATHS, A2A_PATH]) router.get(path, atRoot(cardHandler));
  router.post(A2A_PATH, atRoot(rpcHandler));
  return { router, executor, push };
}

/** Runs one of the SDK's routers (which serve their own "/") as the handler of a route at another path. */
function atRoot(handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const url = req.url;
    const query = url.indexOf('?');
    req.url = query < 0 ? '/' : `/${url.slice(query)}`;
    void handler(req, res, (error?: unknown) => {
      req.url = url;
      next(error);
    });
  };
}

export const a2aDocs: RouteDoc[] = [
  ...[...AGENT_CARD_PATHS, A2A_PATH].map(
    (path): RouteDoc => ({
      method: 'get',
      path,
      summary: "This service's A2A agent card",
      description:
        'One skill per intent (register, status, lookup, verify, deregister, freshness, help), with examples. ' +
        'Without an A2A-Version header (or with 0.3) the card is v0.3-shaped (url, preferredTransport, protocolVersion 0.3); ' +
        'with A2A-Version: 1.0 it is the v1.0 card (supportedInterfaces).',
      tags: ['Discovery'],
      responses: { 200: { description: 'The agent card' }, 304: { description: 'Not modified (ETag)' } },
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
    tags: ['A2A'],
    responses: { 200: { description: 'JSON-RPC response, or an SSE stream for streaming methods' } },
  },
];
