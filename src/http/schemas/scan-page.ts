// Shapes of the scan page (GET /register/{sessionRef}): its path, and the state it shows, which its JSON answer,
// its live events and the page itself all carry.
import { z } from 'zod';
import { SESSION_TYPES } from '../../core/session-types.js';
import { hex, networkSchema } from './registration.js';

export const scanPageParamsSchema = z.object({
  sessionRef: z
    .string()
    .describe("The watch token of the session's scan link (scanPageUrl): it shows and follows the session, nothing else; a session token is refused"),
});

export const scanPageStateSchema = z
  .object({
    kind: z.enum(SESSION_TYPES).describe('The kind of session'),
    stage: z
      .enum(['qr-ready', 'proof-received', 'completed', 'failed', 'expired'])
      .describe('The session stage, or expired once its 30 minutes ran out while the page watched'),
    final: z.boolean().describe('No later state follows (completed, failed, expired)'),
    headline: z.string().describe('What is happening, in one sentence'),
    instructions: z.array(z.string()).describe('What the human should do now'),
    network: networkSchema,
    agentId: z.number().int().optional().describe('The agent of the session, once known'),
    agentIds: z.array(z.number().int()).optional().describe("Identify sessions, once completed: the human's agents"),
    links: z
      .array(z.object({ href: z.string().describe('A path of this service'), label: z.string() }))
      .describe("Where to look next, e.g. the agent's info endpoint once registered"),
    txHash: hex('The transaction of the session, once known').optional(),
    error: z.string().optional().describe('Why the session failed or cannot be followed'),
    expiresAt: z.string().optional().describe('When the session expires, ISO 8601'),
    agentStatus: z
      .enum(['registered', 'proof-expired', 'deregistered'])
      .optional()
      .describe('A completed registration or refresh opened later: how its agent stands now'),
  })
  .meta({ id: 'ScanPageState', description: 'What the scan page shows of a session' });

export type ScanPageState = z.output<typeof scanPageStateSchema>;
