// The A2A executor: reads the intent from the message (intents.ts), makes the one service call it maps to, and
// answers every message with a Task. The answer's data part carries the same fields as the matching REST response;
// every rule (limits, which kind of token, waiting for the human) is the services'.
// - A query (lookup, verify, freshness, status, help) completes at once, its answer in an artifact; a failed one
//   fails, its status message carrying the REST error and status.
// - A message whose intent or a field is missing, or whose value the service refuses (400), leaves the task
//   input-required: its status message says what to send, its metadata keeps what was given (task-input.ts), and a
//   follow-up message on the same task completes the request, or ends the conversation when it only says so
//   ("done", "never mind"): the task completes without an answer.
// - `register` and `deregister` open a session: the task stays open while the human acts, its artifact carries the
//   deep link, QR data and session token, and it completes (or fails) by itself as the session watcher reports.
import { type Artifact, type Message, type Task, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { serviceErrorOf } from '../core/errors.js';
import { PolicyRefusalError } from '../core/policy-refusal.js';
import type { Services } from '../services/index.js';
import type { SessionOpening } from '../sessions/sessions.js';
import { answerArtifact, answerIntent } from './answers.js';
import { rateLimitKeyOf } from './client-address.js';
import { closesConversation, type GatheredInput, INTENTS, type IntentRequest, inputParts, parseIntent, requestFields } from './intents.js';
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
import { gatheredInputOf, pendingInput } from './task-input.js';

/** How one turn leaves the task. */
interface Outcome {
  state: TaskState;
  /** The status message (words for people, fields for programs). */
  text?: string;
  data?: object;
  artifacts?: Artifact[];
  metadata?: Record<string, unknown>;
}

/**
 * The longest status text the agent keeps in a task (the words of a question or a refusal, also in its data part's
 * error): a refusal may quote the caller's value, and a task keeps its status message twice (status and history), so
 * an unbounded quote would multiply what a message makes the store hold.
 */
const MAX_WORDS = 1_000;
const bounded = (text: string): string => (text.length > MAX_WORDS ? `${text.slice(0, MAX_WORDS - 1)}…` : text);

/** What a turn is about: the task's ids, the message (with those ids set), the task as it was (a continued one). */
type Turn = Pick<RequestContext, 'taskId' | 'contextId' | 'userMessage' | 'task'>;

/** The task's history with this turn's message (the SDK appended it to a continued task; here with its ids set). */
function historyOf(ctx: Turn): Message[] {
  const message = ctx.userMessage;
  if (!ctx.task) return [message];
  const history = ctx.task.history.map((m) => (m.messageId === message.messageId ? message : m));
  return history.some((m) => m.messageId === message.messageId) ? history : [...history, message];
}

/** The task as this turn leaves it. */
function settledTask(ctx: Turn, outcome: Outcome): Task {
  const { taskId, contextId } = ctx;
  const message = outcome.text === undefined ? undefined : agentMessage(contextId, answerParts(outcome.text, outcome.data), taskId);
  return {
    id: taskId,
    contextId,
    status: { state: outcome.state, message, timestamp: new Date().toISOString() },
    artifacts: [...(ctx.task?.artifacts ?? []), ...(outcome.artifacts ?? [])],
    // the agent's words join the history, as the status updates of a session task do
    history: message ? [...historyOf(ctx), message] : historyOf(ctx),
    metadata: { ...ctx.task?.metadata, ...outcome.metadata },
  };
}

/**
 * A turn the service refused: a ServiceError (also from under viem's errors: a chain that does not answer), as the
 * REST error middleware answers it; anything else is thrown on.
 */
function failedTurn(ctx: Turn, request: IntentRequest, thrown: unknown): Task {
  const error = serviceErrorOf(thrown);
  if (!error) throw thrown;
  // The REST body of the same failure ({"error": message}, a policy's refusal naming the policy), plus its HTTP status
  // and its Retry-After (an exhausted quota) for the caller's logic.
  const words = bounded(error.message);
  const data = {
    error: words,
    status: error.status,
    intent: request.intent,
    ...(error instanceof PolicyRefusalError ? { policy: error.policy } : {}),
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
  };
  if (error.status === 400) {
    // a value the service refuses, named in its message: the caller sends it again, corrected
    const gathered: GatheredInput = { intent: request.intent, fields: requestFields(request.fields) };
    return inputRequired(ctx, gathered, words, { ...data, missing: [] });
  }
  return settledTask(ctx, { state: TaskState.TASK_STATE_FAILED, text: words, data });
}

/** Input required: the status message says what to send, the metadata keeps what was given (task-input.ts). */
const inputRequired = (
  ctx: Turn,
  gathered: GatheredInput,
  text: string,
  data: { error: string; missing: string[]; [field: string]: unknown },
): Task => settledTask(ctx, { state: TaskState.TASK_STATE_INPUT_REQUIRED, text, data, metadata: pendingInput(gathered, data.missing) });

export class RegistryAgentExecutor implements AgentExecutor {
  /** The context of each open session task, for its canceled update. */
  readonly #contexts = new Map<string, string>();

  constructor(private readonly services: Services) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const turn = await this.#turn(ctx);
    if (turn.kind === 'session') {
      try {
        return await this.#sessionTask(ctx, bus, turn.request.opening as SessionOpening);
      } catch (thrown) {
        bus.publish(AgentEvent.task(failedTurn(ctx, turn.request, thrown)));
      }
    } else bus.publish(AgentEvent.task(turn.task));
    bus.finished();
  };

  /**
   * The task as a turn that needs no session leaves it (a query answered or failed, or input required), for a
   * message that starts a task (`turn` names its ids and carries the message with them); undefined when the message
   * opens a session, which the SDK's machinery runs. Nothing is stored here: the caller saves the task.
   */
  async answerAtOnce(turn: { taskId: string; contextId: string; userMessage: Message }): Promise<Task | undefined> {
    const answered = await this.#turn({ ...turn, task: undefined });
    return answered.kind === 'task' ? answered.task : undefined;
  }

  /** The task as a turn leaves it, or the session the message opens (the caller runs it). */
  async #turn(ctx: Turn): Promise<{ kind: 'task'; task: Task } | { kind: 'session'; request: IntentRequest }> {
    const parts = inputParts(ctx.userMessage);
    const parsed = parseIntent(parts, gatheredInputOf(ctx.task));
    if (!parsed.ok && ctx.task && closesConversation(parts)) {
      const text = 'Conversation closed without a request: send a new message to ask something (say "help" for the list)';
      return { kind: 'task', task: settledTask(ctx, { state: TaskState.TASK_STATE_COMPLETED, text, data: { closed: true } }) };
    }
    if (!parsed.ok) {
      const { missing, intent, gathered } = parsed;
      const message = bounded(parsed.message);
      return {
        kind: 'task',
        task: inputRequired(ctx, gathered, message, { error: message, missing, intents: [...INTENTS], ...(intent ? { intent } : {}) }),
      };
    }
    const { request } = parsed;
    if (request.opening) return { kind: 'session', request };
    try {
      const [text, data] = await answerIntent(this.services, request);
      return {
        kind: 'task',
        task: settledTask(ctx, {
          state: TaskState.TASK_STATE_COMPLETED,
          artifacts: [answerArtifact(request.intent, text, data)],
          // what the conversation asked, now answered (kept for tasks/get; nothing is missing)
          ...(ctx.task ? { metadata: pendingInput({ intent: request.intent, fields: requestFields(request.fields) }, []) } : {}),
        }),
      };
    } catch (thrown) {
      return { kind: 'task', task: failedTurn(ctx, request, thrown) };
    }
  }

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
      history: historyOf(ctx),
      metadata: { ...ctx.task?.metadata, [SESSION_METADATA]: follow },
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
