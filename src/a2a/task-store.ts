// A2A tasks on the store port (sqlite by default), so that tasks/get answers after a restart of the service.
// Each task is kept as its protobuf JSON under a2a:task:<id>. Two indexes of task ids, most recent first, serve
// ListTasks (filtered by context, state and status time, newest first, offset page tokens): the register and
// deregister tasks (also what a restart resumes), and per client its other tasks (queries, conversations), so
// that no client's queries push anyone's session tasks out of either.
//
// A task is read by id (the id, handed only to its creator, is the capability), but listed only to the client
// that created it: tasks carry session tokens, and the service has no accounts, so the creator is the client
// address the server's user builder names (recorded at the task's first save, beside the sealed task in its row).
// Artifacts are listed only when asked for (includeArtifacts), as the protocol says.
//
// No usable session token at rest: a register/deregister task holds its session token in the artifact (the
// client uses it), in every status message (each carries the refreshed token) and in its metadata (a resume
// after a restart follows the session with it). Each task is therefore kept sealed as a whole (AES-256-GCM,
// sealed-values.ts, the store key as associated data) and opened when the SDK loads it to answer tasks/get, a
// stream or a resume, so the client receives exactly the token it got before. Sealing the whole value rather
// than the token fields covers every copy, including any a later SDK adds. Keeping a reference and minting a
// fresh token on read is not possible: a register session token carries the key the service generated, which
// is kept nowhere else.
//
// Streams of a task no turn runs here (stored-task-stream.ts): each save of a task that already was (a turn, a
// session update, a cancel) is published on the events port under the task's topic, so a subscriber on this or
// another instance sharing the store hears of it at once. A task saved for the first time has no subscriber yet.
//
// Every message makes a task, and anyone may send messages: what a task keeps, and how long, bounds what a client can
// make the store hold (with the per-client message rate and size, a2a/message-admission.ts). A register/deregister
// task is kept whole for a week (its human may take time; tasks/get tells the outcome). A conversation waiting for
// input is kept whole, for its next turn, an hour after its last change. A task that followed no session and is
// finished (a query answered or failed, a conversation ended) keeps only its answer, its status and artifacts, for
// minutes: not the messages that led to it (the client sent them, and a status question carries a session token),
// nor the conversation's bookkeeping.
import { type ListTasksRequest, type ListTasksResponse, Task, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { type EventBus, InProcessEventBus } from '../store/event-bus.js';
import type { KeyValueStore } from '../store/key-value-store.js';
import type { SealedValues } from '../store/sealed-values.js';
import { SESSION_METADATA } from './session-task.js';

/** How long a register/deregister task is kept after its last change. */
export const TASK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** How long the tasks that follow no session are kept after their last change. */
export interface TaskLifetimes {
  /** A finished one (its answer was in the reply; tasks/get may ask again shortly). */
  queryMs: number;
  /** One that waits for input (the conversation's next turn). */
  conversationMs: number;
}

export const DEFAULT_TASK_LIFETIMES: TaskLifetimes = { queryMs: 10 * 60 * 1000, conversationMs: 60 * 60 * 1000 };

const followsSession = (task: Task): boolean => task.metadata?.[SESSION_METADATA] !== undefined;
const isOpen = (task: Task): boolean => OPEN_STATES.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
/** What is kept of a task: all of a session's or an open conversation's; of a finished query, its answer alone. */
const keptOf = (task: Task): Task => (followsSession(task) || isOpen(task) ? task : { ...task, history: [], metadata: {} });
/** The register/deregister tasks, newest first. */
const INDEX_KEY = 'a2a:tasks';
const INDEX_LIMIT = 1000;
/** A client's other tasks (queries, conversations), newest first. */
const clientIndexKey = (owner: string) => `a2a:tasks-of:${owner}`;
export const CLIENT_INDEX_LIMIT = 100;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** Task states in which a task still moves (everything but completed, failed, canceled, rejected). */
export const OPEN_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_SUBMITTED,
  TaskState.TASK_STATE_WORKING,
  TaskState.TASK_STATE_AUTH_REQUIRED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
]);

/**
 * An index of task ids, newest first, as the store keeps it: the JSON text of the array, a string, so that a store
 * reads and writes it whole (the stores' bigint reviver would otherwise visit every id on each read, and each save
 * reads and rewrites an index). Indexes kept as arrays by earlier versions are read as they are.
 */
type StoredIndex = string | string[];
const idsOf = (index: StoredIndex | undefined): string[] =>
  index === undefined ? [] : typeof index === 'string' ? (JSON.parse(index) as string[]) : index;
/** The index with `id` first (moved there if it was already in: never for a `fresh` id, just minted), at most `limit` ids. */
const withFirst =
  (id: string, limit: number, fresh: boolean) =>
  (index: StoredIndex | undefined): string => {
    const text = index === undefined ? '[]' : typeof index === 'string' ? index : JSON.stringify(index);
    const quoted = JSON.stringify(id);
    if ((!fresh && text.includes(quoted)) || /[",\\]/.test(id)) {
      return JSON.stringify([id, ...idsOf(index).filter((other) => other !== id)].slice(0, limit));
    }
    // a new id (every save of a new task): put in front and cut after `limit` ids as text, without parsing the
    // index (ids hold no comma, quote or backslash, so each comma ends one)
    const added = text === '[]' ? `[${quoted}]` : `[${quoted},${text.slice(1)}`;
    let cut = -1;
    for (let count = 0; count < limit; count++) {
      cut = added.indexOf(',', cut + 1);
      if (cut < 0) return added;
    }
    return `${added.slice(0, cut)}]`;
  };

const taskKey = (id: string) => `a2a:task:${id}`;
const taskTopic = (id: string) => `a2a-task:${id}`;
const ownerOf = (context: ServerCallContext | undefined): string | undefined => context?.user?.userName || undefined;

/** A task as the store keeps it: sealed, and beside it the client that created it (who may list it). */
interface KeptTask {
  sealed: string;
  owner?: string;
}
/**
 * What a task key holds: a KeptTask; from earlier versions, the sealed text alone (its owner under a separate key,
 * a2a:task-owner:<id>) or, before sealing, the task's JSON.
 */
type Kept = KeptTask | string | Record<string, unknown>;
const isKeptTask = (kept: Kept): kept is KeptTask => typeof kept === 'object' && typeof kept['sealed'] === 'string';
const legacyOwnerKey = (id: string) => `a2a:task-owner:${id}`;

export class KeyValueTaskStore implements TaskStore {
  constructor(
    private readonly store: KeyValueStore,
    /** Seals each task at rest (its session tokens). */
    private readonly sealed: SealedValues,
    /** Where task changes are published (streams on any instance sharing them); default: this process alone. */
    private readonly events: EventBus = new InProcessEventBus(),
    private readonly lifetimes: TaskLifetimes = DEFAULT_TASK_LIFETIMES,
  ) {}

  /** Calls `listener` after each later save of task `id` on any instance sharing the events; returns the unsubscribe. */
  onChange(id: string, listener: () => void): () => void {
    return this.events.subscribe(taskTopic(id), () => listener());
  }

  async save(task: Task, context?: ServerCallContext): Promise<void> {
    const key = taskKey(task.id);
    const sealed = this.sealed.seal(key, Task.toJSON(keptOf(task)));
    // the first save comes from the creating request; later ones (updates, a resumed task) keep its owner
    let legacy = false;
    await this.#write(task, context, false, (ttlMs) =>
      this.store.update<Kept>(
        key,
        (current) => {
          legacy = current !== undefined && !isKeptTask(current);
          return { sealed, owner: current === undefined ? ownerOf(context) : isKeptTask(current) ? current.owner : undefined };
        },
        ttlMs,
      ),
    );
    // a task an earlier version kept has its owner under a key of its own: kept as long as the task
    if (legacy) await this.store.update<string>(legacyOwnerKey(task.id), (owner) => owner, this.#ttlOf(task));
    // a hint: a failed publish leaves the other instances' streams to their poll
    this.events.publish(taskTopic(task.id), String(task.status?.state ?? '')).catch(() => undefined);
  }

  /** Saves a task no save has made yet (its id was minted for it): nothing there to read first. */
  async saveNew(task: Task, context?: ServerCallContext): Promise<void> {
    const key = taskKey(task.id);
    const kept: KeptTask = { sealed: this.sealed.seal(key, Task.toJSON(keptOf(task))), owner: ownerOf(context) };
    await this.#write(task, context, true, (ttlMs) => this.store.set<Kept>(key, kept, ttlMs));
  }

  /** The task's row (`write`) and its place in an index, made together: a store that commits the writes of a moment together (sqlite) commits these at once. */
  async #write(task: Task, context: ServerCallContext | undefined, fresh: boolean, write: (ttlMs: number) => Promise<unknown>): Promise<void> {
    const owner = ownerOf(context);
    const session = followsSession(task);
    await Promise.all([
      write(this.#ttlOf(task)),
      ...(session
        ? [this.store.update<StoredIndex>(INDEX_KEY, withFirst(task.id, INDEX_LIMIT, fresh))]
        : owner
          ? [this.store.update<StoredIndex>(clientIndexKey(owner), withFirst(task.id, CLIENT_INDEX_LIMIT, fresh), this.#clientIndexTtl)]
          : []),
    ]);
  }

  #ttlOf(task: Task): number {
    return followsSession(task) ? TASK_TTL_MS : isOpen(task) ? this.lifetimes.conversationMs : this.lifetimes.queryMs;
  }

  /** A client's index lives as long as the longest-lived task it lists. */
  get #clientIndexTtl(): number {
    return Math.max(this.lifetimes.queryMs, this.lifetimes.conversationMs);
  }

  async load(taskId: string): Promise<Task | undefined> {
    const kept = await this.store.get<Kept>(taskKey(taskId));
    return kept === undefined ? undefined : this.#open(taskId, kept);
  }

  #open(taskId: string, kept: Kept): Task | undefined {
    // tasks kept before sealing are plain JSON: still readable, and sealed at their next save
    if (typeof kept !== 'string' && !isKeptTask(kept)) return Task.fromJSON(kept);
    try {
      return Task.fromJSON(this.sealed.open<unknown>(taskKey(taskId), typeof kept === 'string' ? kept : kept.sealed));
    } catch {
      // sealed under another SESSION_SECRET: gone, like the session tokens it holds
      return undefined;
    }
  }

  /** The client that created the task: beside it, or for a task an earlier version saved first, under its own key. */
  async #ownerOf(taskId: string, kept: Kept): Promise<string | undefined> {
    return isKeptTask(kept) && kept.owner !== undefined ? kept.owner : this.store.get<string>(legacyOwnerKey(taskId));
  }

  async list(params: ListTasksRequest, context?: ServerCallContext): Promise<ListTasksResponse> {
    const caller = ownerOf(context);
    const own = caller ? idsOf(await this.store.get<StoredIndex>(clientIndexKey(caller))) : [];
    // a conversation that opened a session is in both
    const ids = [...new Set([...idsOf(await this.store.get<StoredIndex>(INDEX_KEY)), ...own])];
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : Number.NaN;
    const tasks: Task[] = [];
    for (const id of ids) {
      const kept = caller ? await this.store.get<Kept>(taskKey(id)) : undefined;
      if (kept === undefined || (await this.#ownerOf(id, kept)) !== caller) continue;
      const task = this.#open(id, kept);
      if (!task) continue;
      if (params.contextId && task.contextId !== params.contextId) continue;
      if (params.status && task.status?.state !== params.status) continue;
      if (!Number.isNaN(after) && !(Date.parse(task.status?.timestamp ?? '') >= after)) continue;
      tasks.push(task);
    }
    // newest status first across both indexes (a stable sort keeps each index's order for equal times)
    const statusTime = (task: Task) => Date.parse(task.status?.timestamp ?? '') || 0;
    tasks.sort((a, b) => statusTime(b) - statusTime(a));
    const pageSize = Math.min(params.pageSize && params.pageSize > 0 ? params.pageSize : DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    const offset = /^\d+$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const page = tasks.slice(offset, offset + pageSize).map((task) => ({
      ...task,
      metadata: undefined, // the executor's own bookkeeping
      artifacts: params.includeArtifacts ? task.artifacts : [],
      history: params.historyLength === undefined ? task.history : params.historyLength > 0 ? task.history.slice(-params.historyLength) : [],
    }));
    return {
      tasks: page,
      nextPageToken: offset + pageSize < tasks.length ? String(offset + pageSize) : '',
      pageSize,
      totalSize: tasks.length,
    };
  }

  /** Register/deregister tasks not yet in a final state (submitted, working, auth-required, input-required), newest first. */
  async openTasks(): Promise<Task[]> {
    const tasks: Task[] = [];
    for (const id of idsOf(await this.store.get<StoredIndex>(INDEX_KEY))) {
      const task = await this.load(id);
      if (task?.status && OPEN_STATES.has(task.status.state)) tasks.push(task);
    }
    return tasks;
  }
}
