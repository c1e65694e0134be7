// The fields every session response carries: a refreshed token (same session, same expiry), the stage,
// the time left, and what the human should do now.
import type { Clock } from '../store/key-value-store.js';
import type { SessionRecord, SessionStage } from './session-record.js';
import type { SessionClaims, SessionTokens } from './session-token.js';

export interface SessionView {
  sessionToken: string;
  stage: SessionStage;
  /** ISO 8601. */
  expiresAt: string;
  timeRemainingMs: number;
  humanInstructions: string[];
}

const INSTRUCTIONS: Record<SessionRecord['type'], Record<SessionStage, string[]>> = {
  register: {
    'qr-ready': [
      'Open the identity app on your phone.',
      'Scan the QR code or open the deep link.',
      'Follow the prompts to scan your passport or ID card.',
      'Wait for the proof to be recorded on chain.',
    ],
    'proof-received': ['Proof received from the identity app.', 'Waiting for the registration to be confirmed on chain.'],
    completed: ['Registration complete: your agent is registered on chain and backed by your proof of human.'],
    failed: ['Registration failed: see the error, then start a new registration.'],
  },
  deregister: {
    'qr-ready': [
      'Open the identity app on your phone.',
      'Scan the QR code or open the deep link.',
      'Prove your identity again to confirm the removal.',
    ],
    'proof-received': ['Proof received from the identity app.', 'Waiting for the removal to be confirmed on chain.'],
    completed: ['Deregistration complete: the agent NFT is burned.'],
    failed: ['Deregistration failed: see the error, then start again.'],
  },
  identify: {
    'qr-ready': ['Open the identity app on your phone.', 'Scan the QR code or open the deep link.', 'Prove your identity to find your agents.'],
    'proof-received': ['Proof received from the identity app.', 'Waiting for it to be confirmed on chain.'],
    completed: ['Identified: your nullifier and agents are listed.'],
    failed: ['Identification failed: see the error, then start again.'],
  },
  refresh: {
    'qr-ready': [
      'Open the identity app on your phone.',
      'Scan the QR code or open the deep link.',
      'Prove your identity again to refresh the proof.',
    ],
    'proof-received': ['Proof received from the identity app.', 'Waiting for the refresh to be confirmed on chain.'],
    completed: ['Proof refreshed: the agent has a new expiry.'],
    failed: ['Refresh failed: see the error, then start again.'],
  },
};

export async function sessionView(tokens: SessionTokens, claims: SessionClaims, record: SessionRecord, clock: Clock): Promise<SessionView> {
  return {
    sessionToken: await tokens.issue(claims),
    stage: record.stage,
    expiresAt: new Date(record.expiresAt).toISOString(),
    timeRemainingMs: Math.max(0, record.expiresAt - clock()),
    humanInstructions: INSTRUCTIONS[record.type][record.stage],
  };
}
