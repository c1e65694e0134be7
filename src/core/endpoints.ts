// The public paths that services and the A2A agent put into links (callback and scan URLs, the A2A endpoint of
// cards, the card redirect). The HTTP route table serves exactly these paths, so a link never points nowhere.
import type { SessionType } from './session-types.js';

export const A2A_PATH = '/api/a2a';
export const AGENT_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;
/** The service's public signing keys (JWKS, RFC 7517): what its signed cards and credentials verify against. */
export const JWKS_PATH = '/.well-known/jwks.json';

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
