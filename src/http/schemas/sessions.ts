// Shapes of the deregistration, refresh and identify endpoints. The fields' forms are checked here (fields.ts), so
// the document shows them; the services check what depends on the chain (the agent exists, its config).
import { z } from 'zod';
import { DISCLOSED_CREDENTIALS } from '../../core/credentials.js';
import { accountAddress, agentIdValue, sessionNetwork } from './fields.js';
import { address, disclosuresSchema, hex, networkSchema, publicCredentialsSchema, sessionViewShape } from './registration.js';

/** The deep link, QR code and scan URL of a newly opened session. */
const openedShape = {
  ...sessionViewShape,
  deepLink: z.string().describe('Link for the identity app: <scheme>://verify?scope=...'),
  qrData: z.string().describe('Same as deepLink, for a QR code'),
  qrImageBase64: z.string().describe('The QR code as a base64 PNG'),
  scanUrl: z.string().describe('URL of the QR code PNG, with a watch token: it shows the QR code and status, never exports'),
  scanPageUrl: z.string().describe('Page to open on a laptop: the QR code, what is asked, the session live to its end (watch token)'),
};

// ---- Deregistration

export const deregisterRequestSchema = z
  .object(
    {
      network: sessionNetwork.optional(),
      agentAddress: accountAddress('The agent address, as GET /api/agent/info reports it (for Ed25519 agents: the address derived from the key)'),
      disclosures: disclosuresSchema.optional(),
    },
    { error: 'must be a JSON object such as {"network": "testnet", "agentAddress": "0x..."}' },
  )
  .meta({ id: 'DeregisterRequest' });

export const deregistrationSessionSchema = z
  .object({
    ...openedShape,
    agentId: z.number().int(),
    agentAddress: address('The agent address'),
    network: networkSchema,
    configIndex: z.number().int().describe('Index of the disclosure configuration the proof must satisfy'),
  })
  .meta({ id: 'DeregistrationSession' });

export const deregistrationStatusSchema = z
  .object({
    ...sessionViewShape,
    agentId: z.number().int(),
    agentAddress: address('The agent address'),
    network: networkSchema,
    txHash: hex('The transaction the identity app reported, once known').optional(),
    error: z.string().optional().describe('Why the session failed (e.g. NotAgentOwner: another human proved)'),
  })
  .meta({ id: 'DeregistrationStatus' });

// ---- Proof refresh

export const refreshRequestSchema = z
  .object(
    {
      agentId: agentIdValue,
      network: sessionNetwork.optional(),
      disclosures: disclosuresSchema
        .optional()
        .describe(
          "Must select the agent's own config (minimumAge, ofac). Default: the agent's config, and nationality and name when the agent's credentials show them, so the refresh keeps them; a credential left out is erased (see replacesCredentials)",
        ),
    },
    { error: 'must be a JSON object such as {"agentId": 5, "network": "testnet", "disclosures": {"minimumAge": 18}}' },
  )
  .meta({ id: 'RefreshRequest' });

const replacesCredentials = z
  .array(z.enum(DISCLOSED_CREDENTIALS))
  .describe(
    "Credentials the agent shows now that this proof is not asked to disclose: the registry keeps only the newest proof's credentials, so these are erased once it lands. Empty when the refresh keeps them all; without disclosures it names only those a session cannot ask for (issuingState, dateOfBirth, gender)",
  );

export const refreshSessionSchema = z
  .object({
    ...openedShape,
    agentId: z.number().int(),
    network: networkSchema,
    configIndex: z.number().int().describe("Index of the agent's disclosure configuration, which the proof must satisfy"),
    replacesCredentials,
  })
  .meta({ id: 'RefreshSession' });

export const refreshStatusSchema = z
  .object({
    ...sessionViewShape,
    agentId: z.number().int(),
    network: networkSchema,
    replacesCredentials,
    txHash: hex('The transaction the identity app reported, once known').optional(),
    proofExpiresAt: z.number().int().optional().describe('Once completed: the new proof expiry, unix seconds'),
    isProofFresh: z.boolean().optional().describe('Once completed'),
    verificationStrength: z.number().int().optional().describe("Once completed: the proof provider's verification strength"),
    credentials: publicCredentialsSchema.optional().describe('Once completed: what the human disclosed in the new proof'),
    error: z.string().optional().describe('Why the session failed'),
  })
  .meta({ id: 'RefreshStatus' });

// ---- Identify

export const identifyRequestSchema = z
  .object({ network: sessionNetwork.optional() }, { error: 'must be a JSON object such as {"network": "testnet"}' })
  .meta({ id: 'IdentifyRequest' });

export const identifySessionSchema = z.object({ ...openedShape, network: networkSchema }).meta({ id: 'IdentifySession' });

export const identifyStatusSchema = z
  .object({
    ...sessionViewShape,
    network: networkSchema,
    txHash: hex('The transaction of this session proof, once known').optional(),
    nullifier: z.string().regex(/^\d+$/).optional().describe("Once completed: the human's nullifier, decimal"),
    agentCount: z.number().int().optional().describe("Once completed: the number of the human's agents on this network"),
    agentIds: z.array(z.number().int()).optional().describe("Once completed: the human's agent ids"),
    error: z.string().optional().describe('Why the session failed'),
  })
  .meta({ id: 'IdentifyStatus' });
