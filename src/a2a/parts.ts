// The message parts and agent messages the executor answers with: a text part for people, a data part with the
// fields of the matching REST response for programs.
import { randomUUID } from 'node:crypto';
import { type Message, type Part, Role } from '@a2a-js/sdk';

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export const dataPart = (value: object): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

/** The text, then the data when there is any. */
export const answerParts = (text: string, data?: object): Part[] => (data ? [textPart(text), dataPart(data)] : [textPart(text)]);

/** A message from this agent in `contextId` (and `taskId`, for a task's status message). */
export function agentMessage(contextId: string, parts: Part[], taskId = ''): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
