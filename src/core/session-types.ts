/** The kinds of session the service runs; a session token names its kind. */
export const SESSION_TYPES = ['register', 'deregister', 'identify', 'refresh'] as const;
export type SessionType = (typeof SESSION_TYPES)[number];

/** Where a session is: waiting for the human, proof reported, and the two final stages. */
export type SessionStage = 'qr-ready' | 'proof-received' | 'completed' | 'failed';
export const FINAL_STAGES: ReadonlySet<SessionStage> = new Set(['completed', 'failed']);
