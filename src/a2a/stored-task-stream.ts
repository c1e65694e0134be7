// A stream of a task that no turn runs on this instance now: a conversation waiting for its next message, a session
// task followed by another instance (or by none, until one resumes it). The SDK streams a task's updates from the
// execution bus of a turn running here, and ends when there is none. Here the task is followed through the store
// instead: read again whenever any instance saves it (the task store's notice) and at least every `pollMs`, each new
// artifact and status streamed as the SDK streams them, until a final state, until the task is gone, or until the
// caller leaves (`until`).
import { type Artifact, type StreamResponse, type Task, TaskState, type TaskStatus } from '@a2a-js/sdk';
import { type KeyValueTaskStore, OPEN_STATES } from './task-store.js';

/** What a stream has shown of a task so far. */
export interface ShownTask {
  id: string;
  contextId: string;
  status: TaskStatus | undefined;
  artifactIds: Set<string>;
}

export const isOpenStatus = (status: TaskStatus | undefined): boolean => OPEN_STATES.has(status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);

/** Notes in `shown` what `event` shows of the task (the first event is the task itself). */
export function noteShown(shown: ShownTask | undefined, event: StreamResponse): ShownTask | undefined {
  const payload = event.payload;
  if (payload?.$case === 'task') {
    const task: Task = payload.value;
    return { id: task.id, contextId: task.contextId, status: task.status, artifactIds: new Set(task.artifacts.map((a) => a.artifactId)) };
  }
  if (!shown) return undefined;
  if (payload?.$case === 'statusUpdate' && payload.value.taskId === shown.id) shown.status = payload.value.status;
  if (payload?.$case === 'artifactUpdate' && payload.value.artifact) shown.artifactIds.add(payload.value.artifact.artifactId);
  return shown;
}

const sameStatus = (a: TaskStatus | undefined, b: TaskStatus | undefined): boolean => a?.state === b?.state && a?.timestamp === b?.timestamp;

export async function* storedTaskUpdates(
  tasks: KeyValueTaskStore,
  shown: ShownTask,
  until?: AbortSignal,
  pollMs = 1_000,
): AsyncGenerator<StreamResponse, void, undefined> {
  // the first read is at once: the task may have moved since the caller's last event
  let noticed = true;
  let wake = (): void => undefined;
  const unsubscribe = tasks.onChange(shown.id, () => {
    noticed = true;
    wake();
  });
  const leave = (): void => wake();
  until?.addEventListener('abort', leave);
  const { id: taskId, contextId } = shown;
  try {
    while (!until?.aborted) {
      if (!noticed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      noticed = false;
      wake = () => undefined;
      if (until?.aborted) return;
      const current = await tasks.load(taskId);
      // gone (expired, or sealed under another secret): nothing more to stream
      if (!current?.status) return;
      for (const artifact of current.artifacts.filter((a: Artifact) => !shown.artifactIds.has(a.artifactId))) {
        shown.artifactIds.add(artifact.artifactId);
        yield { payload: { $case: 'artifactUpdate', value: { taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined } } };
      }
      if (!sameStatus(current.status, shown.status)) {
        shown.status = current.status;
        yield { payload: { $case: 'statusUpdate', value: { taskId, contextId, status: current.status, metadata: undefined } } };
      }
      if (!isOpenStatus(current.status)) return;
    }
  } finally {
    unsubscribe();
    until?.removeEventListener('abort', leave);
  }
}
