// The service's own A2A agent card (not the per-agent cards of services/agent-card.ts): built from
// agent-card/skills.json, one skill per intent with examples, advertising the JSON-RPC endpoint at /api/a2a in
// A2A v1.0 and, through the SDK's compatibility layer, v0.3.
import { readFileSync } from 'node:fs';
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';

interface SkillFile {
  name: string;
  description: string;
  provider?: { organization: string; url?: string };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: { id: string; name: string; description: string; tags: string[]; examples?: string[] }[];
}

const SKILL_FILE = new URL('../../agent-card/skills.json', import.meta.url);

let skillFile: SkillFile | undefined;
const loadSkillFile = (): SkillFile => (skillFile ??= JSON.parse(readFileSync(SKILL_FILE, 'utf8')) as SkillFile);

/** The intents' skills, with their examples, as the card lists them (also the `help` answer). */
export function skills(): AgentSkill[] {
  return loadSkillFile().skills.map((s) => ({
    id: s.id,
    name: s.name,
    description: s.description,
    tags: s.tags,
    examples: s.examples ?? [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  }));
}

export interface ServiceCardOptions {
  /** The service's public base URL, without a trailing slash. */
  publicUrl: string;
  version: string;
}

export const A2A_PATH = '/api/a2a';

export function serviceAgentCard(options: ServiceCardOptions): AgentCard {
  const file = loadSkillFile();
  const base = options.publicUrl.replace(/\/+$/, '');
  const url = `${base}${A2A_PATH}`;
  return {
    name: file.name,
    description: file.description,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: { organization: file.provider?.organization ?? file.name, url: file.provider?.url ?? base },
    version: options.version,
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: true, pushNotifications: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: file.defaultInputModes,
    defaultOutputModes: file.defaultOutputModes,
    skills: skills(),
    signatures: [],
  };
}
