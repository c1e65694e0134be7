// The A2A request handler: the SDK's DefaultRequestHandler, held and called through its public methods, plus what
// the protocol expects of a server and the SDK leaves to it.
// Request checks, refused as JSON-RPC invalid-params errors (-32602) that say what to fix: a message needs at least
// one part and comes from the user, history lengths are not negative, page sizes are 1-100.
// Task rules: a register/deregister task follows its session by itself and takes no further message
// (UnsupportedOperationError, as a finished task does); over v0.3 a task already canceled is not cancelable again
// (TaskNotCancelableError: A2A v0.3.0 §8.2 names canceled among the states it covers), while v1.0 keeps the SDK's
// idempotent cancel (v1.0 §3.3.1: "Cancel Task operations are idempotent"); a push config asked for without its id
// is the task's own.
// Streams: subscribing to any task that is not final streams its later updates until it ends. The SDK streams the
// turn running on this instance, if any, and ends after it; the task is then followed through the shared store
// (stored-task-stream.ts): the next turn of a conversation (sent by any client, to any instance), a session
// followed elsewhere or resumed after a restart.
// Answers at once: a new message whose turn completes without a session (a query, or a question back) is answered
// by the answerer in the same turn and saved once, without the SDK's bus, queue and result manager, which a task
// that never runs on cost most of its time. A push config given with it is kept for the task and told of it, as the
// SDK does for the tasks it runs.
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { Role, TaskState } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  type A2ARequestHandler,
  type AgentExecutor,
  DefaultRequestHandler,
  type DefaultRequestHandlerOptions,
  type ExecutionEventBusManager,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { timeOrderedId } from '../core/time-ordered-id.js';
import { callerGoneOf } from './client-address.js';
import { SESSION_METADATA } from './session-task.js';
import { isOpenStatus, noteShown, type ShownTask, storedTaskUpdates } from './stored-task-stream.js';
import type { KeyValueTaskStore } from './task-store.js';

/** Answers a turn that needs no session in the same turn (RegistryAgentExecutor does). */
export interface TurnAnswerer {
  /** The task the turn leaves, for a message that starts one (ids set); undefined when the turn must run (a session). */
  answerAtOnce(turn: { taskId: string; contextId: string; userMessage: Message }): Promise<Task | undefined>;
}

export interface RegistryRequestHandlerParts {
  card: AgentCard;
  /** Where tasks are kept (durable: tasks/get after a restart, streams across instances). */
  tasks: KeyValueTaskStore;
  /** Runs every turn the SDK runs. */
  executor: AgentExecutor;
  /** Answers new messages at once where it can; without one, the SDK runs every message. */
  answerer?: TurnAnswerer;
  buses: ExecutionEventBusManager;
  pushConfigs: PushNotificationStore;
  push: PushNotificationSender;
  options?: DefaultRequestHandlerOptions;
}

function checkHistoryLength(historyLength: number | undefined): void {
  if (historyLength !== undefined && (!Number.isInteger(historyLength) || historyLength < 0)) {
    throw new RequestMalformedError(`historyLength must be a whole number of messages, 0 or more; got ${historyLength}`);
  }
}

function checkSend(params: SendMessageRequest): void {
  const message = params.message;
  if (!message || message.parts.length === 0) {
    throw new RequestMalformedError('message.parts must hold at least one part, e.g. a data part {"intent": "help"} or a text part "help"');
  }
  if (message.role !== Role.ROLE_USER) throw new RequestMalformedError('message.role must be user: the caller speaks as the user');
  checkHistoryLength(params.configuration?.historyLength);
}

/** A v0.3 request: the JSON-RPC handler names no version for one sent without A2A-Version. */
const isLegacy = (context: ServerCallContext): boolean => !context.requestedVersion || context.requestedVersion === '0.3';

export class RegistryRequestHandler implements A2ARequestHandler {
  readonly #sdk: DefaultRequestHandler;
  readonly #card: AgentCard;
  readonly #tasks: KeyValueTaskStore;
  readonly #answerer: TurnAnswerer | undefined;
  readonly #pushConfigs: PushNotificationStore;
  readonly #push: PushNotificationSender;

  constructor(parts: RegistryRequestHandlerParts) {
    this.#sdk = new DefaultRequestHandler(
      parts.card,
      parts.tasks,
      parts.executor,
      parts.buses,
      parts.pushConfigs,
      parts.push,
      undefined,
      undefined,
      parts.options,
    );
    this.#card = parts.card;
    this.#tasks = parts.tasks;
    this.#answerer = parts.answerer;
    this.#pushConfigs = parts.pushConfigs;
    this.#push = parts.push;
  }

  getAgentCard(): Promise<AgentCard> {
    return this.#sdk.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return this.#sdk.getAuthenticatedExtendedAgentCard(params, context);
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checkSend(params);
    await this.#checkContinuation(params);
    return (await this.#answerAtOnce(params, context)) ?? this.#sdk.sendMessage(params, context);
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    checkSend(params);
    await this.#checkContinuation(params);
    yield* this.#sdk.sendMessageStream(params, context);
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checkHistoryLength(params.historyLength);
    return this.#sdk.getTask(params, context);
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checkHistoryLength(params.historyLength);
    if (params.pageSize !== undefined && (!Number.isInteger(params.pageSize) || params.pageSize < 1 || params.pageSize > 100)) {
      throw new RequestMalformedError(`pageSize must be 1 to 100; got ${params.pageSize}`);
    }
    return this.#sdk.listTasks(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    if (isLegacy(context) && params.id) {
      const task = await this.#tasks.load(params.id);
      if (task?.status?.state === TaskState.TASK_STATE_CANCELED) throw new TaskNotCancelableError(`Task ${params.id} is already canceled`);
    }
    return this.#sdk.cancelTask(params, context);
  }

  /** Streams the task's updates until it is final, the task is gone, or the caller leaves. */
  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    let shown: ShownTask | undefined;
    for await (const event of this.#sdk.resubscribe(params, context)) {
      shown = noteShown(shown, event);
      yield event;
    }
    // the SDK's stream ended with the turn running here (or at once, with none): an open task moves on elsewhere
    if (shown && isOpenStatus(shown.status)) yield* storedTaskUpdates(this.#tasks, shown, callerGoneOf(context.user));
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.#sdk.createTaskPushNotificationConfig(params, context);
  }

  /**
   * Without a config id (v0.3's TaskIdParams form of tasks/pushNotificationConfig/get, v0.3.0 §7.6: "the current push
   * notification configuration for a specified task"): the config kept under the task's own id, else the task's only
   * one. The SDK looks for the id "" instead.
   */
  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    if (!params.id && params.taskId) {
      const configs = await this.#pushConfigs.load(params.taskId, context);
      const only = configs.find((config) => config.id === params.taskId) ?? (configs.length === 1 ? configs[0] : undefined);
      if (only?.id) return this.#sdk.getTaskPushNotificationConfig({ ...params, id: only.id }, context);
    }
    return this.#sdk.getTaskPushNotificationConfig(params, context);
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#sdk.listTaskPushNotificationConfigs(params, context);
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.#sdk.deleteTaskPushNotificationConfig(params, context);
  }

  /**
   * A message that starts a task the answerer completes in the same turn (a query, or input required): the task it
   * leaves, saved once and returned as the SDK would return it (same ids, history, artifacts; history cut to
   * historyLength). Undefined for anything else (a session, a continued task, extensions to negotiate, a failure
   * the answerer throws): the SDK runs those, and a query that throws here is only a read, run again there.
   */
  async #answerAtOnce(params: SendMessageRequest, context: ServerCallContext): Promise<Task | undefined> {
    const message = params.message;
    if (!this.#answerer || !message?.messageId || message.taskId || (message.referenceTaskIds?.length ?? 0) > 0) return undefined;
    if ((this.#card.capabilities?.extensions?.length ?? 0) > 0) return undefined;
    // time-ordered ids: the store appends the task where the last one went (time-ordered-id.ts)
    const taskId = timeOrderedId();
    const contextId = message.contextId || timeOrderedId();
    let task: Task | undefined;
    try {
      task = await this.#answerer.answerAtOnce({ taskId, contextId, userMessage: { ...message, contextId, taskId } });
    } catch {
      return undefined;
    }
    if (!task) return undefined;
    // the card names no extension: none of those the caller asked for is active (as the SDK filters them)
    if (context.requestedExtensions) context.setRequestedExtensions([]);
    // the webhook given with the message is the task's: checked and kept before the task is (a refusal leaves none)
    const webhook = this.#card.capabilities?.pushNotifications ? params.configuration?.taskPushNotificationConfig : undefined;
    if (webhook) await this.#pushConfigs.save(taskId, context, { ...structuredClone(webhook), taskId });
    await this.#tasks.saveNew(task, context);
    // told of the task as it stands, in the background (deliveries are retried; the sender logs their failures)
    if (webhook) {
      const told = structuredClone(task);
      void this.#push.send({ payload: { $case: 'task', value: told } }, context, told).catch(() => undefined);
    }
    const historyLength = params.configuration?.historyLength;
    if (historyLength !== undefined) task.history = historyLength <= 0 ? [] : task.history.slice(-historyLength);
    return task;
  }

  /** A message for an open register/deregister task: refused, the task moves on by itself. */
  async #checkContinuation(params: SendMessageRequest): Promise<void> {
    const taskId = params.message?.taskId;
    if (!taskId) return;
    const task = await this.#tasks.load(taskId);
    if (task?.metadata?.[SESSION_METADATA] !== undefined && isOpenStatus(task.status)) {
      throw new UnsupportedOperationError(
        `Task ${taskId} follows a session and completes by itself when the human acts: it takes no message. Follow it with tasks/get, a stream (tasks/resubscribe, SubscribeToTask) or a webhook`,
      );
    }
  }
}
