// What the server keeps about a session: everything but the secrets, which live only in the token.
import { randomBytes } from 'node:crypto';
import type { RegistrationMode } from '../core/registration-modes.js';
import type { SessionType } from './session-token.js';

export type { RegistrationMode };
export type SessionStage = 'qr-ready' | 'proof-received' | 'completed' | 'failed';

export interface SessionRecord {
  id: string;
  type: SessionType;
  stage: SessionStage;
  network: 'mainnet' | 'testnet';
  mode?: RegistrationMode;
  agentAddress?: `0x${string}`;
  agentKey?: `0x${string}` /* bytes32 as on chain */;
  humanAddress?: `0x${string}`;
  userId: `0x${string}`;
  userDefinedData: string;
  configIndex: number;
  disclosures: { minimumAge: 0 | 18 | 21; ofac: boolean; nationality: boolean; name: boolean };
  exportable: boolean;
  agentId?: string /* decimal */;
  txHash?: `0x${string}`;
  failureReason?: string;
  callback?: { receivedAt: number; outcome: 'success' | 'error'; txHash?: `0x${string}`; error?: string };
  createdAt: number;
  expiresAt: number;
  completedAt?: number;
  /** free-form, for the other session types later (deregister/identify/refresh) */
  details?: Record<string, unknown>;
}

/** 16 random bytes as 32 lowercase hex characters. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}
