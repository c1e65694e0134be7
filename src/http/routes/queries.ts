import type { Address } from 'viem';
import { z } from 'zod';
import { DISCOVERY_PATH, PROOF_OF_HUMAN_EXTENSION_PATH, REGISTRATION_FILE_PATH, SIGNED_REGISTRATION_FILE_PATH } from '../../core/endpoints.js';
import type { AgentAnswerShape, AgentAnswers, AgentQueryService } from '../../services/agent-queries.js';
import { conditionalGetHeaders, etagHeader, jsonRepresentation, sendPrepared } from '../conditional.js';
import type { ResponseDoc } from '../openapi/route-doc.js';
import { keepResponse, UNCHANGING } from '../response-cache.js';
import type { Route } from '../route.js';
import {
  a2aParamsSchema,
  a2aQuerySchema,
  agentCardSchema,
  agentInfoSchema,
  agentParamsSchema,
  agentsByHumanSchema,
  agentsByNullifierSchema,
  discoverySchema,
  freshnessSchema,
  humanParamsSchema,
  nullifierParamsSchema,
  proofOfHumanExtensionDocumentSchema,
  proofOfHumanSchema,
  registrationFileSchema,
  reputationSchema,
  verifySchema,
  verifyStatusSchema,
} from '../schemas/queries.js';
import { documented, parseWith } from '../validation.js';

const TAGS = ['Public queries'];
/** RFC 7515's media type of a JWS in compact serialization. */
const JOSE_MEDIA_TYPE = 'application/jose';
const DISCOVERY_TAGS = ['Discovery'];
const badParams: ResponseDoc = { description: 'Unsupported chainId, or a malformed parameter; the message names it' };
const notFound: ResponseDoc = { description: 'The agent was never minted on this chain, or has been burned' };
const chainFailure: ResponseDoc = { description: 'The chain RPC failed' };

const notModified: ResponseDoc = {
  description: 'If-None-Match named the current answer: not modified, no body',
  headers: etagHeader,
};

/** The documented schema of each answer the service prepares. */
const ANSWER_SCHEMAS = {
  info: agentInfoSchema,
  verify: verifySchema,
  card: agentCardSchema,
  reputation: reputationSchema,
  'verify-status': verifyStatusSchema,
} as const;
/** The compiler checks that every prepared answer is what its documented schema says. */
const _documented: { [A in AgentAnswerShape]: AgentAnswers[A] extends z.output<(typeof ANSWER_SCHEMAS)[A]> ? true : never } = {
  info: true,
  verify: true,
  card: true,
  reputation: true,
  'verify-status': true,
};

/** What one agent read takes: its path, docs, and the service's answer shape it serves. */
interface AgentRead<A extends AgentAnswerShape> {
  path: string;
  summary: string;
  description?: string;
  /** The answer for an agent that does not exist: 404, or a no-proof body. */
  missing: '404' | 'no-proof body';
  answer: { description: string };
  shape: A;
}

/**
 * GET {path} with {chainId}/{agentId}: parse, then the service's answer as JSON with a strong ETag (checked against
 * the documented schema and serialized once per answer the service keeps), written or answered 304; cacheable in
 * the response cache for as long as the service keeps the answer.
 */
function agentRead<A extends AgentAnswerShape>(queries: AgentQueryService, read: AgentRead<A>): Route {
  const schema = ANSWER_SCHEMAS[read.shape];
  const responses: Record<number, ResponseDoc> = {
    200: { ...read.answer, schema, headers: etagHeader },
    304: notModified,
    400: badParams,
    500: chainFailure,
  };
  if (read.missing === '404') responses[404] = notFound;
  const check = (value: AgentAnswers[A]): void => {
    const result = schema.safeParse(value);
    if (!result.success) throw new Error(`${read.path}: the answer does not match its documented schema: ${result.error.message}`);
  };
  return {
    method: 'get',
    tags: TAGS,
    cache: 'agent',
    cors: 'public',
    path: read.path,
    summary: read.summary,
    ...(read.description ? { description: read.description } : {}),
    params: agentParamsSchema,
    headers: conditionalGetHeaders,
    responses,
    handler: async (req, res) => {
      const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
      const { value, reuse } = await queries.answer(read.shape, network, BigInt(agentId));
      const representation = jsonRepresentation(value, check);
      if (reuse) keepResponse(res, reuse);
      sendPrepared(req, res, representation);
    },
  };
}

/** The public queries and discovery documents (no authentication). */
export function queryRoutes(queries: AgentQueryService, discoveryDocument: () => z.input<typeof discoverySchema>): Route[] {
  const list = { method: 'get', tags: TAGS, cache: 'agent', cors: 'public' } as const;
  const discovery = { method: 'get', tags: DISCOVERY_TAGS, cache: 'discovery', cors: 'public' } as const;
  let extensionDocument: z.output<typeof proofOfHumanExtensionDocumentSchema> | undefined;
  return [
    agentRead(queries, {
      path: '/api/agent/info/{chainId}/{agentId}',
      summary: 'Agent info: address, verification, provider, credentials, registration time',
      missing: '404',
      answer: { description: 'The agent' },
      shape: 'info',
    }),
    {
      ...list,
      path: '/api/agent/agents/{chainId}/{address}',
      summary: 'The agents of a human wallet',
      description:
        "Agents whose NFT the address owns (linked and privy agents: the human's wallet; wallet-free and Ed25519 agents: " +
        'the agent itself) or whose guardian it is (wallet-free, smartwallet and ed25519-linked agents), in id order.',
      params: humanParamsSchema,
      responses: {
        200: { description: 'The agent ids', schema: agentsByHumanSchema },
        400: badParams,
        500: chainFailure,
        503: { description: "The index is still reading the registry's logs, or the service is stopping" },
      },
      handler: async (req, res) => {
        const { chainId: network, address } = parseWith(humanParamsSchema, req.params, 'path');
        const { value, reuse } = await queries.agentsByHuman(network, address as Address);
        if (reuse) keepResponse(res, reuse);
        res.json(documented(agentsByHumanSchema, value));
      },
    },
    {
      ...list,
      path: '/api/agent/agents-by-nullifier/{chainId}/{nullifier}',
      summary: 'The live agents of a human nullifier (for Sybil checks)',
      params: nullifierParamsSchema,
      responses: { 200: { description: 'The agent ids', schema: agentsByNullifierSchema }, 400: badParams, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, nullifier } = parseWith(nullifierParamsSchema, req.params, 'path');
        const { value, reuse } = await queries.agentsByNullifier(network, BigInt(nullifier));
        if (reuse) keepResponse(res, reuse);
        res.json(documented(agentsByNullifierSchema, value));
      },
    },
    agentRead(queries, {
      path: '/api/agent/verify/{chainId}/{agentId}',
      summary: 'Does the agent have a proof of human, from which provider, and how many agents does its human have',
      description: 'An agent without a proof, or that does not exist, gets the no-proof answer (not 404).',
      missing: 'no-proof body',
      answer: { description: 'The verification' },
      shape: 'verify',
    }),
    {
      ...list,
      path: '/api/agent/freshness/{chainId}/{agentId}',
      summary: "Freshness of the agent's proof of human: fresh now, when it expires, how long is left",
      description: 'What the A2A freshness intent answers. Refresh a proof with POST /api/agent/refresh.',
      params: agentParamsSchema,
      responses: { 200: { description: 'The freshness', schema: freshnessSchema }, 400: badParams, 404: notFound, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(freshnessSchema, await queries.freshness(network, BigInt(agentId))));
      },
    },
    agentRead(queries, {
      path: '/api/cards/{chainId}/{agentId}',
      summary: "The agent's A2A agent card, with its proof of human",
      missing: '404',
      answer: { description: 'The card' },
      shape: 'card',
    }),
    agentRead(queries, {
      path: '/api/reputation/{chainId}/{agentId}',
      summary: "Reputation: the proof provider's strength and its label",
      missing: '404',
      answer: { description: 'The reputation' },
      shape: 'reputation',
    }),
    agentRead(queries, {
      path: '/api/verify-status/{chainId}/{agentId}',
      summary: 'Verification status',
      description: 'Only {"verified": false} for an agent without a proof, or that does not exist.',
      missing: 'no-proof body',
      answer: { description: 'The status' },
      shape: 'verify-status',
    }),
    {
      ...discovery,
      path: '/.well-known/a2a/{agentId}',
      summary: "Redirect to the agent's card",
      description: 'Answers 307 with Location /api/cards/{chainId}/{agentId}; the chain defaults to mainnet (42220).',
      params: a2aParamsSchema,
      query: a2aQuerySchema,
      responses: { 307: { description: "Redirect to the agent's card" }, 400: badParams },
      handler: (req, res) => {
        const { agentId } = parseWith(a2aParamsSchema, req.params, 'path');
        const { chain, chainId } = parseWith(a2aQuerySchema, req.query, 'query');
        res.redirect(307, queries.cardLocation(BigInt(agentId), chain ?? chainId));
      },
    },
    {
      ...discovery,
      path: DISCOVERY_PATH,
      summary: 'Service discovery document',
      responses: { 200: { description: 'The discovery document', schema: discoverySchema } },
      handler: (_req, res) => {
        keepResponse(res, UNCHANGING);
        res.json(documented(discoverySchema, discoveryDocument()));
      },
    },
    {
      ...discovery,
      path: REGISTRATION_FILE_PATH,
      summary: 'ERC-8004 registration file of this service',
      description: `Signed: ${SIGNED_REGISTRATION_FILE_PATH} is a JWS that carries these bytes.`,
      responses: { 200: { description: 'The registration file', schema: registrationFileSchema } },
      handler: (_req, res) => {
        keepResponse(res, UNCHANGING);
        res.json(documented(registrationFileSchema, queries.registrationFile()));
      },
    },
    {
      ...discovery,
      path: SIGNED_REGISTRATION_FILE_PATH,
      summary: 'The ERC-8004 registration file, signed by the service',
      description:
        'A JWS (RFC 7515 compact serialization) whose payload is the registration file, byte for byte what ' +
        `${REGISTRATION_FILE_PATH} serves; protected header: alg and kid of a key of the service's JWKS, jku the JWKS URL, ` +
        'cty application/json. A copy of the file can be checked against it, or the payload read instead. Signed once per ' +
        'signing key: after a rotation it is signed again by the new one.',
      responses: {
        200: { description: 'The compact JWS', contentType: JOSE_MEDIA_TYPE },
        503: { description: 'The store that keeps the signing keys does not answer' },
      },
      handler: async (_req, res) => {
        const { value, reuse } = await queries.signedRegistrationFile();
        if (reuse) keepResponse(res, reuse);
        res.type(JOSE_MEDIA_TYPE).send(value);
      },
    },
    {
      ...discovery,
      path: PROOF_OF_HUMAN_EXTENSION_PATH,
      summary: "The registry's proof-of-human A2A extension, which this URL identifies",
      description:
        "What the extension of this URI in an agent card (capabilities.extensions) means: its params are the registry's " +
        "claims about the agent and its human, read from the chain and covered by the card's signature (the " +
        "authoritative copy; the card's top-level proofOfHuman repeats them unsigned). paramsSchema is their JSON Schema.",
      responses: { 200: { description: 'The extension', schema: proofOfHumanExtensionDocumentSchema } },
      handler: (_req, res) => {
        keepResponse(res, UNCHANGING);
        extensionDocument ??= documented(proofOfHumanExtensionDocumentSchema, {
          ...queries.proofOfHumanExtension(),
          paramsSchema: z.toJSONSchema(proofOfHumanSchema, { io: 'output' }) as Record<string, unknown>,
        });
        res.json(extensionDocument);
      },
    },
  ];
}
