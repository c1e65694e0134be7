// The credential endpoints' shapes: what POST /api/agent/credential answers, and the status list's path.
import { z } from 'zod';

export const issuedCredentialSchema = z
  .object({
    credential: z
      .string()
      .describe('The SD-JWT VC (dc+sd-jwt): the issuer-signed JWT and its disclosures, ~-separated, ending in ~ (the holder adds a KB-JWT)'),
    vct: z.string().describe('The credential type'),
    sub: z.string().describe("The human's pairwise pseudonym at this audience (base64url HMAC-SHA256)"),
    expiresAt: z.number().int().describe('Unix seconds: at most 15 minutes on, never after the proof expires'),
    status: z
      .object({ idx: z.number().int().nonnegative(), uri: z.string() })
      .describe("The credential's entry in a token status list (revoked when the agent stops being backed)"),
  })
  .meta({ id: 'IssuedCredential', description: 'A human-backed-agent credential for one audience' });

export const statusListParamsSchema = z.object({
  listId: z
    .string()
    .regex(/^(0|[1-9]\d{0,8})$/, 'must be a list number (decimal)')
    .transform(Number)
    .describe('The list number, as a credential status names it'),
});
