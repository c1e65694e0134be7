// After a restart: the register / deregister tasks a previous process left open follow their sessions again
// (the session watcher), saving each update straight to the task store (tasks/get sees it) and notifying their
// webhooks; the streams of the old process are gone. With several instances on one store, each task is followed
// by one of them: a task whose watch another live instance holds (its lease) is left to it, and one whose instance
// died is taken over by the next pass (the agent runs this at start and periodically).
import { type Task, TaskState, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { type PushNotificationSender, ServerCallContext } from '@a2a-js/sdk/server';
import type { SessionWatcher } from '../sessions/session-watch.js';
import { agentMessage, answerParts } from './parts.js';
import { type FollowedSession, finalUpdate, SESSION_METADATA, type TaskUpdate, workingUpdate } from './session-task.js';
import { type KeyValueTaskStore, OPEN_STATES } from './task-store.js';

export async function resumeOpenTasks(tasks: KeyValueTaskStore, watcher: SessionWatcher, push: PushNotificationSender): Promise<void> {
  for (const task of await tasks.openTasks()) {
    const follow = task.metadata?.[SESSION_METADATA] as Partial<FollowedSession> | undefined;
    if (!follow?.sessionToken || (follow.intent !== 'register' && follow.intent !== 'deregister')) continue;
    if (!(await watcher.claim(task.id))) continue;
    // sessions followed before the restart keep their watch, even past the cap
    const watch = watcher.reserve(task.id, { evenWhenFull: true });
    const context = new ServerCallContext();
    const update = async ({ state, text, data }: TaskUpdate) => {
      const current = (await tasks.load(task.id)) ?? task;
      // canceled meanwhile (tasks/cancel on a resumed task reaches the store, not this watch): stop here
      if (!OPEN_STATES.has(current.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) {
        watch.cancel();
        return;
      }
      const message = agentMessage(task.contextId, answerParts(text, data), task.id);
      const event: TaskStatusUpdateEvent = {
        taskId: task.id,
        contextId: task.contextId,
        status: { state, message, timestamp: new Date().toISOString() },
        metadata: undefined,
      };
      const saved: Task = { ...current, status: event.status };
      await tasks.save(saved, context);
      // delivered in the background (retries can take seconds), in order per task
      void push.send({ payload: { $case: 'statusUpdate', value: event } }, context, saved).catch(() => undefined);
    };
    void watch
      .follow(follow.sessionToken, follow.stage ?? 'qr-ready', (status) => update(workingUpdate(status)))
      .then(async (end) => {
        const final = finalUpdate(end);
        if (final) await update(final);
      })
      .catch(() => undefined);
  }
}
