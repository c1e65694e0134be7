// A stream of a task that another instance runs: the SDK streams a task's updates from the execution bus of the
// process running it, and a resubscription that reaches another instance would get the task once and end. Here the
// task is followed through the shared store instead: read again whenever its instance saves it (the task store's
// notice) and at least every `pollMs`, each new status streamed as the SDK streams one, until a final state.
import { type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { type KeyValueTaskStore, OPEN_STATES } from './task-store.js';

const isOpen = (task: Task): boolean => OPEN_STATES.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);

export async function* storedTaskUpdates(tasks: KeyValueTaskStore, task: Task, pollMs = 1_000): AsyncGenerator<StreamResponse, void, undefined> {
  let woken = false;
  let wake: (() => void) | undefined;
  const unsubscribe = tasks.onChange(task.id, () => {
    woken = true;
    wake?.();
  });
  try {
    let last = task;
    while (isOpen(last)) {
      if (!woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      woken = false;
      wake = undefined;
      const current = await tasks.load(task.id);
      // gone (expired, or sealed under another secret): nothing more to stream
      if (!current?.status) return;
      if (current.status.state !== last.status?.state || current.status.timestamp !== last.status?.timestamp) {
        yield {
          payload: { $case: 'statusUpdate', value: { taskId: task.id, contextId: task.contextId, status: current.status, metadata: undefined } },
        };
      }
      last = current;
    }
  } finally {
    unsubscribe();
  }
}
