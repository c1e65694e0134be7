// What the discovery document, the API index and llms.txt list of the service's endpoints, derived from the route
// table: a route added to the table appears in all three without anyone writing it down.
import { A2A_PATH, AGENT_CARD_PATHS } from '../core/endpoints.js';
import type { Route } from './route.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';
export const LLMS_TXT_PATH = '/llms.txt';
export const LLMS_FULL_TXT_PATH = '/llms-full.txt';
export const HEALTH_PATH = '/api/health';
/** GET here: the index of every operation, by group (the discovery document's apiBase). */
export const API_INDEX_PATH = '/api/agent';

/** A group of the OpenAPI document (its tag), in display order. */
export interface ApiTag {
  name: string;
  description: string;
}

export interface CatalogueOperation {
  method: 'GET' | 'POST';
  /** The absolute URL, or URL template ({chainId}, {agentId}... as the OpenAPI path names them). */
  url: string;
  summary: string;
  /** What the caller must send besides the parameters, where anything. */
  requires?: Credential;
}

export type Credential = 'session-token' | 'agent-signature' | 'proxy-token' | 'bearer-token';

const credentialOf = (route: Route): Credential | undefined => {
  if (route.sessionToken) return 'session-token';
  if (route.signedRequest === 'required') return 'agent-signature';
  if (route.proxyToken) return 'proxy-token';
  return route.responses[401] ? 'bearer-token' : undefined;
};

export interface CatalogueGroup extends ApiTag {
  operations: CatalogueOperation[];
}

export interface ServiceEndpoints {
  openapi: string;
  docs: string;
  llmsTxt: string;
  llmsFullTxt: string;
  health: string;
  /** The A2A agent's card and JSON-RPC endpoint, where the service runs it. */
  a2a?: { card: string; endpoint: string };
  /** Every documented operation of the route table, by group (REST, demo, account abstraction...). */
  groups: CatalogueGroup[];
}

/** The documented operations of `routes` by their first tag, groups in `tags`' order (then any other tag's). */
export function catalogueGroups(routes: readonly Route[], tags: readonly ApiTag[], base: string): CatalogueGroup[] {
  const groups = new Map<string, CatalogueGroup>(tags.map((tag) => [tag.name, { ...tag, operations: [] }]));
  for (const route of routes) {
    const tag = route.tags[0];
    if (route.undocumented || tag === undefined) continue;
    let group = groups.get(tag);
    if (group === undefined) {
      group = { name: tag, description: '', operations: [] };
      groups.set(tag, group);
    }
    const requires = credentialOf(route);
    group.operations.push({
      method: route.method === 'get' ? 'GET' : 'POST',
      url: `${base}${route.path}`,
      summary: route.summary,
      ...(requires ? { requires } : {}),
    });
  }
  return [...groups.values()].filter((group) => group.operations.length > 0);
}

/** Where everything is, for `base` (the public URL without a trailing slash). */
export function serviceEndpoints(routes: readonly Route[], tags: readonly ApiTag[], base: string): ServiceEndpoints {
  const a2a = routes.some((route) => route.path === A2A_PATH);
  return {
    openapi: `${base}${OPENAPI_PATH}`,
    docs: `${base}${DOCS_PATH}`,
    llmsTxt: `${base}${LLMS_TXT_PATH}`,
    llmsFullTxt: `${base}${LLMS_FULL_TXT_PATH}`,
    health: `${base}${HEALTH_PATH}`,
    ...(a2a ? { a2a: { card: `${base}${AGENT_CARD_PATHS[0]}`, endpoint: `${base}${A2A_PATH}` } } : {}),
    groups: catalogueGroups(routes, tags, base),
  };
}
