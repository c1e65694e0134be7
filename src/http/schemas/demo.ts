// Shapes of the demo endpoints: the network they act on and their answers.
import { z } from 'zod';
import { resolveNetworkOrAlias } from '../../core/networks.js';
import { policyRefusalBodySchema } from '../../core/policy-refusal.js';
import { agentCredentialsSchema } from './queries.js';

const NETWORK_VALUES = ['mainnet', 'testnet', 'celo-mainnet', 'celo-sepolia', '42220', '11142220'] as const;

export const demoQuerySchema = z.object({
  network: z
    .enum(NETWORK_VALUES, { error: `must be one of ${NETWORK_VALUES.join(', ')}` })
    .optional()
    .transform((value) => resolveNetworkOrAlias(value ?? 'testnet'))
    .describe('The network of the signing agent: mainnet or testnet (or celo-mainnet, celo-sepolia, a chain id); default testnet'),
});

export const demoVerificationSchema = z
  .object({
    valid: z.literal(true),
    network: z.enum(['mainnet', 'testnet']),
    agentAddress: z.string().describe('The signing agent (recovered from the signature, or derived from its Ed25519 key)'),
    agentKey: z.string().describe("The agent's key in the registry: padded address or raw Ed25519 public key"),
    keyType: z.enum(['secp256k1', 'ed25519']),
    agentId: z.string().regex(/^\d+$/).describe('Decimal'),
    agentCount: z.string().regex(/^\d+$/).describe('Live agents of the same human, decimal'),
    verificationCount: z.number().int().describe('Successful verifications by this service so far'),
    credentials: agentCredentialsSchema,
  })
  .meta({ id: 'DemoVerification' });

export const demoDescriptionSchema = z
  .record(z.string(), z.unknown())
  .meta({ id: 'DemoEndpointDescription', description: 'What the endpoint does, the headers it needs and an example body' });

export const demoCensusQuerySchema = demoQuerySchema.extend({
  help: z.string().optional().describe('Present (any value): describe the endpoint instead of answering'),
});

const censusEntrySchema = z
  .object({
    agentAddress: z.string(),
    agentId: z.string().regex(/^\d+$/),
    nationality: z.string().describe('Three-letter code; empty when not disclosed'),
    olderThan: z.number().int(),
    ofac: z.tuple([z.boolean(), z.boolean(), z.boolean()]),
    timestamp: z.number().int().describe('When it was contributed, unix ms'),
  })
  .meta({ id: 'CensusEntry' });

export const censusContributionSchema = z
  .object({ recorded: z.literal(true), totalAgents: z.number().int(), yourEntry: censusEntrySchema })
  .meta({ id: 'CensusContribution' });

export const censusSummarySchema = z
  .object({
    topCountries: z.array(z.object({ country: z.string(), count: z.number().int() })).describe('The three most frequent nationalities'),
    verifiedOver18: z.number().int(),
    verifiedOver21: z.number().int(),
    ofacClear: z.number().int().describe('Entries with at least one OFAC check passed'),
    totalAgents: z.number().int(),
  })
  .meta({ id: 'CensusSummary' });

const agentRef = z.object({ address: z.string(), agentId: z.string().regex(/^\d+$/), verified: z.boolean() });

export const agentToAgentSchema = z
  .object({
    verified: z.literal(true),
    demoAgent: agentRef,
    callerAgent: agentRef,
    sameHuman: z.boolean().describe('Both agents are backed by the same human (same nullifier)'),
    verificationCount: z.number().int(),
    uniqueAgents: z.number().int().describe('Distinct agents the demo agent has verified'),
    message: z.string(),
  })
  .meta({ id: 'AgentToAgentAnswer' });

export const chainVerificationSchema = z
  .object({
    txHash: z.string(),
    blockNumber: z.string().regex(/^\d+$/),
    gasUsed: z.string().regex(/^\d+$/),
    network: z.enum(['mainnet', 'testnet']),
    agentAddress: z.string(),
    agentId: z.string().regex(/^\d+$/),
    verificationCount: z.string().regex(/^\d+$/).describe("The contract's verifications of this agent"),
    totalVerifications: z.string().regex(/^\d+$/),
    rateLimitRemaining: z.number().int().describe('Relayed transactions left to this human in the rolling hour'),
  })
  .meta({ id: 'ChainVerification' });

export const chainVerifyHelpQuerySchema = demoQuerySchema.extend({
  agentKey: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a bytes32 agent key')
    .optional()
    .describe('An agent key: the description then names its current meta-transaction nonce'),
});

export const chatAnswerSchema = z
  .object({
    reply: z.string(),
    data: z.object({}).loose().optional().describe('The fields behind the reply (the REST answer of the question)'),
    session_id: z.string(),
    agent: z.string().describe('The verified caller address, or "anonymous"'),
    turns: z.number().int().describe('Turns kept in this conversation'),
  })
  .meta({ id: 'ChatAnswer' });

/** A refused signed request; `policy` names the human-level policy that refused (403), or quota (429). */
export const signedRefusalSchema = z
  .object({
    error: z.string().describe('What went wrong and what to fix'),
    policy: policyRefusalBodySchema.shape.policy.optional(),
  })
  .meta({ id: 'SignedRequestRefusal' });

/**
 * A signed request someone else received, described for checking (the A2A verify intent's `signedRequest`, the MCP
 * tool verify_signed_request): what POST /api/demo/verify reads from the request itself.
 */
export const signedRequestSchema = z
  .object(
    {
      method: z
        .string({ error: 'must be the request method as a string, such as "POST"' })
        .regex(/^[A-Za-z]{1,20}$/, 'must be an HTTP method such as "POST"')
        .describe('The request method'),
      url: z
        .string({ error: 'must be a string: the URL the request was sent to' })
        .min(1, 'must name the URL the request was sent to')
        .max(8_192, 'must be at most 8192 characters')
        .describe('Where the request was sent: its path and query, or the absolute URL (an RFC 9421 signature covers the authority)'),
      headers: z
        .record(z.string(), z.string({ error: 'must be a string: each header value as received' }), {
          error: 'must be an object of header names and values, such as {"x-svc-agent-signature": "0x…"}',
        })
        .describe('The headers as received: x-svc-agent-*, or Signature-Input, Signature (Signature-Agent, Content-Digest); Host when url is a path'),
      body: z
        .string({ error: 'must be the body text exactly as signed' })
        .optional()
        .describe('The body text exactly as received; absent or empty when none'),
    },
    { error: 'must be an object such as {"method": "POST", "url": "/orders", "headers": {...}, "body": "{}"}' },
  )
  .meta({ id: 'SignedRequestDescription' });
