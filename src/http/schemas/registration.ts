// Shapes of the registration endpoints. The fields' forms are checked here (fields.ts), so the document shows
// them; the service checks what depends on the mode or the chain (which fields a mode needs, signatures, nonces).
import { z } from 'zod';
import { MINIMUM_AGES } from '../../core/disclosures.js';
import { REGISTRATION_MODES } from '../../core/registration-modes.js';
import { accountAddress, ecdsaSignatureText, ed25519PublicKey, hexText, registrationModeInput, sessionNetwork } from './fields.js';

const flag = z.boolean({ error: 'must be true or false' });

export const disclosuresSchema = z
  .object(
    {
      minimumAge: z
        .literal([...MINIMUM_AGES], { error: 'must be the number 0, 18 or 21' })
        .optional()
        .describe('The age the human proves to be at least; default 0 (no age check)'),
      ofac: flag.optional().describe('Ask for the sanctions-list check; default false'),
      nationality: flag.optional().describe('Ask the human to disclose the nationality'),
      name: flag.optional().describe('Ask the human to disclose the name'),
    },
    { error: 'must be an object such as {"minimumAge": 18, "ofac": true}' },
  )
  .meta({ id: 'Disclosures' });

const AGENT_SIGNATURE_MESSAGE =
  'must be the 65-byte (130 hex) signature of the challenge from the wallet that holds the agent key, ending in its recovery byte (1b, 1c, 00 or 01)';
/** A WebAuthn assertion wrapped for ERC-7739 and ERC-6492 is about 1.5 KB; room to spare, not unbounded. */
const GUARDIAN_SIGNATURE_HEX = [130, 16_384] as [number, number];

export const registerRequestSchema = z
  .object(
    {
      mode: registrationModeInput,
      network: sessionNetwork.optional(),
      humanAddress: accountAddress("The human's wallet (linked, ed25519-linked, privy; smartwallet: the smart account)").optional(),
      disclosures: disclosuresSchema.optional(),
      agentAddress: accountAddress('The wallet-held agent key address (privy, smartwallet)').optional(),
      agentSignature: ecdsaSignatureText(AGENT_SIGNATURE_MESSAGE, 'The agent key signature of the challenge (privy, smartwallet)').optional(),
      guardianSignature: hexText(
        GUARDIAN_SIGNATURE_HEX,
        `must be the smart account's signature of the challenge: hex of 65 to ${GUARDIAN_SIGNATURE_HEX[1] / 2} bytes`,
        'smartwallet: the smart account (humanAddress) signature of the same challenge, ERC-1271 or ERC-6492 while counterfactual',
      ).optional(),
      ed25519Pubkey: ed25519PublicKey('Your Ed25519 public key (ed25519, ed25519-linked)').optional(),
      ed25519Signature: hexText(
        128,
        'must be 128 hex characters: the 64-byte Ed25519 signature R || S of the challenge',
        'Your Ed25519 signature of the challenge: 128 hex characters',
      ).optional(),
    },
    { error: 'must be a JSON object' },
  )
  .meta({ id: 'RegisterRequest' });

export const challengeRequestSchema = z
  .object(
    {
      mode: z
        .enum(['privy', 'smartwallet'], {
          error: 'must be privy or smartwallet: the ECDSA challenge is for the modes whose agent key a wallet provider holds',
        })
        .describe('privy or smartwallet'),
      network: sessionNetwork.optional(),
      agentAddress: accountAddress('The wallet-held agent key address'),
      humanAddress: accountAddress("The human's wallet (smartwallet: the smart account)"),
    },
    { error: 'must be a JSON object' },
  )
  .meta({ id: 'ChallengeRequest' });

export const ed25519ChallengeRequestSchema = z
  .object(
    {
      pubkey: ed25519PublicKey('The Ed25519 public key'),
      network: sessionNetwork.optional(),
      humanAddress: accountAddress("The human's wallet (ed25519-linked only; omit it for ed25519)").optional(),
    },
    { error: 'must be a JSON object' },
  )
  .meta({ id: 'Ed25519ChallengeRequest' });

export const callbackReportSchema = z
  .object(
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
  )
  .meta({ id: 'CallbackReport' });

export const exportRequestSchema = z
  .object({ token: z.string().optional().describe('The session token, when not sent as ?token= or Authorization: Bearer') })
  .meta({ id: 'ExportRequest' })
  .optional();

// ---- Responses. The routes' answers, as the OpenAPI document describes them; the conformance test
// (test/api/openapi.test.ts) checks real answers against these, so an undocumented field fails it.

export const hex = (what: string) =>
  z
    .string()
    .regex(/^0x[0-9a-fA-F]*$/)
    .describe(what);
export const address = (what: string) =>
  z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .describe(what);

/** Every error answer: `{"error": "<message>"}`. */
export const errorSchema = z.object({ error: z.string().describe('What went wrong and, for client errors, what to fix') }).meta({ id: 'Error' });

export const stageSchema = z.enum(['qr-ready', 'proof-received', 'completed', 'failed']).meta({ id: 'SessionStage' });
const modeSchema = z.enum(REGISTRATION_MODES).meta({ id: 'RegistrationMode' });
export const networkSchema = z.enum(['mainnet', 'testnet']).meta({ id: 'Network' });

/** The fields every session answer carries (src/sessions/session-view.ts). */
export const sessionViewShape = {
  sessionToken: z.string().describe('Refreshed session token (same session, same expiry); use the latest one'),
  stage: stageSchema,
  expiresAt: z.string().describe('When the session expires, ISO 8601'),
  timeRemainingMs: z.number().int().min(0).describe('Milliseconds until the session expires'),
  humanInstructions: z.array(z.string()).describe('What the human should do now'),
};

export const publicCredentialsSchema = z
  .object({
    nationality: z.string().optional().describe('Three-letter country code, when disclosed'),
    issuingState: z.string().optional(),
    name: z.array(z.string()).optional(),
    dateOfBirth: z.string().optional().describe('DD-MM-YY, when disclosed'),
    gender: z.string().optional(),
    expiryDate: z.string().optional().describe('DD-MM-YY, when disclosed'),
    olderThan: z.number().int().describe('The age threshold proved (0 when none was asked)'),
    ofac: z
      .tuple([z.boolean(), z.boolean(), z.boolean()])
      .describe('OFAC checks passed: document number, name + date of birth, name + year of birth'),
  })
  .meta({ id: 'Credentials', description: 'What the human disclosed; undisclosed fields are absent' });

export const registrationSessionSchema = z
  .object({
    ...sessionViewShape,
    deepLink: z.string().describe('Link for the identity app: <scheme>://verify?scope=...'),
    qrData: z.string().describe('Same as deepLink, for a QR code'),
    qrImageBase64: z.string().describe('The QR code as a base64 PNG'),
    scanUrl: z.string().describe('URL of the QR code PNG, with a watch token: it shows the QR code and status, never exports'),
    scanPageUrl: z.string().describe('Page to open on a laptop: the QR code, what is asked, the session live to its end (watch token)'),
    agentAddress: address('The agent address'),
    mode: modeSchema,
    network: networkSchema,
    configIndex: z.number().int().describe('Index of the disclosure configuration the proof must satisfy'),
  })
  .meta({ id: 'RegistrationSession' });

export const registrationStatusSchema = z
  .object({
    ...sessionViewShape,
    agentAddress: address('The agent address'),
    mode: modeSchema,
    network: networkSchema,
    agentId: z.number().int().optional().describe('Once completed'),
    txHash: hex('The transaction that registered the agent, once known').optional(),
    credentials: publicCredentialsSchema.optional(),
    error: z.string().optional().describe('Why the session failed'),
  })
  .meta({ id: 'RegistrationStatus' });

export const registrationQrSchema = z
  .object({
    ...sessionViewShape,
    deepLink: z.string(),
    qrData: z.string(),
    qrImageBase64: z.string().describe('The QR code as a base64 PNG'),
  })
  .meta({ id: 'RegistrationQr' });

export const qrQuerySchema = z.object({
  format: z.enum(['png']).optional().describe('png: answer with the QR code image instead of JSON'),
});

export const callbackAckSchema = z
  .object({ received: z.literal(true), stage: stageSchema })
  .meta({ id: 'CallbackAck', description: 'The identity app report was received; the session stage after it' });

export const exportedKeySchema = z
  .object({
    privateKey: hex("The agent's private key: a secret, store it safely"),
    keyType: z.enum(['secp256k1', 'ed25519']),
    publicKey: hex('Ed25519 only: the raw public key (the registry agent key)').optional(),
    agentAddress: address('The agent address'),
    agentId: z.number().int(),
    network: networkSchema,
    mode: modeSchema,
  })
  .meta({ id: 'ExportedKey' });

export const challengeSchema = z
  .object({
    challengeHash: hex('The hash the agent key signs'),
    nonce: z.string().regex(/^\d+$/).describe("The registry's nonce for this key, decimal"),
    human: address('The address the challenge binds the agent to (the proof userId)'),
    chainId: z.number().int(),
    registry: address('The registry contract'),
  })
  .meta({ id: 'RegistrationChallenge' });
