// The A2A agent: our request handler (the SDK's, composed with our checks, streams and answers at once) over our
// executor, task store and push notifications, and its two HTTP handlers (the agent card, JSON-RPC for A2A v1.0
// and, through the SDK's compatibility layer, v0.3 for requests without an A2A-Version header). The composition
// root hands the handlers to the HTTP app, which mounts them at the paths of core/endpoints.ts. A lone JSON-RPC
// request of a streaming method goes to the SDK's express handler; every other request to `call`, the SDK's
// transport handlers answering one request as an object. Tasks and push configs live on the store port
// (task-store.ts, push-config-store.ts), so tasks/get and webhooks keep working after a restart.
import type { AgentSkill } from '@a2a-js/sdk';
import { DefaultExecutionEventBusManager, type User } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../services/index.js';
import { SessionTokens } from '../sessions/session-token.js';
import type { EventBus } from '../store/event-bus.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import { SealedValues } from '../store/sealed-values.js';
import { serviceAgentCard } from './agent-card.js';
import { ClientAddress } from './client-address.js';
import { RegistryAgentExecutor } from './executor.js';
import { jsonRpcCall, type RpcAnswer, type RpcRequest } from './json-rpc-call.js';
import { messageAdmission } from './message-admission.js';
import { KeyValuePushConfigStore } from './push-config-store.js';
import type { PushTargetPolicy, Resolver } from './push-destination.js';
import { WebhookPushSender } from './push-sender.js';
import { RegistryRequestHandler } from './request-handler.js';
import { keepStreamsAlive } from './stream-keepalive.js';
import { resumeOpenTasks } from './task-resume.js';
import { KeyValueTaskStore, type TaskLifetimes } from './task-store.js';

/** How often an open stream gets a keep-alive comment by default: well within a proxy's usual 60 s idle timeout. */
export const DEFAULT_STREAM_KEEPALIVE_MS = 15_000;
/** How often open tasks nobody follows (their instance died) are looked for, after the pass at start. */
const RESUME_EVERY_MS = 30_000;

export interface A2aAgentOptions {
  publicUrl: string;
  version: string;
  /** Where tasks and push configs are kept. */
  store: KeyValueStore;
  /** Instances sharing `store` hear of each other's task changes here (streams of a task another instance runs). */
  events?: EventBus;
  /** The service secret: seals push notification credentials and tasks (their session tokens) at rest. */
  secret: Uint8Array;
  /** Which webhook destinations push notifications may reach. */
  pushPolicy: PushTargetPolicy;
  logger: Logger;
  /** How often an open stream (message/stream, resubscriptions) gets a keep-alive comment; default 15 s. */
  streamKeepAliveMs?: number;
  /** How long tasks that follow no session are kept (finished queries, conversations waiting for input). */
  taskLifetimes?: TaskLifetimes;
  /** Tests: how push hosts resolve, and the waits between delivery attempts. */
  pushResolver?: Resolver;
  pushRetryDelaysMs?: readonly number[];
}

export interface A2aAgent {
  /** GET: the service's agent card (v0.3-shaped, or v1.0 with A2A-Version: 1.0). */
  card: RequestHandler;
  /** POST: one JSON-RPC 2.0 request in req.body, answered over HTTP (SSE for the streaming methods). */
  rpc: RequestHandler;
  /**
   * One request that does not stream (alone, in a batch, or a notification), with the HTTP request's headers and
   * caller: its answer. Given the response (a lone request), it may set headers on it.
   */
  call(request: RpcRequest, req: Request, res?: Response): Promise<RpcAnswer>;
  /** The card's skills, one per intent. */
  skills: readonly AgentSkill[];
  /** Push notifications under way have left (shutdown waits for this, briefly). */
  idle(): Promise<void>;
  /** Stops looking for open tasks to resume (shutdown). */
  close(): void;
}

export function createA2aAgent(services: Services, options: A2aAgentOptions): A2aAgent {
  const card = serviceAgentCard({ publicUrl: options.publicUrl, version: options.version });
  const pushConfigs = new KeyValuePushConfigStore({
    store: options.store,
    sealed: new SealedValues(options.secret, 'a2a-push-config'),
    policy: options.pushPolicy,
    writeLimit: services.limits.pushConfigWrites,
    // a session task has updates only while its session is open: its webhooks are kept twice that long (as long
    // as a conversation waits for its next turn), so the config of a refused request does not linger
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
  const executor = new RegistryAgentExecutor(services);
  const taskStore = new KeyValueTaskStore(options.store, new SealedValues(options.secret, 'a2a-task'), options.events, options.taskLifetimes);
  // tasks left open by a previous process, or by another instance that died, follow their sessions again (and
  // notify their webhooks); one pass at a time
  let resuming = false;
  const resume = () => {
    if (resuming) return;
    resuming = true;
    void resumeOpenTasks(taskStore, services.watcher, push)
      .catch((err: unknown) => options.logger.error({ err }, 'open A2A tasks could not be resumed'))
      .finally(() => {
        resuming = false;
      });
  };
  resume();
  const resumer = setInterval(resume, RESUME_EVERY_MS).unref();
  const requestHandler = new RegistryRequestHandler({
    card,
    tasks: taskStore,
    executor,
    answerer: executor,
    buses: new DefaultExecutionEventBusManager(),
    pushConfigs,
    push,
    // The executor ends its turn itself: an input-required task is continued by a new turn on a new bus, so no
    // bus is kept for a conversation the caller may never resume (the SDK would keep one per such task for good);
    // its subscribers follow it through the store.
    options: { keepBusAliveStates: [] },
  });
  const legacyCompat = { enabled: true };
  // the end of each response the SDK's express handler writes, for the caller it names (a stream stops with it)
  const responseEnds = new WeakMap<Request, AbortSignal>();
  // No authentication exists (interface); the "user" is the client's address, which the per-client limits count.
  const userBuilder = async (req: Request): Promise<User> => new ClientAddress(req.ip ?? 'unknown', responseEnds.get(req));
  // every message is counted and measured before the SDK runs it, whichever way it came
  const admit = messageAdmission(services.limits.agentMessages);
  const setRetryAfter = (res: Response, retryAfterSeconds: number | undefined): void => {
    if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  };
  const stream = keepStreamsAlive(
    atRoot(jsonRpcHandler({ requestHandler, userBuilder, legacyCompat })),
    options.streamKeepAliveMs ?? DEFAULT_STREAM_KEEPALIVE_MS,
  );
  const answer = jsonRpcCall(requestHandler, userBuilder, options.logger);
  // when this card was signed (at the first request after a start or a key change): its Last-Modified
  let signedAt = new Date();
  const signedCard = services.cardSigner.perKey(async () => {
    const signed = await services.cardSigner.signCard(card);
    signedAt = new Date();
    return signed;
  });
  return {
    skills: card.skills,
    // signed once per signing key; the SDK serves it as is (v1.0) or translated (v0.3), signatures and all
    card: withLastModified(signedCard, () => signedAt, atRoot(agentCardHandler({ agentCardProvider: signedCard, legacyCompat }))),
    rpc: (req, res, next) => {
      const ended = new AbortController();
      res.once('close', () => ended.abort());
      responseEnds.set(req, ended.signal);
      void admit(req.body, req).then((refused) => {
        if (!refused) return stream(req, res, next);
        setRetryAfter(res, refused.retryAfterSeconds);
        res.status(200).json(refused.answer);
      }, next);
    },
    call: async (request, req, res) => {
      const refused = await admit(request, req);
      if (!refused) return answer(request, req);
      if (res) setRetryAfter(res, refused.retryAfterSeconds);
      return refused.answer;
    },
    idle: () => push.idle(),
    close: () => clearInterval(resumer),
  };
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

/**
 * Sets Last-Modified (A2A v1.0 card caching, CARD-CACHE-003) before the SDK's card handler answers: the card is made
 * first, so the date is the one of the card about to be served, and express answers If-Modified-Since with it.
 */
function withLastModified(made: () => Promise<unknown>, madeAt: () => Date, handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    made().then(() => {
      res.setHeader('Last-Modified', madeAt().toUTCString());
      return handler(req, res, next);
    }, next);
  };
}
