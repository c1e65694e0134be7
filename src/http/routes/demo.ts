// The demo endpoints: agents use their identity. Each POST is a thin route over a demo service; each GET
// describes its endpoint to an agent (headers, how to sign, body). The signature covers the raw body text, so
// these routes read the body as text and leave its parsing to the service.
import { NETWORKS } from '../../core/networks.js';
import type { DemoChainVerifyService } from '../../demo/chain-verify.js';
import type { Services } from '../../services/index.js';
import type { Route } from '../route.js';
import {
  agentToAgentSchema,
  censusContributionSchema,
  censusSummarySchema,
  chainVerificationSchema,
  chainVerifyHelpQuerySchema,
  chatAnswerSchema,
  demoCensusQuerySchema,
  demoDescriptionSchema,
  demoQuerySchema,
  demoVerificationSchema,
} from '../schemas/demo.js';
import { QUOTA, refusal, signatureErrors, signedRequestOf } from '../signed-route.js';
import { SIGNED_REQUEST_AUTHENTICATION as authentication } from '../signing-schemes.js';
import { documented, parseWith } from '../validation.js';

const TAGS = ['Demo'];

/** What every signed demo POST shares: the signed headers, CORS for pages that hold an agent key, the raw body. */
const SIGNED_POST = { method: 'post', tags: TAGS, query: demoQuerySchema, signedRequest: 'required', cors: 'signed', textBody: true } as const;

/** What GET on a demo path answers: the endpoint explained to an agent. */
interface Description {
  endpoint: string;
  method: 'GET' | 'POST';
  description: string;
  exampleBody?: unknown;
  notes?: string;
}

const describe = (d: Description) => ({ ...d, authentication, query: { network: 'mainnet or testnet (default testnet)' } });

/** GET {path}: the description of the endpoint, cached like discovery documents. */
const descriptionRoute = (d: Description): Route => ({
  method: 'get',
  path: d.endpoint,
  summary: `How to call ${d.method} ${d.endpoint}`,
  tags: TAGS,
  cache: 'discovery',
  cors: 'signed',
  responses: { 200: { description: 'The description', schema: demoDescriptionSchema } },
  handler: (_req, res) => {
    res.json(describe(d));
  },
});

const VERIFY: Description = {
  endpoint: '/api/demo/verify',
  method: 'POST',
  description: 'Checks the signature and the on-chain status of the signing agent; returns agent info and credentials.',
  exampleBody: {},
  notes:
    'Any body may be sent; it is covered by the signature. A JSON body may carry "policy": human-level policies for this check ' +
    '(minimumAge, ofac, nationalities {allow, deny}, maxAgentsPerHuman, maxProofAgeS, minimumStrength); a refusal is 403 {error, policy}. ' +
    'A signed message is good once, service-wide: used here, at another endpoint or by the A2A verify intent, it is a replay (409).',
};

const AGENT_TO_AGENT: Description = {
  endpoint: '/api/demo/agent-to-agent',
  method: 'POST',
  description:
    "The service's demo agent verifies the calling agent, says whether both are backed by the same human, and signs its answer " +
    'with the same x-svc-agent-* headers (check them with verifySignedResponse over POST, the request URL and the body).',
  exampleBody: {},
};

const CHAIN_VERIFY: Description = {
  endpoint: '/api/demo/chain-verify',
  method: 'POST',
  description:
    "The service's relayer submits the agent's EIP-712 meta-transaction to the demo verifier contract, which checks the agent " +
    'in the registry on chain. The request must be signed too (checked first). At most 3 per rolling hour per human.',
  exampleBody: { agentKey: '0x…(bytes32)', nonce: '0', deadline: 1_900_000_000, eip712Signature: '0x…(65 bytes)', networkId: 'testnet' },
  notes: 'Sign MetaVerify(bytes32 agentKey,uint256 nonce,uint256 deadline) in the domain below; nonce = nonces(agentKey) of the contract.',
};

const CHAT: Description = {
  endpoint: '/api/demo/chat',
  method: 'POST',
  description:
    "Chat with the service's agent about agents and the registry (lookup, verify, freshness, status, help). Signed requests are " +
    'verified and the agent is named; unsigned ones are anonymous. Turns are kept per session_id, for a while, without tokens.',
  exampleBody: { query: 'verify agent 1 on testnet', session_id: 'my-session' },
  notes: 'Both signature headers, or none: one alone is a 401.',
};

const CENSUS: Description = {
  endpoint: '/api/demo/census',
  method: 'POST',
  description:
    "POST contributes the signing agent's on-chain credentials (one entry per agent); GET (signed too) reads the aggregate: " +
    'top countries, verified over 18 and 21, OFAC clear, total agents.',
  exampleBody: {},
};

const CHAIN_VERIFY_ED25519: Description = {
  endpoint: '/api/demo/chain-verify-ed25519',
  method: 'POST',
  description:
    'The same as chain-verify for agents registered with Ed25519 keys: agentKey is the raw public key (as in the registry) and ' +
    'eip712Signature the 64-byte Ed25519 signature over messageHash(agentKey, nonce, deadline) = keccak256(agentKey ‖ nonce ‖ deadline).',
  exampleBody: { agentKey: '0x…(raw Ed25519 key)', nonce: '0', deadline: 1_900_000_000, eip712Signature: '0x…(64 bytes)', networkId: 'testnet' },
};

/** POST relays a meta-transaction; GET names what a signer needs: the contract, its EIP-712 domain, a key's nonce. */
function chainVerifyRoutes(service: DemoChainVerifyService, description: Description): Route[] {
  const ed25519 = service.keyType === 'ed25519';
  return [
    {
      ...SIGNED_POST,
      path: description.endpoint,
      summary: ed25519
        ? "Relay an Ed25519 agent's meta-transaction to the Ed25519 demo verifier contract"
        : "Relay the agent's EIP-712 meta-transaction to the demo verifier contract",
      body: service.bodySchema,
      responses: {
        200: { description: 'Mined', schema: chainVerificationSchema },
        ...signatureErrors,
        400: { description: 'A malformed body, an unsupported network, or the contract refused (the message says why)' },
        409: {
          description: 'A replay of the signed request, or this meta-transaction (agent key and nonce) is being relayed by another request now',
        },
        429: refusal(`More than 3 relayed transactions for this human in the rolling hour (a failed relay does not count), or ${QUOTA}`),
        503: { description: 'No relayer on this network (the message names the setting)' },
      },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        res.json(documented(chainVerificationSchema, await service.relay(signedRequestOf(req), network)));
      },
    },
    {
      method: 'get',
      path: description.endpoint,
      summary: `How to call POST ${description.endpoint}: the contract, ${ed25519 ? 'the message to sign' : 'the EIP-712 domain and types'}, and the nonce of ?agentKey=`,
      tags: TAGS,
      query: chainVerifyHelpQuerySchema,
      cors: 'signed',
      responses: {
        200: { description: 'The description', schema: demoDescriptionSchema },
        400: { description: 'A malformed agentKey or network, or a network without this contract' },
      },
      handler: async (req, res) => {
        const { network, agentKey } = parseWith(chainVerifyHelpQuerySchema, req.query, 'query');
        const contract = service.contractOf(network);
        const { chainId } = NETWORKS[network];
        res.json({
          ...describe(description),
          network,
          contract: contract.address,
          ...(ed25519
            ? { message: 'keccak256(abi.encodePacked(bytes32 agentKey, uint256 nonce, uint256 deadline)), signed as 32 raw bytes' }
            : {
                eip712: {
                  domain: { name: 'AgentDemoVerifier', version: '1', chainId, verifyingContract: contract.address },
                  types: {
                    MetaVerify: [
                      { name: 'agentKey', type: 'bytes32' },
                      { name: 'nonce', type: 'uint256' },
                      { name: 'deadline', type: 'uint256' },
                    ],
                  },
                  primaryType: 'MetaVerify',
                },
              }),
          ...(agentKey ? { agentKey, nonce: (await contract.nonceOf(agentKey as `0x${string}`)).toString() } : {}),
        });
      },
    },
  ];
}

export function demoRoutes(services: Services): Route[] {
  const { demo } = services;
  const messages = services.limits.agentMessages;
  return [
    {
      ...SIGNED_POST,
      path: VERIFY.endpoint,
      summary: 'Verify a signed agent request: which agent, backed by which human, disclosing what',
      responses: { 200: { description: 'The verified agent', schema: demoVerificationSchema }, ...signatureErrors },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        res.json(documented(demoVerificationSchema, await demo.verify.verify(signedRequestOf(req), network)));
      },
    },
    descriptionRoute(VERIFY),
    {
      ...SIGNED_POST,
      path: AGENT_TO_AGENT.endpoint,
      summary: "Agent to agent: the service's demo agent answers a verified agent, signing its answer",
      responses: {
        200: { description: 'The signed answer (x-svc-agent-* response headers)', schema: agentToAgentSchema },
        ...signatureErrors,
        503: { description: 'No demo agent on this network (the message names the setting)' },
      },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        const { body, headers } = await demo.agentToAgent.answer(signedRequestOf(req), network);
        res.set(headers).type('application/json').send(body);
      },
    },
    descriptionRoute(AGENT_TO_AGENT),
    {
      method: 'post',
      path: CHAT.endpoint,
      summary: "Chat with the service's agent; signed requests are verified, unsigned ones anonymous",
      tags: TAGS,
      query: demoQuerySchema,
      signedRequest: 'optional',
      cors: 'signed',
      textBody: true,
      // anyone may write here (each query leaves a history): counted per client before the body is read, and small
      limit: 'agent-messages',
      bodyLimit: messages.maxBodyBytes,
      responses: {
        200: { description: 'The answer', schema: chatAnswerSchema },
        ...signatureErrors,
        400: { description: 'A body that is not JSON, or an unsupported network' },
        401: { description: 'Only one of the two signature headers' },
        413: { description: `The body is over ${messages.maxBodyBytes} bytes, or the query over ${messages.maxMessageBytes} bytes (UTF-8)` },
        429: refusal(
          `More than ${messages.rate.rule.limit} messages to the agent in a minute from this address, A2A messages included (Retry-After), or ${QUOTA}`,
        ),
        502: { description: 'The external chat agent service refused' },
        503: { description: 'The external chat agent service is unreachable' },
      },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        res.json(documented(chatAnswerSchema, await demo.chat.chat(signedRequestOf(req), network)));
      },
    },
    descriptionRoute(CHAT),
    ...chainVerifyRoutes(demo.chainVerify, CHAIN_VERIFY),
    ...chainVerifyRoutes(demo.chainVerifyEd25519, CHAIN_VERIFY_ED25519),
    {
      ...SIGNED_POST,
      path: CENSUS.endpoint,
      summary: "Contribute the signing agent's credentials to the census",
      responses: { 200: { description: 'Recorded', schema: censusContributionSchema }, ...signatureErrors },
      handler: async (req, res) => {
        const { network } = parseWith(demoQuerySchema, req.query, 'query');
        res.json(documented(censusContributionSchema, await demo.census.contribute(signedRequestOf(req), network)));
      },
    },
    {
      method: 'get',
      path: CENSUS.endpoint,
      summary: 'The census aggregate (signed), or with ?help the description of the endpoint',
      tags: TAGS,
      query: demoCensusQuerySchema,
      signedRequest: 'required',
      cors: 'signed',
      responses: {
        200: { description: 'The aggregate (or, with ?help, the description)', schema: censusSummarySchema.or(demoDescriptionSchema) },
        ...signatureErrors,
      },
      handler: async (req, res) => {
        const { network, help } = parseWith(demoCensusQuerySchema, req.query, 'query');
        if (help !== undefined) {
          res.json(describe(CENSUS));
          return;
        }
        res.json(documented(censusSummarySchema, await demo.census.summary(signedRequestOf(req), network)));
      },
    },
  ];
}
