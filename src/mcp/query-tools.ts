// The query tools: each takes the path parameters of its REST endpoint and answers its REST answer, through the same
// service call (the agent query service; the demo verify service for a signed request described by the caller).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Logger } from 'pino';
import type { Address } from 'viem';
import type { z } from 'zod';
import { NETWORKS } from '../core/networks.js';
import { demoQuerySchema, demoVerificationSchema, signedRequestSchema } from '../http/schemas/demo.js';
import {
  agentInfoSchema,
  agentParamsSchema,
  agentsByHumanSchema,
  agentsByNullifierSchema,
  freshnessSchema,
  humanParamsSchema,
  nullifierParamsSchema,
  verifySchema,
} from '../http/schemas/queries.js';
import type { Services } from '../services/index.js';
import type { SignedRequest } from '../services/signed-requests.js';
import { READ_ONLY, registerTool } from './tool-registration.js';
import { answer, structured } from './tool-results.js';

/** The arguments of verify_signed_request: the demo's network query parameter, and the request as received. */
export const verifySignedRequestInput = { network: demoQuerySchema.shape.network, signedRequest: signedRequestSchema };

/** The request the verifier sees: headers by lowercase name, the Host it came with when the URL is a path. */
function signedRequestOf(described: z.output<typeof signedRequestSchema>): SignedRequest {
  const headers = Object.fromEntries(Object.entries(described.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const host = headers['host'];
  return { headers, method: described.method.toUpperCase(), url: described.url, ...(host ? { authority: host } : {}), body: described.body ?? '' };
}

export function registerQueryTools(server: McpServer, services: Services, logger: Logger): void {
  const { queries } = services;
  registerTool(
    server,
    logger,
    'lookup_agent',
    { input: agentParamsSchema.shape, output: agentInfoSchema.shape, annotations: READ_ONLY },
    async ({ chainId: network, agentId }) => {
      const info = structured(agentInfoSchema, await queries.info(network, BigInt(agentId)));
      return answer(`Agent ${info.agentId} on ${info.network}: ${info.isVerified ? 'verified' : 'not verified'} (${info.strengthLabel})`, info);
    },
  );
  registerTool(
    server,
    logger,
    'verify_agent',
    { input: agentParamsSchema.shape, output: verifySchema.shape, annotations: READ_ONLY },
    async ({ chainId: network, agentId }) => {
      const result = structured(verifySchema, await queries.verify(network, BigInt(agentId)));
      const backed = result.isVerified ? `is backed by a human (strength ${result.verificationStrength})` : 'has no valid proof of human';
      return answer(`Agent ${result.agentId} on ${network} ${backed}`, result);
    },
  );
  registerTool(
    server,
    logger,
    'agents_of_human',
    { input: humanParamsSchema.shape, output: agentsByHumanSchema.shape, annotations: READ_ONLY },
    async ({ chainId: network, address }) => {
      const { value } = await queries.agentsByHuman(network, address as Address);
      const result = structured(agentsByHumanSchema, value);
      return answer(`${result.humanAddress} has ${result.agents.length} agent(s) on ${network}: ${result.agents.join(', ') || 'none'}`, result);
    },
  );
  registerTool(
    server,
    logger,
    'agents_of_nullifier',
    { input: nullifierParamsSchema.shape, output: agentsByNullifierSchema.shape, annotations: READ_ONLY },
    async ({ chainId: network, nullifier }) => {
      const { value } = await queries.agentsByNullifier(network, BigInt(nullifier));
      const result = structured(agentsByNullifierSchema, value);
      return answer(
        `Nullifier ${result.nullifier} has ${result.agents.length} live agent(s) on ${network}: ${result.agents.join(', ') || 'none'}`,
        result,
      );
    },
  );
  registerTool(
    server,
    logger,
    'proof_freshness',
    { input: agentParamsSchema.shape, output: freshnessSchema.shape, annotations: READ_ONLY },
    async ({ chainId: network, agentId }) => {
      const result = structured(freshnessSchema, await queries.freshness(network, BigInt(agentId)));
      const when = result.proofExpiresAt > 0 ? ` (expires ${new Date(result.proofExpiresAt * 1000).toISOString()})` : '';
      return answer(`The proof of agent ${result.agentId} on ${network} is ${result.isProofFresh ? 'fresh' : 'not fresh'}${when}`, result);
    },
  );
  registerTool(
    server,
    logger,
    'verify_signed_request',
    // not read-only: the signed message is spent (replay guard) and the human's quota counts it
    {
      input: verifySignedRequestInput,
      output: demoVerificationSchema.shape,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ network, signedRequest }) => {
      const result = structured(demoVerificationSchema, await services.demo.verify.verify(signedRequestOf(signedRequest), network));
      const chain = NETWORKS[result.network].chainId;
      return answer(
        `Signed by agent ${result.agentId} (${result.agentAddress}) on chain ${chain}, backed by a human with ${result.agentCount} agent(s)`,
        result,
      );
    },
  );
}
