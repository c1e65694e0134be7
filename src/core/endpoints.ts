// The public paths that services and the A2A agent put into links (callback and scan URLs, the A2A endpoint of
// cards, the card redirect). The HTTP route table serves exactly these paths, so a link never points nowhere.
import type { SessionType } from './session-types.js';

export const A2A_PATH = '/api/a2a';
/** The discovery document (interface: GET /.well-known/self-agent-id.json). */
export const DISCOVERY_PATH = '/.well-known/self-agent-id.json';
/** The MCP server (Streamable HTTP: POST messages, GET the server's event stream, DELETE ends a session). */
export const MCP_PATH = '/mcp';
export const AGENT_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;
/** The service's public signing keys (JWKS, RFC 7517): what its signed cards and credentials verify against. */
export const JWKS_PATH = '/.well-known/jwks.json';
/** The service's ERC-8004 registration file, and the same file signed (a compact JWS carrying it). */
export const REGISTRATION_FILE_PATH = '/.well-known/agent-registration.json';
export const SIGNED_REGISTRATION_FILE_PATH = '/.well-known/agent-registration.json.jws';

/**
 * The registry's A2A extension that carries its proof-of-human claims in a card (capabilities.extensions[].params),
 * identified by the service's own URL: the URI names the registry that makes the claims, and describes them there.
 */
export const PROOF_OF_HUMAN_EXTENSION_PATH = '/extensions/proof-of-human/v1';
export const proofOfHumanExtensionUri = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, '')}${PROOF_OF_HUMAN_EXTENSION_PATH}`;
/** A URI naming a proof-of-human extension of any registry (what an agent's owner may not declare itself). */
export const isProofOfHumanExtensionUri = (uri: string): boolean => /\/extensions\/proof-of-human\/v1\/*(?:[?#].*)?$/.test(uri);

/** Where each kind of session is opened and followed: POST base, GET base/status, base/qr, POST base/callback. */
export const SESSION_BASE_PATHS: Readonly<Record<SessionType, string>> = {
  register: '/api/agent/register',
  deregister: '/api/agent/deregister',
  identify: '/api/agent/identify',
  refresh: '/api/agent/refresh',
};

/**
 * The page a human opens on a laptop to scan a session's QR code and watch it finish: GET /register/{watch token}.
 * One path for every kind of session (the token names its kind), and never the session token.
 */
export const SCAN_PAGE_PATH = '/register';

/** The per-agent card of an agent on a chain. */
export const agentCardPath = (chainId: number, agentId: bigint | number): string => `/api/cards/${chainId}/${agentId}`;

/** Where a signed agent request gets a human-backed-agent credential (SD-JWT VC). */
export const CREDENTIAL_PATH = '/api/agent/credential';
/** Where the credentials' token status lists are served; {listId} is a decimal. */
export const STATUS_LIST_PATH = '/api/credentials/status/{listId}';
export const statusListPath = (listId: number): string => `/api/credentials/status/${listId}`;
