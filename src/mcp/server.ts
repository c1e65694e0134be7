// One MCP server (the SDK's McpServer) for one MCP session: the tools over the services, and the resources (the
// discovery document, the OpenAPI document, the interface summary), each read when asked.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Logger } from 'pino';
import { REGISTRATION_FILE_PATH } from '../core/endpoints.js';
import type { Services } from '../services/index.js';
import { registerQueryTools } from './query-tools.js';
import { registerSessionTools } from './session-tools.js';

export const SERVER_NAME = 'agent-identity-registry';
export const INTERFACE_SUMMARY_URI = 'agent-identity-registry://interface-summary';

/** The documents the resources serve, read when a client asks for them. */
export interface McpDocuments {
  /** The OpenAPI document of the REST interface, as GET /openapi.json serves it. */
  openApi(): unknown;
  /** The discovery document, as GET /.well-known/self-agent-id.json serves it. */
  discovery(): unknown;
  /** The interface summary (interface-summary.ts). */
  summary(): string;
}

export interface McpServerOptions {
  services: Services;
  logger: Logger;
  publicUrl: string;
  version: string;
  documents: McpDocuments;
  /** How long a session tool follows its session before answering with where it stands. */
  waitMs: number;
  /** Aborted when the instance stops: tools that follow a session answer at once. */
  stopping: AbortSignal;
}

const INSTRUCTIONS =
  'Registers AI agents bound to a real human through an on-chain proof of human, and answers who stands behind an agent. ' +
  'Queries (lookup_agent, verify_agent, agents_of_human, agents_of_nullifier, proof_freshness, verify_signed_request) answer at once. ' +
  'register_agent, deregister_agent, refresh_proof and identify_human open a session the human completes in an identity app: show ' +
  'them the scan page URL (or the QR image, or the deep link). Send a progressToken to follow the session (each stage is a progress ' +
  'notification) up to a wait limit; registration_status continues with the latest session token. Network default: mainnet (real ' +
  'passports); testnet takes mock documents. Resources: the discovery document, the OpenAPI document, the interface summary.';

const json = (value: unknown): string => JSON.stringify(value);

export function createMcpServer(options: McpServerOptions): McpServer {
  const { services, logger, publicUrl, documents } = options;
  const server = new McpServer({ name: SERVER_NAME, title: 'Agent Identity Registry', version: options.version }, { instructions: INSTRUCTIONS });
  registerQueryTools(server, services, logger);
  registerSessionTools(server, { services, logger, waitMs: options.waitMs, stopping: options.stopping });
  const resource = (name: string, uri: string, title: string, description: string, mimeType: string, read: () => string): void => {
    server.registerResource(name, uri, { title, description, mimeType }, (asked) => ({ contents: [{ uri: asked.href, mimeType, text: read() }] }));
  };
  resource(
    'discovery',
    `${publicUrl}/.well-known/self-agent-id.json`,
    'Discovery document',
    `Where everything is: the API base, networks, modes, signing keys, the credential, MCP; the ERC-8004 registration file is at ${REGISTRATION_FILE_PATH}`,
    'application/json',
    () => json(documents.discovery()),
  );
  resource(
    'openapi',
    `${publicUrl}/openapi.json`,
    'OpenAPI document',
    'The REST interface (OpenAPI 3.1), generated from the route table',
    'application/json',
    () => json(documents.openApi()),
  );
  resource(
    'interface-summary',
    INTERFACE_SUMMARY_URI,
    'Interface summary',
    'What the service offers, in short: the ways in (REST, A2A, MCP), the tools, the A2A intents, the REST endpoints',
    'text/markdown',
    () => documents.summary(),
  );
  return server;
}
