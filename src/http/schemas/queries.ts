// Shapes of the public query endpoints: the path and query parameters the routes validate (a malformed one is a
// 400 naming it) and the answers, as the OpenAPI document describes them.
import { z } from 'zod';
import { PROOF_OF_HUMAN_EXTENSION_PATH } from '../../core/endpoints.js';
import { NETWORK_NAMES, NETWORKS, type NetworkName, resolveNetwork } from '../../core/networks.js';
import { PROOF_TYPES } from '../../core/proof-type.js';
import { REGISTRATION_MODES } from '../../core/registration-modes.js';
import { DISCOVERY_CAPABILITIES, ERC8004_REGISTRATION_TYPE } from '../../services/agent-queries.js';
import { accountAddress, agentIdText, nullifierText } from './fields.js';

// ---- Parameters

const SUPPORTED_CHAIN_IDS = NETWORK_NAMES.map((name) => String(NETWORKS[name].chainId)) as [string, ...string[]];
const chainList = NETWORK_NAMES.map((name) => `${NETWORKS[name].chainId} (${name})`).join(' or ');

/** A supported chain id in the path or query, resolved to its network once, here. */
const chainIdParam = z
  .enum(SUPPORTED_CHAIN_IDS, { error: (issue) => `unsupported chain ${JSON.stringify(issue.input ?? null)}: use ${chainList}` })
  .transform((chainId) => resolveNetwork(chainId))
  .describe(`Chain id: ${chainList}`);

export const agentParamsSchema = z.object({ chainId: chainIdParam, agentId: agentIdText });
export const humanParamsSchema = z.object({ chainId: chainIdParam, address: accountAddress("The human's wallet address") });
export const nullifierParamsSchema = z.object({ chainId: chainIdParam, nullifier: nullifierText });
export const a2aParamsSchema = z.object({ agentId: agentIdText });
export const a2aQuerySchema = z.object({
  chain: chainIdParam.optional().describe(`Chain id of the agent: ${chainList}; default ${NETWORKS.mainnet.chainId}`),
  chainId: chainIdParam.optional().describe('Same as chain (accepted as an alias)'),
});

// ---- Answers

const address = (what: string) =>
  z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .describe(what);
const network = z.enum(NETWORK_NAMES);
const proofType = z.enum(PROOF_TYPES).describe('Label of the strength: passport >= 100, kyc >= 80, govt_id >= 60, liveness >= 40, else unknown');
const strengthLabel = z.enum([...PROOF_TYPES, 'None']).describe('Label of the strength (as proofType), or None without a proof');
const strength = z.number().int().min(0).max(100).describe("The provider's verification strength, 0 to 100");
const decimal = (what: string) => z.string().regex(/^\d+$/).describe(what);

export const agentCredentialsSchema = z
  .object({
    nationality: z.string().describe('Three-letter country code; empty when not disclosed'),
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
  .meta({ id: 'AgentCredentials', description: 'What the human disclosed at registration or the last refresh' });

export const agentInfoSchema = z
  .object({
    agentId: z.number().int(),
    chainId: z.number().int(),
    agentAddress: address('The agent key as an address (for an Ed25519 key, the address derived from it)'),
    isVerified: z.boolean().describe('The agent has a proof of human that has not expired'),
    proofProvider: address('The proof provider contract; the zero address without a proof'),
    verificationStrength: strength,
    strengthLabel,
    credentials: agentCredentialsSchema,
    registeredAt: z.number().int().describe('Unix time (seconds) of the block the agent was registered in'),
    network,
  })
  .meta({ id: 'AgentInfo' });

export const agentsByHumanSchema = z
  .object({
    agents: z.array(z.number().int()).describe('Ids of the agents whose NFT the address owns or whose guardian it is, ascending'),
    chainId: z.number().int(),
    humanAddress: address('The address asked about, checksummed'),
  })
  .meta({ id: 'AgentsByHuman' });

export const agentsByNullifierSchema = z
  .object({
    nullifier: decimal('The nullifier asked about'),
    agents: z.array(z.number().int()).describe('Ids of the live agents of this human, ascending'),
    chainId: z.number().int(),
  })
  .meta({ id: 'AgentsByNullifier' });

export const verifySchema = z
  .object({
    agentId: z.number().int(),
    chainId: z.number().int(),
    isVerified: z.boolean().describe('The agent has a proof of human that has not expired'),
    proofProvider: address('The proof provider; the zero address without a proof'),
    isSelfProvider: z.boolean().describe("The proof came from the registry's own (identity hub) provider"),
    verificationStrength: strength,
    strengthLabel,
    humanNullifier: decimal('The human nullifier; "0" without a proof'),
    agentCountForHuman: z.number().int().describe("Live agents sharing this human's nullifier; 0 without a proof"),
  })
  .meta({
    id: 'Verification',
    description:
      'Without a proof (or for an agent that does not exist): isVerified false, the zero address, isSelfProvider false, strength 0, None, "0", 0.',
  });

export const freshnessSchema = z
  .object({
    agentId: z.number().int(),
    chainId: z.number().int(),
    hasProof: z.boolean().describe('A proof of human is on record (expired or not)'),
    isProofFresh: z.boolean().describe("The registry's isProofFresh, and the proof has not expired since it was read"),
    proofExpiresAt: z.number().int().describe('Unix seconds; 0 without a proof'),
    secondsRemaining: z.number().int().min(0).describe('Seconds until the proof expires; 0 once expired or without a proof'),
  })
  .meta({ id: 'ProofFreshness' });

export const reputationSchema = z
  .object({
    score: strength,
    hasProof: z.boolean().describe('A proof of human is on record (expired or not)'),
    providerName: z.string().describe('Name of the proof provider; empty without a proof'),
    proofType,
  })
  .meta({ id: 'Reputation' });

export const verifyStatusSchema = z
  .union([
    z.object({ verified: z.literal(false) }).describe('The agent has no proof (or does not exist)'),
    z.object({
      verified: z.boolean().describe('The proof has not expired'),
      proofType,
      registeredAtBlock: decimal('Block number of the registration, as text'),
      providerAddress: address('The proof provider'),
    }),
  ])
  .meta({ id: 'VerificationStatus' });

const skillSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  examples: z.array(z.string()).optional(),
  inputModes: z.array(z.string()).optional(),
  outputModes: z.array(z.string()).optional(),
});

/** The registry's claims about an agent and its human (cards and key directories carry it). */
export const proofOfHumanSchema = z
  .object({
    agentId: z.number().int(),
    registry: address('The agent registry'),
    chainId: z.number().int(),
    network,
    agentAddress: address('The agent key as an address'),
    isVerified: z.boolean().describe('The agent has a proof of human that has not expired'),
    proofProvider: address('The proof provider; the zero address without a proof'),
    providerName: z.string(),
    verificationStrength: strength,
    strengthLabel,
    proofExpiresAt: z.number().int().describe('Unix seconds; 0 without a proof'),
    credentials: agentCredentialsSchema,
  })
  .describe('Filled by the registry service from the chain, not by the agent');

/** The registry's A2A extension in a card: its proof-of-human block as params, covered by the card's signature. */
export const proofOfHumanExtensionSchema = z
  .object({
    uri: z
      .string()
      .describe(`<public URL of the service>${PROOF_OF_HUMAN_EXTENSION_PATH}: the registry that makes the claims, which describes them there`),
    description: z.string(),
    required: z.literal(false).describe('A client that does not know the extension can still talk to the agent'),
    params: proofOfHumanSchema,
  })
  .meta({
    id: 'ProofOfHumanExtension',
    description:
      "The registry's proof-of-human claims as an A2A extension (AgentExtension): the authoritative copy, signed with the card; " +
      'the top-level proofOfHuman holds the same, unsigned, for older readers',
  });

/** A JWS of an A2A card (A2A v1.0 §8.4): the flattened JSON serialization without its payload. */
export const cardSignatureSchema = z
  .object({
    protected: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .describe('The base64url protected header: alg and kid of a key of the JWKS, typ "JOSE", jku the JWKS URL'),
    signature: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .describe('base64url'),
  })
  .meta({
    id: 'AgentCardSignature',
    description:
      "A JWS by the service's current key over the RFC 8785 (JCS) form of the card's A2A v1.0 fields, signatures left out " +
      "(@a2a-js/sdk's verifyAgentCardSignature checks it). Fields outside the v1.0 schema (protocolVersion, url, " +
      'preferredTransport, additionalInterfaces, image, registrations, proofOfHuman) are not covered: their signed ' +
      'counterparts are supportedInterfaces and the proof-of-human extension.',
  });

const ownerExtensionSchema = z
  .looseObject({
    uri: z.string(),
    description: z.string().optional(),
    required: z.boolean().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .describe("An extension the agent's owner declared");

export const agentCardSchema = z
  .looseObject({
    protocolVersion: z.string(),
    name: z.string(),
    description: z.string(),
    url: z.string().describe("The agent's A2A endpoint as its owner declared it; else the registry service's"),
    version: z.string(),
    capabilities: z.looseObject({
      streaming: z.boolean().optional(),
      pushNotifications: z.boolean().optional(),
      stateTransitionHistory: z.boolean().optional(),
      extensions: z
        .array(z.union([proofOfHumanExtensionSchema, ownerExtensionSchema]))
        .describe("The owner's extensions, then the registry's proof-of-human extension (always the last)"),
    }),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(skillSchema),
    iconUrl: z.string().optional(),
    documentationUrl: z.string().optional(),
    preferredTransport: z.string().optional(),
    provider: z.object({ organization: z.string(), url: z.string() }).optional(),
    additionalInterfaces: z.array(z.object({ url: z.string(), transport: z.string() })).optional(),
    image: z.string().optional(),
    supportedInterfaces: z
      .array(z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() }))
      .describe('url then additionalInterfaces as A2A v1.0 interfaces: the endpoints the signature covers'),
    registrations: z
      .array(z.object({ agentId: z.number().int(), agentRegistry: z.string().describe('eip155:<chainId>:<registry>') }))
      .describe('ERC-8004: where the agent is registered'),
    proofOfHuman: proofOfHumanSchema.describe("The proof-of-human extension's params again, unsigned, for readers written before the signature"),
    signatures: z.array(cardSignatureSchema).describe('One signature, by the key that signs now'),
  })
  .meta({
    id: 'AgentCard',
    description:
      "A2A v0.3.0 AgentCard from the agent's own on-chain metadata (fields of the wrong type are left out), with defaults " +
      '(name "Agent #<id>") where it has none, plus the proof-of-human extension, signed by the service',
  });

const smartAccountKindSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('passkey'),
      factory: address('PasskeyAccountFactory (the same as accountFactory)'),
      description: z.string().describe('How the account signs and executes, and the factory call that deploys it'),
    }),
    z.object({
      kind: z.literal('simple'),
      factory: address("SimpleAccountFactory v0.7 at its canonical address (toSimpleSmartAccount's factoryAddress)"),
      implementation: address("The SimpleAccount every account proxies to (the factory's accountImplementation())"),
      version: z.literal('0.7').describe('SimpleAccount release (@account-abstraction/contracts), for EntryPoint v0.7'),
      description: z.string().describe('How the account signs and executes, and the factory call that deploys it'),
    }),
  ])
  .meta({
    id: 'SmartAccountKind',
    description: "A kind of smart account the network's factories deploy: passkey (this service's PasskeyAccount) or simple (SimpleAccount v0.7)",
  });

const catalogueGroupSchema = z
  .object({
    name: z.string().describe('The group (an OpenAPI tag)'),
    description: z.string(),
    operations: z.array(
      z.object({
        method: z.enum(['GET', 'POST']),
        url: z.string().describe('Absolute URL, or URL template with {parameters} as the OpenAPI document names them'),
        summary: z.string(),
        requires: z
          .enum(['session-token', 'agent-signature', 'proxy-token', 'bearer-token'])
          .optional()
          .describe('What the caller must send besides the parameters: a session token, a signed agent request, the proxy token, a bearer token'),
      }),
    ),
  })
  .meta({ id: 'CatalogueGroup' });

export const serviceEndpointsSchema = z
  .object({
    openapi: z.string().describe('The OpenAPI 3.1 document'),
    docs: z.string().describe('Interactive API documentation'),
    llmsTxt: z.string().describe('Onboarding for agents and their developers (llmstxt.org)'),
    llmsFullTxt: z.string().describe('llms.txt with every operation in full'),
    health: z.string(),
    a2a: z
      .object({ card: z.string().describe("The A2A agent's card"), endpoint: z.string().describe('Its JSON-RPC endpoint (A2A v1.0 and v0.3)') })
      .optional(),
    groups: z.array(catalogueGroupSchema).describe('Every documented operation, by group: REST, demo, account abstraction...'),
  })
  .meta({ id: 'ServiceEndpoints' });

export const apiIndexSchema = z
  .object({ name: z.string(), openapi: z.string(), groups: z.array(catalogueGroupSchema) })
  .meta({ id: 'ApiIndex', description: 'Every documented operation of the service, by group' });

const signingSchemeSchema = z
  .object({
    id: z.enum(['x-svc-agent', 'erc8128', 'web-bot-auth']),
    protocol: z.string(),
    keyTypes: z.array(z.enum(['secp256k1', 'ed25519'])),
    headers: z.array(z.string()).describe('The request headers the scheme sends'),
    howToSign: z.string(),
  })
  .meta({ id: 'SigningScheme' });

const chainDiscoverySchema = z
  .object({
    chainId: z.number().int(),
    registry: z.string().describe("The agent registry's address on this chain"),
    rpcUrl: z
      .string()
      .optional()
      .describe(
        "The JSON-RPC of a chain the service runs itself (local anvil); absent for an external RPC, whose URL is not handed out: use the network's public RPC",
      ),
  })
  .meta({ id: 'ChainDiscovery' });

export const discoverySchema = z
  .object({
    name: z.string().describe('Service name'),
    version: z.string().describe('Version of this document'),
    apiBase: z.string().describe('Base address of the agent API: {base_url}/api/agent'),
    networks: z.array(network),
    registrationModes: z.array(z.enum(REGISTRATION_MODES)),
    capabilities: z.array(z.enum(DISCOVERY_CAPABILITIES)),
    sessionTtlMs: z.number().int().describe('Session lifetime in milliseconds'),
    jwksUri: z.string().describe("The service's public signing keys (JWKS, RFC 7517): what its signed cards and credentials verify against"),
    agentCredential: z
      .object({
        endpoint: z.string().describe('POST a signed request here for a credential (SD-JWT VC) for one audience'),
        format: z.literal('dc+sd-jwt'),
        vct: z.string().describe("The credential's type (vct)"),
        statusListUri: z.string().describe("The token status lists' URI template ({listId}): credentials name their list and index"),
      })
      .describe('The human-backed-agent credential'),
    proofOfHumanExtension: z
      .string()
      .describe('The A2A extension URI under which signed cards carry the proof of human (the authoritative, signed copy)'),
    signedRegistrationFile: z.string().describe('The compact JWS of the ERC-8004 registration file; its payload is the file, byte for byte'),
    endpoints: serviceEndpointsSchema.describe(
      'Where everything is: OpenAPI, docs, llms.txt, health, the A2A card and endpoint, every operation by group',
    ),
    signingSchemes: z.array(signingSchemeSchema).describe('The ways a signed request may be signed; every signed endpoint accepts each'),
    accountAbstraction: z
      .partialRecord(
        network,
        z
          .object({
            chainId: z.number().int(),
            entryPointVersion: z.literal('0.7'),
            entryPoint: z.string().describe('ERC-4337 EntryPoint'),
            accountFactory: z.string().optional().describe("The factory of the smartwallet mode's passkey accounts (also in accounts, kind passkey)"),
            paymaster: z.string().optional().describe('The sponsoring paymaster contract'),
            account: z.string().optional().describe('What accountFactory deploys: how the account signs and executes'),
            accounts: z
              .array(smartAccountKindSchema)
              .optional()
              .describe('Every kind of account the factories of this network deploy, each sponsored alike; absent where the service runs none'),
            tokenUrl: z.string().describe('POST here first for an x-aa-proxy-token'),
            bundlerUrl: z.string().describe('ERC-7769 bundler JSON-RPC through the proxy'),
            paymasterUrl: z.string().describe('ERC-7677 paymaster JSON-RPC through the proxy'),
          })
          .meta({ id: 'AccountAbstractionDiscovery' }),
      )
      .optional()
      .describe('Per network where the proxy has a bundler: its ERC-4337 stack (EntryPoint, account factories, paymaster) and the proxy'),
    chains: z
      .object(Object.fromEntries(NETWORK_NAMES.map((name) => [name, chainDiscoverySchema])) as Record<NetworkName, typeof chainDiscoverySchema>)
      .describe("Per network, the chain and the registry: what a verifier given only this service's URL reads (the SDK's requireAgent({ service }))"),
    mcp: z
      .object({
        endpoint: z.string().describe('The MCP server: POST messages, GET the event stream, DELETE ends the session'),
        transport: z.literal('streamable-http'),
        protocolVersion: z.string().describe('The MCP protocol revision the server speaks'),
      })
      .describe('The MCP server (tools over the same services, resources: this document, the OpenAPI document, an interface summary)'),
  })
  .meta({ id: 'DiscoveryDocument' });

export const proofOfHumanExtensionDocumentSchema = z
  .object({
    uri: z.string().describe('The URI cards name the extension by: this URL'),
    name: z.string(),
    description: z.string(),
    jwksUri: z.string().describe('The keys the cards carrying it are signed with (the jku of their signatures)'),
    paramsSchema: z.record(z.string(), z.unknown()).describe("The JSON Schema of the extension's params"),
  })
  .meta({ id: 'ProofOfHumanExtensionDocument', description: "What the registry's proof-of-human extension is, at the URI that identifies it" });

export const registrationFileSchema = z
  .object({
    type: z.literal(ERC8004_REGISTRATION_TYPE),
    name: z.string(),
    description: z.string(),
    services: z.array(z.object({ name: z.string(), endpoint: z.string(), version: z.string().optional() })),
    x402Support: z.boolean(),
    active: z.boolean(),
    registrations: z
      .array(z.object({ agentId: z.number().int(), agentRegistry: z.string() }))
      .describe('Empty: the service itself is not registered as an agent'),
    supportedTrust: z.array(z.string()),
  })
  .meta({ id: 'Erc8004RegistrationFile', description: 'ERC-8004 registration file (registration-v1) of this service' });
