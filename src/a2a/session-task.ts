// How a register or deregister task shows its session: the artifact handed over when the session opens, the
// status update of each new stage, and the final update of how the session ended (sessions/session-watch.ts).
import { randomUUID } from 'node:crypto';
import { type Artifact, TaskState } from '@a2a-js/sdk';
import type { NetworkName } from '../core/networks.js';
import type { SessionStage } from '../core/session-types.js';
import type { WatchEnd } from '../sessions/session-watch.js';
import type { AnySessionStatus } from '../sessions/sessions.js';
import { dataPart } from './parts.js';

/** Where a session task keeps what a resume after a restart needs (a FollowedSession). */
export const SESSION_METADATA = 'registrySession';

/** The open register / deregister session a task follows. */
export interface FollowedSession {
  intent: 'register' | 'deregister';
  /** Absent in tasks kept before it was recorded. */
  network?: NetworkName;
  sessionToken: string;
  stage: SessionStage;
}

/** A state change of a task: the state, the words for people, the fields for programs. */
export interface TaskUpdate {
  state: TaskState;
  text: string;
  data?: object;
}

/** The opened session without its QR image (the deep link and QR data carry the same). */
export function sessionFields<S extends { qrImageBase64: string }>(session: S): Omit<S, 'qrImageBase64'> {
  const { qrImageBase64: _png, ...fields } = session;
  return fields;
}

/** The task's artifact: deep link, QR data, scan page, session token, stage, expiry. */
export function sessionArtifact(intent: FollowedSession['intent'], fields: object): Artifact {
  return {
    artifactId: randomUUID(),
    name: `${intent}-session`,
    description:
      'Open the deep link (or show the QR data) to the human, or send them scanPageUrl: a page that shows the QR code and follows the session; the task completes by itself.',
    parts: [dataPart(fields)],
    metadata: undefined,
    extensions: [],
  };
}

/** A new stage short of the end. */
export const workingUpdate = (status: AnySessionStatus): TaskUpdate => ({
  state: TaskState.TASK_STATE_WORKING,
  text: status.humanInstructions.join(' '),
  data: status,
});

/** The final update of a watch that ended; none for a watch that was stopped (the task was canceled). */
export function finalUpdate(end: WatchEnd): TaskUpdate | undefined {
  switch (end.outcome) {
    case 'completed':
      return { state: TaskState.TASK_STATE_COMPLETED, text: end.status.humanInstructions.join(' '), data: end.status };
    case 'failed':
      return { state: TaskState.TASK_STATE_FAILED, text: end.status.error ?? end.status.humanInstructions.join(' '), data: end.status };
    case 'expired':
      return {
        state: TaskState.TASK_STATE_FAILED,
        text: 'The session expired before the human finished',
        data: { error: end.error, stage: 'expired' },
      };
    case 'refused':
      return { state: TaskState.TASK_STATE_FAILED, text: end.error, data: { error: end.error, status: end.status } };
    case 'stopped':
      return undefined;
  }
}
