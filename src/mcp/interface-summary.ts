// The interface summary: a short text of what the service offers, generated from what it serves (the OpenAPI
// document the route table produces, the MCP tool catalog, the A2A agent's skills, the discovery document), so it
// changes with them and is never a hand-kept copy of the specification.
import { A2A_PATH, AGENT_CARD_PATHS, MCP_PATH } from '../core/endpoints.js';
import { TOOL_NAMES, TOOLS } from './tool-catalog.js';

/** What the summary reads of the OpenAPI document. */
export interface ApiDescription {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<string, { summary?: string; tags?: string[] }>>>;
}

/** What the summary reads of the discovery document. */
export interface DiscoveryFacts {
  networks: readonly string[];
  registrationModes: readonly string[];
  sessionTtlMs: number;
}

/** An A2A skill of the service's agent card (one per intent). */
export interface A2aSkill {
  id: string;
  description: string;
}

export interface SummarySources {
  publicUrl: string;
  api: ApiDescription;
  discovery: DiscoveryFacts;
  a2aSkills: readonly A2aSkill[];
}

const firstSentence = (text: string): string => {
  const end = text.search(/[.:](\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
};

export function interfaceSummary({ publicUrl, api, discovery, a2aSkills }: SummarySources): string {
  const lines = [
    `# ${api.info.title} ${api.info.version}`,
    '',
    ...(api.info.description ? [api.info.description, ''] : []),
    `Networks: ${discovery.networks.join(', ')}. Registration modes: ${discovery.registrationModes.join(', ')}. ` +
      `Sessions last ${Math.round(discovery.sessionTtlMs / 60_000)} minutes.`,
    '',
    '## Ways in',
    `- REST: ${publicUrl}/api (OpenAPI ${publicUrl}/openapi.json, docs ${publicUrl}/docs)`,
    `- A2A: JSON-RPC at ${publicUrl}${A2A_PATH}, agent card ${publicUrl}${AGENT_CARD_PATHS[0]}`,
    `- MCP: Streamable HTTP at ${publicUrl}${MCP_PATH}`,
    `- Discovery: ${publicUrl}/.well-known/self-agent-id.json`,
    '',
    '## MCP tools',
    ...TOOL_NAMES.map((name) => {
      const { rest, intent, description } = TOOLS[name];
      const also = [`${rest.method.toUpperCase()} ${rest.path}`, ...(intent ? [`A2A intent ${intent}`] : [])].join('; ');
      return `- ${name} (${also}): ${firstSentence(description)}`;
    }),
    '',
    '## A2A intents',
    ...a2aSkills.map((skill) => `- ${skill.id}: ${firstSentence(skill.description)}`),
  ];
  const described = new Map((api.tags ?? []).map((tag) => [tag.name, tag.description]));
  const byTag = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(api.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), `- ${method.toUpperCase()} ${path}${operation.summary ? `: ${operation.summary}` : ''}`]);
    }
  }
  lines.push('', '## REST endpoints');
  const order = [...described.keys(), ...[...byTag.keys()].filter((tag) => !described.has(tag))];
  for (const tag of order) {
    const operations = byTag.get(tag);
    if (!operations) continue;
    const about = described.get(tag);
    lines.push('', `### ${tag}${about ? `: ${about}` : ''}`, ...operations);
  }
  return `${lines.join('\n')}\n`;
}
