import { Router } from 'express';
import type { Address } from 'viem';
import type { z } from 'zod';
import type { AgentQueryService } from '../../services/agent-queries.js';
import type { ResponseDoc, RouteDoc } from '../openapi/route-doc.js';
import {
  a2aParamsSchema,
  a2aQuerySchema,
  agentCardSchema,
  agentInfoSchema,
  agentParamsSchema,
  agentsByHumanSchema,
  agentsByNullifierSchema,
  discoverySchema,
  humanParamsSchema,
  nullifierParamsSchema,
  registrationFileSchema,
  reputationSchema,
  verifySchema,
  verifyStatusSchema,
} from '../schemas/queries.js';
import { parseWith } from '../validation.js';

/** The answer as its documented schema types it: the compiler checks that the service returns what the docs say. */
const documented = <S extends z.ZodType>(_schema: S, value: z.output<S>): z.output<S> => value;

const TAGS = ['Public queries'];
const DISCOVERY_TAGS = ['Discovery'];
const badParams: ResponseDoc = { description: 'Unsupported chainId, or a malformed parameter; the message names it' };
const notFound: ResponseDoc = { description: 'The agent was never minted on this chain, or has been burned' };
const chainFailure: ResponseDoc = { description: 'The chain RPC failed' };

export const queryDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/agent/info/{chainId}/{agentId}',
    summary: 'Agent info: address, verification, provider, credentials, registration time',
    tags: TAGS,
    params: agentParamsSchema,
    responses: { 200: { description: 'The agent', schema: agentInfoSchema }, 400: badParams, 404: notFound, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/agent/agents/{chainId}/{address}',
    summary: 'The agents of a human wallet',
    description:
      "Agents whose NFT the address owns (linked and privy agents: the human's wallet; wallet-free and Ed25519 agents: " +
      'the agent itself) or whose guardian it is (wallet-free, smartwallet and ed25519-linked agents), in id order.',
    tags: TAGS,
    params: humanParamsSchema,
    responses: {
      200: { description: 'The agent ids', schema: agentsByHumanSchema },
      400: badParams,
      500: chainFailure,
      503: { description: "The index is still reading the registry's logs, or the service is stopping" },
    },
  },
  {
    method: 'get',
    path: '/api/agent/agents-by-nullifier/{chainId}/{nullifier}',
    summary: 'The live agents of a human nullifier (for Sybil checks)',
    tags: TAGS,
    params: nullifierParamsSchema,
    responses: { 200: { description: 'The agent ids', schema: agentsByNullifierSchema }, 400: badParams, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/agent/verify/{chainId}/{agentId}',
    summary: 'Does the agent have a proof of human, from which provider, and how many agents does its human have',
    description: 'An agent without a proof, or that does not exist, gets the no-proof answer (not 404).',
    tags: TAGS,
    params: agentParamsSchema,
    responses: { 200: { description: 'The verification', schema: verifySchema }, 400: badParams, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/cards/{chainId}/{agentId}',
    summary: "The agent's A2A agent card, with its proof of human",
    tags: TAGS,
    params: agentParamsSchema,
    responses: { 200: { description: 'The card', schema: agentCardSchema }, 400: badParams, 404: notFound, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/reputation/{chainId}/{agentId}',
    summary: "Reputation: the proof provider's strength and its label",
    tags: TAGS,
    params: agentParamsSchema,
    responses: { 200: { description: 'The reputation', schema: reputationSchema }, 400: badParams, 404: notFound, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/api/verify-status/{chainId}/{agentId}',
    summary: 'Verification status',
    description: 'Only {"verified": false} for an agent without a proof, or that does not exist.',
    tags: TAGS,
    params: agentParamsSchema,
    responses: { 200: { description: 'The status', schema: verifyStatusSchema }, 400: badParams, 500: chainFailure },
  },
  {
    method: 'get',
    path: '/.well-known/a2a/{agentId}',
    summary: "Redirect to the agent's card",
    description: 'Answers 307 with Location /api/cards/{chainId}/{agentId}; the chain defaults to mainnet (42220).',
    tags: DISCOVERY_TAGS,
    params: a2aParamsSchema,
    query: a2aQuerySchema,
    responses: { 307: { description: "Redirect to the agent's card" }, 400: badParams },
  },
  {
    method: 'get',
    path: '/.well-known/self-agent-id.json',
    summary: 'Service discovery document',
    tags: DISCOVERY_TAGS,
    responses: { 200: { description: 'The discovery document', schema: discoverySchema } },
  },
  {
    method: 'get',
    path: '/.well-known/agent-registration.json',
    summary: 'ERC-8004 registration file of this service',
    tags: DISCOVERY_TAGS,
    responses: { 200: { description: 'The registration file', schema: registrationFileSchema } },
  },
];

/** The public queries and discovery documents (no authentication). */
export function queryRoutes(queries: AgentQueryService): Router {
  const router = Router();

  router.get('/api/agent/info/:chainId/:agentId', async (req, res) => {
    const { chainId, agentId } = parseWith(agentParamsSchema, req.params, 'path');
    res.json(documented(agentInfoSchema, await queries.info(chainId, BigInt(agentId))));
  });

  router.get('/api/agent/agents/:chainId/:address', async (req, res) => {
    const { chainId, address } = parseWith(humanParamsSchema, req.params, 'path');
    res.json(documented(agentsByHumanSchema, await queries.agentsByHuman(chainId, address as Address)));
  });

  router.get('/api/agent/agents-by-nullifier/:chainId/:nullifier', async (req, res) => {
    const { chainId, nullifier } = parseWith(nullifierParamsSchema, req.params, 'path');
    res.json(documented(agentsByNullifierSchema, await queries.agentsByNullifier(chainId, BigInt(nullifier))));
  });

  router.get('/api/agent/verify/:chainId/:agentId', async (req, res) => {
    const { chainId, agentId } = parseWith(agentParamsSchema, req.params, 'path');
    res.json(documented(verifySchema, await queries.verify(chainId, BigInt(agentId))));
  });

  router.get('/api/cards/:chainId/:agentId', async (req, res) => {
    const { chainId, agentId } = parseWith(agentParamsSchema, req.params, 'path');
    res.json(documented(agentCardSchema, await queries.card(chainId, BigInt(agentId))));
  });

  router.get('/api/reputation/:chainId/:agentId', async (req, res) => {
    const { chainId, agentId } = parseWith(agentParamsSchema, req.params, 'path');
    res.json(documented(reputationSchema, await queries.reputation(chainId, BigInt(agentId))));
  });

  router.get('/api/verify-status/:chainId/:agentId', async (req, res) => {
    const { chainId, agentId } = parseWith(agentParamsSchema, req.params, 'path');
    res.json(documented(verifyStatusSchema, await queries.verifyStatus(chainId, BigInt(agentId))));
  });

  router.get('/.well-known/a2a/:agentId', (req, res) => {
    const { agentId } = parseWith(a2aParamsSchema, req.params, 'path');
    const { chain, chainId } = parseWith(a2aQuerySchema, req.query, 'query');
    res.redirect(307, queries.cardLocation(BigInt(agentId), chain ?? chainId));
  });

  router.get('/.well-known/self-agent-id.json', (_req, res) => {
    res.json(documented(discoverySchema, queries.discovery()));
  });

  router.get('/.well-known/agent-registration.json', (_req, res) => {
    res.json(documented(registrationFileSchema, queries.registrationFile()));
  });

  return router;
}
