// The A2A executor: reads the intent from the message (intents.ts) and calls the same services as the REST
// routes; the answer's data part carries the same fields as the matching REST response. No business rules here.
// `register` and `deregister` open a session and answer with a Task that stays open while the human acts: its
// artifact carries the deep link, QR data and session token, and it completes (or fails) by itself, following
// the session's status whenever the registry of its network logs something (the query service's log
// follower) or the identity app reports, and at least every `pollIntervalMs`, so a registration is seen
// within one log poll of its block.
import { randomUUID } from 'node:crypto';
import { type Message, type Part, Role, type Task, TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type PushNotificationSender,
  type RequestContext,
  ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { ServiceError } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import { REGISTRATION_MODES } from '../core/registration-modes.js';
import type { Services } from '../services/index.js';
import type { OpenedSession } from '../services/session-flow.js';
import type { SessionView } from '../services/session-view.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import { skills } from './agent-card.js';
import { rateLimitKeyOf } from './client-address.js';
import { INTENTS, type IntentRequest, inputParts, parseIntent } from './intents.js';
import { OPEN_STATES } from './task-store.js';

export interface ExecutorOptions {
  /**
   * Longest time between two reads of an open register / deregister task's session status; default 1 s.
   * Registry activity on the session's network and the identity app's reports trigger a read at once, so this
   * bounds only what neither shows (expiry, a report received by another instance).
   */
  pollIntervalMs?: number;
  /** Most register / deregister tasks followed at once; more are refused with a 503 until some end. Default 500. */
  maxOpenTasks?: number;
  /** Notifies the webhooks of tasks resumed after a restart (the SDK notifies those of live requests). */
  push?: PushNotificationSender;
  /**
   * The per-client limit of session creations, counted under the same key as the REST routes'
   * (`ratelimit:session-creation:<client>`), so one budget covers both ways in.
   */
  sessionLimit?: { store: KeyValueStore; limit: number; windowMs: number };
}

const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const dataPart = (value: object): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

/** Waits `ms`, or less when `signal` aborts or the function handed to `setWake` is called. */
const sleep = (ms: number, signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      setWake(undefined);
      resolve();
    };
    const timer = setTimeout(done, ms);
    setWake(done);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The pause between two status reads: until `activity` reports something (registry logs, a report), at most `ms`.
 * Subscribed for the task's whole life, so activity during a read is not missed: the next read follows at once.
 */
function activityPauses(activity: (listener: () => void) => () => void, ms: number, signal: AbortSignal) {
  let woken = false;
  let wake: (() => void) | undefined;
  const close = activity(() => {
    woken = true;
    wake?.();
  });
  const pause = async () => {
    if (!woken) await sleep(ms, signal, (w) => (wake = w));
    woken = false;
  };
  return { pause, close };
}

const TERMINAL = new Set(['completed', 'failed']);

export class RegistryAgentExecutor implements AgentExecutor {
  readonly #pollIntervalMs: number;
  readonly #maxOpenTasks: number;
  readonly #push: PushNotificationSender | undefined;
  readonly #sessionLimit: ExecutorOptions['sessionLimit'];
  /** Open session tasks: task id -> what stops its polling, and the task's context. */
  readonly #running = new Map<string, { controller: AbortController; contextId: string }>();

  constructor(
    private readonly services: Services,
    options: ExecutorOptions = {},
  ) {
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#maxOpenTasks = options.maxOpenTasks ?? 500;
    this.#push = options.push;
    this.#sessionLimit = options.sessionLimit;
  }

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const parsed = parseIntent(inputParts(ctx.userMessage));
    if (!parsed.ok) {
      return this.#reply(ctx, bus, parsed.message, { error: parsed.message, missing: parsed.missing, intents: [...INTENTS] });
    }
    const request = parsed.request;
    try {
      if (request.intent === 'register' || request.intent === 'deregister') return await this.#sessionTask(ctx, bus, request);
      const [text, data] = await this.#answer(request);
      this.#reply(ctx, bus, text, data);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      // The REST body of the same failure ({"error": message}), plus its HTTP status for the caller's logic.
      this.#reply(ctx, bus, error.message, { error: error.message, status: error.status, intent: request.intent });
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    running?.controller.abort();
    this.#running.delete(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: running?.contextId ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
  };

  /** How many register / deregister tasks are followed now. */
  get openTasks(): number {
    return this.#running.size;
  }

  /** Stops every open task's polling (service shutdown). */
  stop(): void {
    for (const { controller } of this.#running.values()) controller.abort();
    this.#running.clear();
  }

  async #answer(request: IntentRequest): Promise<[string, object]> {
    const { queries } = this.services;
    switch (request.intent) {
      case 'lookup': {
        const info = await queries.info(request.chainId, request.agentId!);
        return [`Agent ${info.agentId} on ${info.network}: ${info.isVerified ? 'verified' : 'not verified'} (${info.strengthLabel})`, info];
      }
      case 'verify': {
        const result = await queries.verify(request.chainId, request.agentId!);
        return [`Agent ${result.agentId} ${result.isVerified ? 'is backed by a human' : 'has no valid proof of human'}`, result];
      }
      case 'freshness': {
        const result = await queries.freshness(request.chainId, request.agentId!);
        const when = result.proofExpiresAt > 0 ? ` (expires ${new Date(result.proofExpiresAt * 1000).toISOString()})` : '';
        return [`The proof of agent ${result.agentId} is ${result.isProofFresh ? 'fresh' : 'not fresh'}${when}`, result];
      }
      case 'status': {
        const status = await this.#status(request.sessionToken!);
        return [`Session stage: ${status.stage}`, status];
      }
      default: {
        const list = skills().map((s) => ({ intent: s.id, name: s.name, description: s.description, examples: s.examples }));
        return [`I can: ${list.map((s) => s.intent).join(', ')}. Send a data part {"intent": ..., ...} or plain text.`, { intents: list }];
      }
    }
  }

  /** The status of a session token of any type: the REST status response of its flow. */
  async #status(token: string): Promise<SessionView> {
    const flows = [this.services.registration, this.services.deregistration, this.services.refresh, this.services.identify];
    for (const [i, flow] of flows.entries()) {
      try {
        return await flow.status(token);
      } catch (error) {
        // 400: a token of another session type; try the next flow
        if (!(error instanceof ServiceError && error.status === 400) || i === flows.length - 1) throw error;
      }
    }
    throw new ServiceError(400, 'Unknown session token type');
  }

  #reply(ctx: RequestContext, bus: ExecutionEventBus, text: string, data: object): void {
    bus.publish(AgentEvent.message(this.#message(ctx, [textPart(text), dataPart(data)])));
    bus.finished();
  }

  #message(ctx: RequestContext, parts: Part[], taskId = ''): Message {
    return { ...this.#agentMessage(ctx.contextId, parts), taskId };
  }

  #agentMessage(contextId: string, parts: Part[]): Message {
    const taskId = '';
    return {
      messageId: randomUUID(),
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  /** The client is the user name the server's user builder gives each request: its address. */
  async #countSessionCreation(ctx: RequestContext): Promise<void> {
    const limit = this.#sessionLimit;
    if (!limit) return;
    const client = rateLimitKeyOf(ctx.context.user);
    const { count } = await limit.store.increment(`ratelimit:session-creation:${client}`, limit.windowMs);
    if (count > limit.limit) {
      throw new ServiceError(
        429,
        `Too many session creations: at most ${limit.limit} per ${Math.round(limit.windowMs / 1000)} s from one address; try again later`,
      );
    }
  }

  /** register / deregister: a Task with the session's artifact, following the session until it ends. */
  async #sessionTask(ctx: RequestContext, bus: ExecutionEventBus, request: IntentRequest): Promise<void> {
    if (request.intent === 'register' && typeof request.fields['mode'] !== 'string') {
      const message = `The register intent needs mode, one of ${REGISTRATION_MODES.join(', ')}: e.g. {"intent": "register", "mode": "wallet-free", "network": "testnet"}`;
      return this.#reply(ctx, bus, message, { error: message, missing: ['mode'], intent: 'register' });
    }
    if (this.#running.size >= this.#maxOpenTasks) {
      throw new ServiceError(503, `The service is following ${this.#maxOpenTasks} open sessions, its most; try again in a few minutes`);
    }
    const taskId = ctx.taskId;
    const contextId = ctx.contextId;
    // the slot is taken before anything is awaited, so concurrent requests cannot overshoot the cap
    const controller = new AbortController();
    this.#running.set(taskId, { controller, contextId });
    let session: OpenedSession;
    try {
      await this.#countSessionCreation(ctx);
      session = await this.#openSession(request);
    } catch (error) {
      this.#running.delete(taskId);
      throw error;
    }

    const status = (state: TaskState, text: string, data?: object) => ({
      state,
      message: this.#message(ctx, data ? [textPart(text), dataPart(data)] : [textPart(text)], taskId),
      timestamp: new Date().toISOString(),
    });
    const { qrImageBase64: _png, ...sessionFields } = session;
    const follow: FollowedSession = {
      intent: request.intent as FollowedSession['intent'],
      network: request.network,
      sessionToken: session.sessionToken,
      stage: session.stage,
    };
    const task: Task = {
      id: taskId,
      contextId,
      status: status(TaskState.TASK_STATE_SUBMITTED, 'Session opened'),
      artifacts: [
        {
          artifactId: randomUUID(),
          name: `${request.intent}-session`,
          description: 'Open the deep link (or show the QR data) to the human; the task completes by itself.',
          parts: [dataPart(sessionFields)], // deepLink, qrData, sessionToken, stage, expiresAt, ...
          metadata: undefined,
          extensions: [],
        },
      ],
      history: [ctx.userMessage],
      metadata: { [SESSION_METADATA]: follow },
    };
    bus.publish(AgentEvent.task(task));
    const update = (state: TaskState, text: string, data?: object) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, text, data), metadata: undefined }));

    // auth-required (an interrupted state): a blocking message/send returns the task at this update, while the
    // human proves their identity; the task then moves on by itself
    update(TaskState.TASK_STATE_AUTH_REQUIRED, session.humanInstructions.join(' '), sessionFields);

    try {
      await this.#follow(follow, controller.signal, update);
    } finally {
      this.#running.delete(taskId);
      if (!controller.signal.aborted) bus.finished();
    }
  }

  /** Starts the register or deregister session the request describes, as POST /api/agent/{register,deregister} does. */
  #openSession(request: IntentRequest): Promise<OpenedSession> {
    const { fields } = request;
    const str = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
    const disclosures = fields['disclosures'] && typeof fields['disclosures'] === 'object' ? (fields['disclosures'] as object) : undefined;
    if (request.intent === 'register') {
      return this.services.registration.start({
        mode: str('mode')!,
        network: request.network,
        ...optional('humanAddress', str('humanAddress') ?? str('address')),
        ...optional('agentAddress', str('agentAddress')),
        ...optional('agentSignature', str('agentSignature')),
        ...optional('ed25519Pubkey', str('ed25519Pubkey')),
        ...optional('ed25519Signature', str('ed25519Signature')),
        ...(disclosures ? { disclosures } : {}),
      });
    }
    return this.services.deregistration.start({
      network: request.network,
      ...optional('agentAddress', str('agentAddress') ?? str('address')),
      ...(disclosures ? { disclosures } : {}),
    });
  }

  /** Reads the session's status when woken or every interval and reports each change, until it ends or `signal` aborts. */
  async #follow(session: FollowedSession, signal: AbortSignal, update: (state: TaskState, text: string, data?: object) => unknown): Promise<void> {
    const { intent, network } = session;
    const { sessionToken: token, stage } = session;
    const flow = intent === 'register' ? this.services.registration : this.services.deregistration;
    // woken by the registry's logs on the session's network and by the identity app's reports
    const activity = (listener: () => void) => {
      const fromChain = network ? this.services.queries.onRegistryActivity(network, listener) : () => undefined;
      const fromApp = flow.onCallback(listener);
      return () => {
        fromChain();
        fromApp();
      };
    };
    const pauses = activityPauses(activity, this.#pollIntervalMs, signal);
    try {
      await this.#readUntilEnd(intent, token, stage, signal, update, pauses.pause);
    } finally {
      pauses.close();
    }
  }

  async #readUntilEnd(
    intent: FollowedSession['intent'],
    token: string,
    stage: string,
    signal: AbortSignal,
    update: (state: TaskState, text: string, data?: object) => unknown,
    pause: () => Promise<void>,
  ): Promise<void> {
    while (!signal.aborted) {
      await pause();
      if (signal.aborted) return;
      let current: SessionView & { error?: string };
      try {
        current = intent === 'register' ? await this.services.registration.status(token) : await this.services.deregistration.status(token);
      } catch (error) {
        if (error instanceof ServiceError && error.status === 410) {
          await update(TaskState.TASK_STATE_FAILED, 'The session expired before the human finished', { error: error.message, stage: 'expired' });
          return;
        }
        if (error instanceof ServiceError) {
          await update(TaskState.TASK_STATE_FAILED, error.message, { error: error.message, status: error.status });
          return;
        }
        continue; // a transient chain failure: read again at the next interval
      }
      token = current.sessionToken;
      if (current.stage === 'completed') {
        await update(TaskState.TASK_STATE_COMPLETED, current.humanInstructions.join(' '), current);
        return;
      }
      if (current.stage === 'failed') {
        await update(TaskState.TASK_STATE_FAILED, current.error ?? current.humanInstructions.join(' '), current);
        return;
      }
      if (current.stage !== stage && !TERMINAL.has(current.stage)) {
        stage = current.stage;
        await update(TaskState.TASK_STATE_WORKING, current.humanInstructions.join(' '), current);
      }
    }
  }

  /**
   * After a restart: follows the open session tasks of the task store again, saving their updates straight
   * to the store (tasks/get sees them) and notifying their webhooks; streams of the old process are gone.
   */
  async resume(store: TaskStore & { openTasks(): Promise<Task[]> }): Promise<void> {
    for (const task of await store.openTasks()) {
      const follow = task.metadata?.[SESSION_METADATA] as Partial<FollowedSession> | undefined;
      if (!follow?.sessionToken || (follow.intent !== 'register' && follow.intent !== 'deregister') || this.#running.has(task.id)) continue;
      const controller = new AbortController();
      this.#running.set(task.id, { controller, contextId: task.contextId });
      const context = new ServerCallContext();
      const update = async (state: TaskState, text: string, data?: object) => {
        const current = (await store.load(task.id, context)) ?? task;
        // canceled meanwhile (tasks/cancel on a resumed task reaches the store, not this loop): stop here
        if (!OPEN_STATES.has(current.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
          controller.abort();
          return;
        }
        const message: Message = {
          ...this.#agentMessage(task.contextId, data ? [textPart(text), dataPart(data)] : [textPart(text)]),
          taskId: task.id,
        };
        const event: TaskStatusUpdateEvent = {
          taskId: task.id,
          contextId: task.contextId,
          status: { state, message, timestamp: new Date().toISOString() },
          metadata: undefined,
        };
        const saved: Task = { ...current, status: event.status };
        await store.save(saved, context);
        // delivered in the background (retries can take seconds), in order per task
        void this.#push?.send({ payload: { $case: 'statusUpdate', value: event } }, context, saved).catch(() => undefined);
      };
      const session: FollowedSession = {
        intent: follow.intent,
        sessionToken: follow.sessionToken,
        stage: follow.stage ?? 'qr-ready',
        ...(follow.network ? { network: follow.network } : {}),
      };
      void this.#follow(session, controller.signal, update)
        .catch(() => undefined)
        .finally(() => this.#running.delete(task.id));
    }
  }
}

/** Where a session task keeps what resume() needs (a FollowedSession). */
export const SESSION_METADATA = 'registrySession';

/** An open register / deregister session a task follows. */
interface FollowedSession {
  intent: 'register' | 'deregister';
  /** Absent in tasks kept before it was recorded: those are read on the timer only. */
  network?: NetworkName;
  sessionToken: string;
  stage: string;
}

const optional = <K extends string>(key: K, value: string | undefined): { [P in K]?: string } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
