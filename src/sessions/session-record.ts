// What the server keeps about a session: everything but the secrets, which live only in the token. One record
// shape per kind of session (a discriminated union on `type`), checked with zod whenever it is read from the
// store, so readers get exactly the fields of their kind and no casts.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DISCLOSED_CREDENTIALS } from '../core/credentials.js';
import { REGISTRATION_MODES } from '../core/registration-modes.js';
import type { SessionStage } from '../core/session-types.js';

export type { SessionStage, SessionType } from '../core/session-types.js';

const hex = z.custom<`0x${string}`>((value) => typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value), 'must be 0x-prefixed hex');
const decimal = z.string().regex(/^\d+$/);

const stage = z.enum(['qr-ready', 'proof-received', 'completed', 'failed'] satisfies SessionStage[]);

/** What every kind of session keeps. */
const common = {
  id: z.string().min(1),
  stage,
  network: z.enum(['mainnet', 'testnet']),
  /** Whom the proof is for (SelfApp.userId). */
  userId: hex,
  userDefinedData: z.string(),
  configIndex: z.number().int(),
  disclosures: z.object({
    minimumAge: z.union([z.literal(0), z.literal(18), z.literal(21)]),
    ofac: z.boolean(),
    nationality: z.boolean(),
    name: z.boolean(),
  }),
  /** The transaction that did what the session asked, once known. */
  txHash: hex.optional(),
  failureReason: z.string().optional(),
  /** The identity app's last report. */
  callback: z
    .object({ receivedAt: z.number(), outcome: z.enum(['success', 'error']), txHash: hex.optional(), error: z.string().optional() })
    .optional(),
  createdAt: z.number(),
  expiresAt: z.number(),
  completedAt: z.number().optional(),
};

const publicCredentials = z.object({
  nationality: z.string().optional(),
  issuingState: z.string().optional(),
  name: z.array(z.string()).optional(),
  dateOfBirth: z.string().optional(),
  gender: z.string().optional(),
  expiryDate: z.string().optional(),
  olderThan: z.number(),
  ofac: z.tuple([z.boolean(), z.boolean(), z.boolean()]),
});

export const registrationRecordSchema = z.object({
  ...common,
  type: z.literal('register'),
  mode: z.enum(REGISTRATION_MODES),
  agentAddress: hex,
  /** The registry's key for the agent (bytes32: padded address or raw Ed25519 key). */
  agentKey: hex,
  humanAddress: hex.optional(),
  /** The service generated the key, so it may be exported once the agent is registered. */
  exportable: z.boolean(),
  /** Once completed. */
  agentId: decimal.optional(),
  credentials: publicCredentials.optional(),
});

export const deregistrationRecordSchema = z.object({
  ...common,
  type: z.literal('deregister'),
  agentAddress: hex,
  agentKey: hex,
  agentId: decimal,
});

export const refreshRecordSchema = z.object({
  ...common,
  type: z.literal('refresh'),
  agentId: decimal,
  agentKey: hex,
  /** proofExpiresAt when the session was opened (unix seconds): a later value means the refresh happened. */
  previousExpiresAt: decimal,
  /** Credentials the agent showed at the start that this proof is not asked for (absent in records of older versions: none). */
  replacesCredentials: z.array(z.enum(DISCLOSED_CREDENTIALS)).optional(),
});

export const identifyRecordSchema = z.object({
  ...common,
  type: z.literal('identify'),
  /** Once completed: the human's nullifier, decimal. */
  nullifier: decimal.optional(),
});

export const sessionRecordSchema = z.discriminatedUnion('type', [
  registrationRecordSchema,
  deregistrationRecordSchema,
  refreshRecordSchema,
  identifyRecordSchema,
]);

export type RegistrationRecord = z.infer<typeof registrationRecordSchema>;
export type DeregistrationRecord = z.infer<typeof deregistrationRecordSchema>;
export type RefreshRecord = z.infer<typeof refreshRecordSchema>;
export type IdentifyRecord = z.infer<typeof identifyRecordSchema>;
export type SessionRecord = z.infer<typeof sessionRecordSchema>;
/** The record of one kind of session. */
export type RecordOf<T extends SessionRecord['type']> = Extract<SessionRecord, { type: T }>;

/**
 * Records written before the kinds had shapes of their own kept kind-specific fields in a `details` bag
 * (credentials, previousExpiresAt, nullifier) and an `exportable` flag on every kind: lift them into place, so a
 * service upgraded mid-session still reads its open sessions.
 */
function lifted(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('details' in value)) return value;
  const { details, ...rest } = value as { details?: Record<string, unknown> } & Record<string, unknown>;
  return { ...details, ...rest };
}

/** The record read from the store, checked against its kind's shape; a record that fails is a bug, not bad input. */
export function parseSessionRecord(value: unknown): SessionRecord {
  const parsed = sessionRecordSchema.safeParse(lifted(value));
  if (!parsed.success) {
    const id = typeof value === 'object' && value !== null ? String((value as { id?: unknown }).id) : '?';
    throw new Error(`Session record ${id} is malformed: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data;
}

/** 16 random bytes as 32 lowercase hex characters. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}
