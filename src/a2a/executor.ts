// The A2A executor: reads the intent from the message (intents.ts), makes the one service call it maps to, and
// turns the result into parts or a Task. The answer's data part carries the same fields as the matching REST
// response; every rule (limits, which kind of token, waiting for the human) is the services'.
// `register` and `deregister` open a session and answer with a Task that stays open while the human acts: its
// artifact carries the deep link, QR data and session token, and it completes (or fails) by itself as the
// session watcher reports.
import { type Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { serviceErrorOf } from '../core/errors.js';
import type { Services } from '../services/index.js';
import type { SessionOpening } from '../services/sessions.js';
import { answerIntent } from './answers.js';
import { rateLimitKeyOf } from './client-address.js';
import { INTENTS, inputParts, parseIntent } from './intents.js';
import { agentMessage, answerParts } from './parts.js';
import {
  type FollowedSession,
  finalUpdate,
  SESSION_METADATA,
  sessionArtifact,
  sessionFields,
  type TaskUpdate,
  workingUpdate,
} from './session-task.js';

export class RegistryAgentExecutor implements AgentExecutor {
  /** The context of each open session task, for its canceled update. */
  readonly #contexts = new Map<string, string>();

  constructor(private readonly services: Services) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const parsed = parseIntent(inputParts(ctx.userMessage));
    if (!parsed.ok) {
      const { message, missing, intent } = parsed;
      return this.#reply(ctx, bus, message, { error: message, missing, intents: [...INTENTS], ...(intent ? { intent } : {}) });
    }
    const { request } = parsed;
    try {
      if (request.opening) return await this.#sessionTask(ctx, bus, request.opening);
      const [text, data] = await answerIntent(this.services, request);
      this.#reply(ctx, bus, text, data);
    } catch (thrown) {
      // a ServiceError, also from under viem's errors (a chain that does not answer), as the REST error middleware does
      const error = serviceErrorOf(thrown);
      if (!error) throw thrown;
      // The REST body of the same failure ({"error": message}), plus its HTTP status for the caller's logic.
      this.#reply(ctx, bus, error.message, { error: error.message, status: error.status, intent: request.intent });
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.services.watcher.cancel(taskId);
    const contextId = this.#contexts.get(taskId) ?? '';
    this.#contexts.delete(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
  };

  #reply(ctx: RequestContext, bus: ExecutionEventBus, text: string, data: object): void {
    bus.publish(AgentEvent.message(agentMessage(ctx.contextId, answerParts(text, data))));
    bus.finished();
  }

  /** register / deregister: a Task with the session's artifact, updated as the session watcher reports. */
  async #sessionTask(ctx: RequestContext, bus: ExecutionEventBus, opening: SessionOpening): Promise<void> {
    const { taskId, contextId } = ctx;
    // the watch slot is taken before anything is awaited (503 at the cap), then the session is opened under
    // the caller's session-creation limit
    const watch = this.services.watcher.reserve(taskId);
    this.#contexts.set(taskId, contextId);
    let session: Awaited<ReturnType<Services['sessions']['open']>>;
    try {
      session = await this.services.sessions.open(opening, rateLimitKeyOf(ctx.context.user));
    } catch (error) {
      watch.cancel();
      this.#contexts.delete(taskId);
      throw error;
    }

    const status = ({ state, text, data }: TaskUpdate) => ({
      state,
      message: agentMessage(contextId, answerParts(text, data), taskId),
      timestamp: new Date().toISOString(),
    });
    const fields = sessionFields(session);
    const follow: FollowedSession = { intent: opening.kind, network: session.network, sessionToken: session.sessionToken, stage: session.stage };
    const task: Task = {
      id: taskId,
      contextId,
      status: status({ state: TaskState.TASK_STATE_SUBMITTED, text: 'Session opened' }),
      artifacts: [sessionArtifact(opening.kind, fields)],
      history: [ctx.userMessage],
      metadata: { [SESSION_METADATA]: follow },
    };
    bus.publish(AgentEvent.task(task));
    const update = (change: TaskUpdate) => bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(change), metadata: undefined }));

    // auth-required (an interrupted state): a blocking message/send returns the task at this update, while the
    // human proves their identity; the task then moves on by itself
    update({ state: TaskState.TASK_STATE_AUTH_REQUIRED, text: session.humanInstructions.join(' '), data: fields });
    const end = await watch
      .follow(session.sessionToken, session.stage, (current) => update(workingUpdate(current)))
      .finally(() => {
        this.#contexts.delete(taskId);
      });
    const final = finalUpdate(end);
    if (!final) return; // canceled: cancelTask finished the bus
    update(final);
    bus.finished();
  }
}
