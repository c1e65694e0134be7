// The SDK's request handler plus the request checks the protocol expects of a server and the SDK leaves to it:
// a message needs at least one part and comes from the user, history lengths are not negative, page sizes are
// 1-100, and a webhook given with the message is for a message that starts a task (register, deregister):
// other intents answer at once and would leave the config behind unused. Refusals are JSON-RPC
// invalid-params errors (-32602) that say what to fix.
// Two task rules too: a register/deregister task follows its session by itself and takes no further message
// (UnsupportedOperationError, as a finished task does); and over v0.3 a task already canceled is not cancelable
// again (TaskNotCancelableError: A2A v0.3.0 §8.2 names canceled among the states it covers), while v1.0 keeps
// the SDK's idempotent cancel (v1.0 §3.3.1: "Cancel Task operations are idempotent"). A push config asked for
// without its id is the task's own. A resubscription to a task that another instance runs follows it through the
// shared store (stored-task-stream.ts) instead of ending after the task itself.
import {
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  DefaultRequestHandler,
  type ExecutionEventBusManager,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { timeOrderedId } from '../core/time-ordered-id.js';
import { RegistryAgentExecutor } from './executor.js';
import { inputParts, parseIntent, TASK_INTENTS } from './intents.js';
import { SESSION_METADATA } from './session-task.js';
import { storedTaskUpdates } from './stored-task-stream.js';
import { KeyValueTaskStore, OPEN_STATES } from './task-store.js';

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
  if (params.configuration?.taskPushNotificationConfig) {
    const parsed = parseIntent(inputParts(message));
    const intent = parsed.ok ? parsed.request.intent : parsed.intent;
    if (!intent || !TASK_INTENTS.includes(intent)) {
      throw new RequestMalformedError(
        `A push notification config is for a message that starts a task (${TASK_INTENTS.join(', ')}); ${intent ?? 'this message'} is answered at once: send it without one`,
      );
    }
  }
}

/** A v0.3 request: the JSON-RPC handler names no version for one sent without A2A-Version. */
const isLegacy = (context: ServerCallContext): boolean => !context.requestedVersion || context.requestedVersion === '0.3';

export class RegistryRequestHandler extends DefaultRequestHandler {
  readonly #tasks: TaskStore;
  readonly #buses: ExecutionEventBusManager | undefined;
  readonly #configs: PushNotificationStore | undefined;
  readonly #card: AgentCard;
  /** The executor, when it can answer a query in the same turn (RegistryAgentExecutor). */
  readonly #executor: RegistryAgentExecutor | undefined;

  constructor(...args: ConstructorParameters<typeof DefaultRequestHandler>) {
    super(...args);
    this.#card = args[0];
    this.#tasks = args[1];
    this.#executor = args[2] instanceof RegistryAgentExecutor ? args[2] : undefined;
    this.#buses = args[3];
    this.#configs = args[4];
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    // without the bus manager in hand, nothing says the task runs elsewhere
    const runsHere = this.#buses ? this.#buses.getByTaskId(params.id, context) !== undefined : true;
    let task: Task | undefined;
    for await (const event of super.resubscribe(params, context)) {
      if (event.payload?.$case === 'task') task = event.payload.value;
      yield event;
    }
    // the SDK's stream ended after the task: a session task runs on another instance (or on none, until one
    // resumes it); any other open task waits for a message, which starts a turn of its own
    if (!runsHere && task?.metadata?.[SESSION_METADATA] !== undefined && this.#tasks instanceof KeyValueTaskStore) {
      yield* storedTaskUpdates(this.#tasks, task);
    }
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    checkSend(params);
    await this.#checkContinuation(params, context);
    return (await this.#answerAtOnce(params, context)) ?? super.sendMessage(params, context);
  }

  /**
   * A message that starts a task the executor completes in the same turn (a query, or input required): the task it
   * leaves, saved once and returned, as the SDK's machinery would save and return it (same ids, history, artifacts;
   * history cut to historyLength), without that machinery's event bus, queue, store lock, reload and copies, which a
   * task that never runs on cost most of its time. Undefined for anything else (a session, a continued task, a push
   * config, extensions to negotiate, a failure the executor throws): the SDK runs those, and a query that throws here
   * is only a read, run again there.
   */
  async #answerAtOnce(params: SendMessageRequest, context: ServerCallContext): Promise<Task | undefined> {
    const message = params.message;
    if (!this.#executor || !message?.messageId || message.taskId || (message.referenceTaskIds?.length ?? 0) > 0) return undefined;
    if (params.configuration?.taskPushNotificationConfig || (this.#card.capabilities?.extensions?.length ?? 0) > 0) return undefined;
    // time-ordered ids: the store appends the task where the last one went (time-ordered-id.ts)
    const taskId = timeOrderedId();
    const contextId = message.contextId || timeOrderedId();
    let task: Task | undefined;
    try {
      task = await this.#executor.answerAtOnce({ taskId, contextId, userMessage: { ...message, contextId, taskId } });
    } catch {
      return undefined;
    }
    if (!task) return undefined;
    // the card names no extension: none of those the caller asked for is active (as the SDK filters them)
    if (context.requestedExtensions) context.setRequestedExtensions([]);
    await (this.#tasks instanceof KeyValueTaskStore ? this.#tasks.saveNew(task, context) : this.#tasks.save(task, context));
    const historyLength = params.configuration?.historyLength;
    if (historyLength !== undefined) task.history = historyLength <= 0 ? [] : task.history.slice(-historyLength);
    return task;
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    checkSend(params);
    await this.#checkContinuation(params, context);
    yield* super.sendMessageStream(params, context);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    if (isLegacy(context) && params.id) {
      const task = await this.#tasks.load(params.id, context);
      if (task?.status?.state === TaskState.TASK_STATE_CANCELED) throw new TaskNotCancelableError(`Task ${params.id} is already canceled`);
    }
    return super.cancelTask(params, context);
  }

  /** A message for an open register/deregister task: refused, the task moves on by itself. */
  async #checkContinuation(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (!taskId) return;
    const task = await this.#tasks.load(taskId, context);
    if (task?.metadata?.[SESSION_METADATA] !== undefined && OPEN_STATES.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
      throw new UnsupportedOperationError(
        `Task ${taskId} follows a session and completes by itself when the human acts: it takes no message. Follow it with tasks/get, a stream (tasks/resubscribe, SubscribeToTask) or a webhook`,
      );
    }
  }

  /**
   * Without a config id (v0.3's TaskIdParams form of tasks/pushNotificationConfig/get, v0.3.0 §7.6: "the current push
   * notification configuration for a specified task"): the config kept under the task's own id, else the task's only
   * one. The SDK looks for the id "" instead.
   */
  override async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    if (!params.id && params.taskId) {
      const configs = await this.#configs?.load(params.taskId, context);
      const only = configs?.find((config) => config.id === params.taskId) ?? (configs?.length === 1 ? configs[0] : undefined);
      if (only?.id) return super.getTaskPushNotificationConfig({ ...params, id: only.id }, context);
    }
    return super.getTaskPushNotificationConfig(params, context);
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    checkHistoryLength(params.historyLength);
    return super.getTask(params, context);
  }

  override async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    checkHistoryLength(params.historyLength);
    if (params.pageSize !== undefined && (!Number.isInteger(params.pageSize) || params.pageSize < 1 || params.pageSize > 100)) {
      throw new RequestMalformedError(`pageSize must be 1 to 100; got ${params.pageSize}`);
    }
    return super.listTasks(params, context);
  }
}
