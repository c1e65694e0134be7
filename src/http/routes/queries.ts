import type { Address } from 'viem';
import type { AgentQueryService } from '../../services/agent-queries.js';
import type { ResponseDoc } from '../openapi/route-doc.js';
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
  humanParamsSchema,
  nullifierParamsSchema,
  registrationFileSchema,
  reputationSchema,
  verifySchema,
  verifyStatusSchema,
} from '../schemas/queries.js';
import { documented, parseWith } from '../validation.js';

const TAGS = ['Public queries'];
const DISCOVERY_TAGS = ['Discovery'];
const badParams: ResponseDoc = { description: 'Unsupported chainId, or a malformed parameter; the message names it' };
const notFound: ResponseDoc = { description: 'The agent was never minted on this chain, or has been burned' };
const chainFailure: ResponseDoc = { description: 'The chain RPC failed' };

/** The public queries and discovery documents (no authentication). */
export function queryRoutes(queries: AgentQueryService): Route[] {
  const agentRead = { method: 'get', tags: TAGS, cache: 'agent', cors: 'public' } as const;
  const discovery = { method: 'get', tags: DISCOVERY_TAGS, cache: 'discovery', cors: 'public' } as const;
  return [
    {
      ...agentRead,
      path: '/api/agent/info/{chainId}/{agentId}',
      summary: 'Agent info: address, verification, provider, credentials, registration time',
      params: agentParamsSchema,
      responses: { 200: { description: 'The agent', schema: agentInfoSchema }, 400: badParams, 404: notFound, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(agentInfoSchema, await queries.info(network, BigInt(agentId))));
      },
    },
    {
      ...agentRead,
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
        res.json(documented(agentsByHumanSchema, await queries.agentsByHuman(network, address as Address)));
      },
    },
    {
      ...agentRead,
      path: '/api/agent/agents-by-nullifier/{chainId}/{nullifier}',
      summary: 'The live agents of a human nullifier (for Sybil checks)',
      params: nullifierParamsSchema,
      responses: { 200: { description: 'The agent ids', schema: agentsByNullifierSchema }, 400: badParams, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, nullifier } = parseWith(nullifierParamsSchema, req.params, 'path');
        res.json(documented(agentsByNullifierSchema, await queries.agentsByNullifier(network, BigInt(nullifier))));
      },
    },
    {
      ...agentRead,
      path: '/api/agent/verify/{chainId}/{agentId}',
      summary: 'Does the agent have a proof of human, from which provider, and how many agents does its human have',
      description: 'An agent without a proof, or that does not exist, gets the no-proof answer (not 404).',
      params: agentParamsSchema,
      responses: { 200: { description: 'The verification', schema: verifySchema }, 400: badParams, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(verifySchema, await queries.verify(network, BigInt(agentId))));
      },
    },
    {
      ...agentRead,
      path: '/api/cards/{chainId}/{agentId}',
      summary: "The agent's A2A agent card, with its proof of human",
      params: agentParamsSchema,
      responses: { 200: { description: 'The card', schema: agentCardSchema }, 400: badParams, 404: notFound, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(agentCardSchema, await queries.card(network, BigInt(agentId))));
      },
    },
    {
      ...agentRead,
      path: '/api/reputation/{chainId}/{agentId}',
      summary: "Reputation: the proof provider's strength and its label",
      params: agentParamsSchema,
      responses: { 200: { description: 'The reputation', schema: reputationSchema }, 400: badParams, 404: notFound, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(reputationSchema, await queries.reputation(network, BigInt(agentId))));
      },
    },
    {
      ...agentRead,
      path: '/api/verify-status/{chainId}/{agentId}',
      summary: 'Verification status',
      description: 'Only {"verified": false} for an agent without a proof, or that does not exist.',
      params: agentParamsSchema,
      responses: { 200: { description: 'The status', schema: verifyStatusSchema }, 400: badParams, 500: chainFailure },
      handler: async (req, res) => {
        const { chainId: network, agentId } = parseWith(agentParamsSchema, req.params, 'path');
        res.json(documented(verifyStatusSchema, await queries.verifyStatus(network, BigInt(agentId))));
      },
    },
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
      path: '/.well-known/self-agent-id.json',
      summary: 'Service discovery document',
      responses: { 200: { description: 'The discovery document', schema: discoverySchema } },
      handler: (_req, res) => {
        res.json(documented(discoverySchema, queries.discovery()));
      },
    },
    {
      ...discovery,
      path: '/.well-known/agent-registration.json',
      summary: 'ERC-8004 registration file of this service',
      responses: { 200: { description: 'The registration file', schema: registrationFileSchema } },
      handler: (_req, res) => {
        res.json(documented(registrationFileSchema, queries.registrationFile()));
      },
    },
  ];
}
