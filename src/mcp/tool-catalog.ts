// The MCP server's tools by name: what each does, the REST endpoint it answers like (same schemas, same service call)
// and the A2A intent that asks the same. The tool registrations, the interface summary and the tests read it.
import { SESSION_BASE_PATHS } from '../core/endpoints.js';

export const QUERY_TOOLS = [
  'lookup_agent',
  'verify_agent',
  'agents_of_human',
  'agents_of_nullifier',
  'proof_freshness',
  'verify_signed_request',
] as const;
export const SESSION_TOOLS = ['register_agent', 'deregister_agent', 'refresh_proof', 'identify_human'] as const;
export const TOOL_NAMES = [...QUERY_TOOLS, ...SESSION_TOOLS, 'registration_status'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
export type SessionToolName = (typeof SESSION_TOOLS)[number];

export interface ToolInfo {
  title: string;
  description: string;
  /** The REST endpoint whose schemas and service call the tool shares: method and path template. */
  rest: { method: 'get' | 'post'; path: string };
  /** The A2A intent (a skill of the service's agent card) that asks the same, where there is one. */
  intent?: 'register' | 'status' | 'lookup' | 'verify' | 'deregister' | 'freshness';
}

const FOLLOWS =
  'With a progressToken, the call follows the session and reports each stage as MCP progress (the first one carries the scan page and the deep link), ' +
  'until it ends or the wait limit passes; then the answer is the session as it stands: call registration_status with status.sessionToken to follow it further. ' +
  'Without one it answers at once. Structured answer: {session, status}, the REST answers of opening the session and of its status; the QR code is also an image.';

export const TOOLS: Readonly<Record<ToolName, ToolInfo>> = {
  lookup_agent: {
    title: 'Look up an agent',
    description:
      "An agent's on-chain record: its address, proof of human (provider, strength, expiry state), disclosed credentials, registration time.",
    rest: { method: 'get', path: '/api/agent/info/{chainId}/{agentId}' },
    intent: 'lookup',
  },
  verify_agent: {
    title: 'Is an agent backed by a human',
    description:
      'Whether the agent has a proof of human that has not expired, from which provider, how strong, and how many agents its human has. ' +
      'An agent without a proof (or that does not exist) gets the no-proof answer.',
    rest: { method: 'get', path: '/api/agent/verify/{chainId}/{agentId}' },
    intent: 'verify',
  },
  agents_of_human: {
    title: "A human wallet's agents",
    description: 'The agents whose NFT the address owns or whose guardian it is, in id order.',
    rest: { method: 'get', path: '/api/agent/agents/{chainId}/{address}' },
  },
  agents_of_nullifier: {
    title: "A human nullifier's agents",
    description: 'The live agents of one human nullifier (one person, whatever wallet): for Sybil checks.',
    rest: { method: 'get', path: '/api/agent/agents-by-nullifier/{chainId}/{nullifier}' },
  },
  proof_freshness: {
    title: "Freshness of an agent's proof",
    description: "Whether the agent's proof of human is still fresh, when it expires and how long is left. Refresh it with refresh_proof.",
    rest: { method: 'get', path: '/api/agent/freshness/{chainId}/{agentId}' },
    intent: 'freshness',
  },
  verify_signed_request: {
    title: 'Verify a signed agent request',
    description:
      'Which registered agent signed a request you received (x-svc-agent-* headers, or an RFC 9421 signature: ERC-8128 or Web Bot Auth), ' +
      'and whether a human backs it: give the method, the URL, the headers and the exact body as received. A signed message is accepted ' +
      'once, service-wide (a second check of the same request is a replay). A JSON body may carry "policy" (minimumAge, ofac, nationalities, ' +
      'maxAgentsPerHuman, maxProofAgeS, minimumStrength). Network default: testnet, as POST /api/demo/verify.',
    rest: { method: 'post', path: '/api/demo/verify' },
    intent: 'verify',
  },
  register_agent: {
    title: 'Register an agent',
    description:
      'Opens a registration session: the human scans the QR code (or opens the deep link) in the identity app and proves to be a person; ' +
      'the agent is then registered on chain and has an agent id. Modes: wallet-free (the service generates the agent key; export it ' +
      `with GET ${SESSION_BASE_PATHS.register}/export), linked (humanAddress: the human's wallet), ed25519, ed25519-linked, privy, smartwallet. ` +
      'One agent per human by default on the local chains: register as another person with another document in the identity app. ' +
      `Network default: mainnet (real passports); testnet takes mock documents. ${FOLLOWS}`,
    rest: { method: 'post', path: SESSION_BASE_PATHS.register },
    intent: 'register',
  },
  deregister_agent: {
    title: 'Deregister an agent',
    description: `Opens a deregistration session: the human proves again, and the agent NFT is burned. ${FOLLOWS}`,
    rest: { method: 'post', path: SESSION_BASE_PATHS.deregister },
    intent: 'deregister',
  },
  refresh_proof: {
    title: "Refresh an agent's proof of human",
    description: `Opens a proof refresh session for an existing agent: the human proves again and the proof gets a new expiry. ${FOLLOWS}`,
    rest: { method: 'post', path: SESSION_BASE_PATHS.refresh },
  },
  identify_human: {
    title: 'Identify a human',
    description: `Opens an identify session: the human proves, and the answer names their nullifier and agents, without registering anything. ${FOLLOWS}`,
    rest: { method: 'post', path: SESSION_BASE_PATHS.identify },
  },
  registration_status: {
    title: 'Status of a session',
    description:
      'The stage of a registration, deregistration, refresh or identify session, from its session token (the latest one an answer gave), ' +
      'as its REST status endpoint answers. With a progressToken, follows the session like register_agent until it ends or the wait limit passes.',
    rest: { method: 'get', path: `${SESSION_BASE_PATHS.register}/status` },
    intent: 'status',
  },
};
