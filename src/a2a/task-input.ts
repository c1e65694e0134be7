// A request that comes in several turns: a message whose intent or a field is missing (or that the service refused
// as malformed) makes an input-required task, which keeps what the conversation gave so far in its metadata. A
// follow-up message on the same task completes it (intents.ts merges the two), and the task goes on from there.
// The task is the conversation's only state: nothing else is kept between turns.
import type { Task } from '@a2a-js/sdk';
import { type GatheredInput, INTENTS, type Intent, requestFields } from './intents.js';
import { SESSION_METADATA } from './session-task.js';

/** Where an input-required task keeps what its conversation gave so far, and what is still missing. */
export const INPUT_METADATA = 'registryInput';

/** The task metadata of a conversation that waits for input. */
export interface PendingInput extends GatheredInput {
  /** The fields still missing (empty when the service refused a value: its message says which). */
  missing: string[];
}

const isIntent = (value: unknown): value is Intent => typeof value === 'string' && (INTENTS as readonly string[]).includes(value);

/** What the earlier turns of `task` gave, for the message that continues it; undefined for a new task or a session task. */
export function gatheredInputOf(task: Task | undefined): GatheredInput | undefined {
  if (!task || task.metadata?.[SESSION_METADATA] !== undefined) return undefined;
  const kept = task.metadata?.[INPUT_METADATA];
  if (!kept || typeof kept !== 'object') return undefined;
  const { intent, fields } = kept as Record<string, unknown>;
  return {
    ...(isIntent(intent) ? { intent } : {}),
    fields: fields && typeof fields === 'object' && !Array.isArray(fields) ? requestFields(fields as Record<string, unknown>) : {},
  };
}

/** The metadata entry of a task that waits for `missing`. */
export const pendingInput = (gathered: GatheredInput, missing: string[]): Record<string, PendingInput> => ({
  [INPUT_METADATA]: { ...gathered, missing },
});
