// Shapes of the registration endpoints. Types only: the service checks the meaning (mode, network,
// addresses, keys) and says what to fix.
import { z } from 'zod';

const text = (what: string) => z.string({ error: `must be a string: ${what}` });

export const disclosuresSchema = z.object(
  {
    minimumAge: z.number({ error: 'must be the number 0, 18 or 21' }).optional(),
    ofac: z.boolean({ error: 'must be true or false' }).optional(),
    nationality: z.boolean({ error: 'must be true or false' }).optional(),
    name: z.boolean({ error: 'must be true or false' }).optional(),
  },
  { error: 'must be an object such as {"minimumAge": 18, "ofac": true}' },
);

export const registerRequestSchema = z.object(
  {
    mode: text('one of linked, wallet-free, ed25519, ed25519-linked, privy, smartwallet'),
    network: text('"mainnet" or "testnet"').optional(),
    humanAddress: text("the human's wallet address, 0x-prefixed").optional(),
    disclosures: disclosuresSchema.optional(),
    agentAddress: text('the wallet-held agent key address (privy, smartwallet)').optional(),
    agentSignature: text('the agent key signature of the challenge (privy, smartwallet)').optional(),
    ed25519Pubkey: text('your Ed25519 public key, 64 hex characters').optional(),
    ed25519Signature: text('your Ed25519 signature of the challenge, 128 hex characters').optional(),
  },
  { error: 'must be a JSON object' },
);

export const challengeRequestSchema = z.object(
  {
    mode: text('privy or smartwallet'),
    network: text('"mainnet" or "testnet"').optional(),
    agentAddress: text('the wallet-held agent key address'),
    humanAddress: text("the human's wallet address"),
  },
  { error: 'must be a JSON object' },
);

export const ed25519ChallengeRequestSchema = z.object(
  {
    pubkey: text('the Ed25519 public key, 64 hex characters'),
    network: text('"mainnet" or "testnet"').optional(),
    humanAddress: text("the human's wallet address (ed25519-linked only)").optional(),
  },
  { error: 'must be a JSON object' },
);

export const callbackReportSchema = z.object(
  {
    status: z.enum(['success', 'error'], { error: 'must be "success" or "error"' }),
    txHash: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte transaction hash')
      .transform((hash) => hash.toLowerCase() as `0x${string}`)
      .optional(),
    error: z.string().min(1).max(500, 'must be at most 500 characters').optional(),
  },
  { error: 'must be a JSON object such as {"status": "success", "txHash": "0x..."}' },
);

export const exportRequestSchema = z.object({ token: z.string().optional() }).optional();
