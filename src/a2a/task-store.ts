// A2A tasks on the store port (sqlite by default), so that tasks/get answers after a restart of the service.
// Each task is kept as its protobuf JSON under a2a:task:<id>; an index of the most recent task ids serves
// ListTasks (filtered by context and state, newest first, offset page tokens).
import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import type { KeyValueStore } from '../store/key-value-store.js';

/** How long a task (and its push configs) is kept after its last change. */
export const TASK_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const INDEX_KEY = 'a2a:tasks';
const INDEX_LIMIT = 1000;
const DEFAULT_PAGE_SIZE = 50;

const taskKey = (id: string) => `a2a:task:${id}`;

export class KeyValueTaskStore implements TaskStore {
  constructor(private readonly store: KeyValueStore) {}

  async save(task: Task): Promise<void> {
    await this.store.set(taskKey(task.id), Task.toJSON(task), TASK_TTL_MS);
    await this.store.update<string[]>(INDEX_KEY, (ids = []) => [task.id, ...ids.filter((id) => id !== task.id)].slice(0, INDEX_LIMIT));
  }

  async load(taskId: string): Promise<Task | undefined> {
    const json = await this.store.get<unknown>(taskKey(taskId));
    return json === undefined ? undefined : Task.fromJSON(json);
  }

  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const ids = (await this.store.get<string[]>(INDEX_KEY)) ?? [];
    const tasks: Task[] = [];
    for (const id of ids) {
      const task = await this.load(id);
      if (!task) continue;
      if (params.contextId && task.contextId !== params.contextId) continue;
      if (params.status && task.status?.state !== params.status) continue;
      tasks.push(task);
    }
    const pageSize = params.pageSize && params.pageSize > 0 ? params.pageSize : DEFAULT_PAGE_SIZE;
    const offset = /^\d+$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const page = tasks.slice(offset, offset + pageSize).map((task) =>
      params.historyLength !== undefined ? { ...task, history: params.historyLength > 0 ? task.history.slice(-params.historyLength) : [] } : task,
    );
    return {
      tasks: page,
      nextPageToken: offset + pageSize < tasks.length ? String(offset + pageSize) : '',
      pageSize,
      totalSize: tasks.length,
    };
  }

  /** Tasks not yet in a final state (submitted, working, auth-required, input-required), newest first. */
  async openTasks(): Promise<Task[]> {
    const open = new Set([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_AUTH_REQUIRED, TaskState.TASK_STATE_INPUT_REQUIRED]);
    const tasks: Task[] = [];
    for (const id of (await this.store.get<string[]>(INDEX_KEY)) ?? []) {
      const task = await this.load(id);
      if (task?.status && open.has(task.status.state)) tasks.push(task);
    }
    return tasks;
  }
}
