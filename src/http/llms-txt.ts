// /llms.txt and /llms-full.txt (the llmstxt.org format: a title, a summary quote, sections of notes and link lists)
// for agents and their developers. Generated from what the service is made of: the route table (service-catalogue),
// the OpenAPI document, the registration modes, the A2A skills, the signing schemes and the limits. Nothing in them
// is written by hand, so a changed route changes them. Links are concrete GET URLs only (each answers 200);
// templated and POST operations are shown as code.

import { SESSION_BASE_PATHS } from '../core/endpoints.js';
import { MODE_RULES, REGISTRATION_MODES } from '../core/registration-modes.js';
import type { OpenApiDocument, OpenApiOperation } from './openapi/document.js';
import type { ServiceEndpoints } from './service-catalogue.js';
import type { SigningScheme } from './signing-schemes.js';

/** One A2A skill (an intent) as the card lists it. */
export interface SkillSummary {
  id: string;
  name: string;
  description: string;
  examples?: readonly string[];
}

export interface LimitSummary {
  /** e.g. "200kb". */
  bodyLimit: string;
  sessionsPerMinute: number;
  agentMessagesPerMinute: number;
  sessionTtlMs: number;
}

export interface OnboardingFacts {
  title: string;
  summary: string;
  discoveryUrl: string;
  endpoints: ServiceEndpoints;
  skills: readonly SkillSummary[];
  signingSchemes: readonly SigningScheme[];
  limits: LimitSummary;
  /** The MCP endpoint, where discovery names one. */
  mcpEndpoint?: string;
}

const code = (lines: string[]): string => ['```', ...lines, '```'].join('\n');
const isTemplate = (url: string): boolean => url.includes('{');

function modes(): string {
  const rows = REGISTRATION_MODES.map((mode) => {
    const rules = MODE_RULES[mode];
    const needs = rules.needsHumanAddress ? ', needs humanAddress' : '';
    return `- \`${mode}\` (${rules.keyType} agent key${needs}): ${rules.label}. Choose it when: ${rules.choose}`;
  });
  return ['## Registration modes: which to choose', '', ...rows].join('\n');
}

function registration(base: string, limits: LimitSummary): string {
  const open = `${base}${SESSION_BASE_PATHS.register}`;
  return [
    '## Register an agent, step by step',
    `1. Open a session (here wallet-free on testnet; the network is mainnet when none is named). It lasts ${limits.sessionTtlMs / 60_000} minutes. The answer carries \`sessionToken\`, \`deepLink\` (also as \`qrData\` and a PNG), \`scanPageUrl\` and \`agentAddress\`.`,
    code([`curl -s -X POST ${open} -H 'content-type: application/json' -d '{"mode":"wallet-free","network":"testnet"}'`]),
    '2. The human opens `scanPageUrl` on a laptop and scans its QR code with the identity app (or opens `deepLink` on the phone); the app proves the passport and registers the agent on chain.',
    '3. Follow the session until `stage` is `completed` (then `agentId` is set) or `failed` (then `error` says why):',
    code([`curl -s '${open}/status?token=<sessionToken>'`]),
    '4. Take the agent key the service generated, once (modes with a generated key):',
    code([`curl -s -X POST ${open}/export -H 'authorization: Bearer <sessionToken>'`]),
    'A registry caps the agents of one human (a refusal names `TooManyAgentsForHuman`). On the embedded test chains the cap is `MAX_AGENTS_PER_HUMAN` (default 1), and the mock identity app approves as another human with `--document-number`.',
  ].join('\n\n');
}

function signing(schemes: readonly SigningScheme[]): string {
  const rows = schemes.map(
    (scheme) => `- \`${scheme.id}\` (${scheme.keyTypes.join(', ')} keys; headers ${scheme.headers.join(', ')}): ${scheme.howToSign}`,
  );
  return ['## Sign a request as your agent', '', 'Every signed endpoint, and the A2A verify intent, accepts each scheme:', '', ...rows].join('\n');
}

function a2a(endpoints: ServiceEndpoints, skills: readonly SkillSummary[]): string {
  if (!endpoints.a2a) return '';
  const message = {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { messageId: '<any unique id>', role: 'user', parts: [{ kind: 'text', text: 'verify agent 1 on testnet' }] } },
  };
  return [
    '## A2A',
    '',
    `The service is an A2A agent (JSON-RPC, A2A v1.0 and v0.3). Card: ${endpoints.a2a.card}; endpoint: \`POST ${endpoints.a2a.endpoint}\`. Every message needs a \`messageId\`. Its intents (a data part \`{"intent": ...}\` or plain English):`,
    '',
    ...skills.map((skill) => `- \`${skill.id}\`: ${skill.description}${skill.examples?.[0] ? ` Example: \`${skill.examples[0]}\`` : ''}`),
    '',
    code([`curl -s -X POST ${endpoints.a2a.endpoint} -H 'content-type: application/json' -d '${JSON.stringify(message)}'`]),
  ].join('\n');
}

function mcp(endpoint: string | undefined, skills: readonly SkillSummary[]): string {
  if (endpoint === undefined) return '';
  return [
    '## MCP',
    '',
    `MCP server (Streamable HTTP): \`${endpoint}\`. Its tools cover the A2A intents (${skills.map((s) => s.id).join(', ')}).`,
  ].join('\n');
}

function errors(limits: LimitSummary): string {
  return [
    '## Errors and limits',
    '',
    '- Every error is JSON `{"error": "<what to fix>"}` with a 4xx status for the caller\'s mistakes (400 bad input, 401/403 signatures and tokens, 404 unknown, 409 replay or conflict, 413 too large, 429 over a limit with Retry-After) and 502/503 naming the dependency that is down.',
    `- Request bodies: at most ${limits.bodyLimit}. Sessions: ${limits.sessionsPerMinute} openings per client and minute. A2A messages and chat: ${limits.agentMessagesPerMinute} per client and minute.`,
  ].join('\n');
}

function links(facts: OnboardingFacts): string {
  const { endpoints } = facts;
  const concrete = endpoints.groups
    .flatMap((group) => group.operations)
    .filter((op) => op.method === 'GET' && !isTemplate(op.url) && op.requires === undefined);
  const seen = new Set<string>();
  const rows = [
    `- [Discovery document](${facts.discoveryUrl}): every endpoint group, the networks, modes and signing schemes`,
    `- [OpenAPI document](${endpoints.openapi}): every operation with its schemas`,
    `- [API documentation](${endpoints.docs}): the same, interactive`,
    `- [llms-full.txt](${endpoints.llmsFullTxt}): this text with every operation in full`,
  ];
  for (const row of rows) seen.add(/\((.*?)\)/.exec(row)?.[1] ?? '');
  const more = concrete.filter((op) => !seen.has(op.url)).map((op) => `- [${op.summary}](${op.url})`);
  return ['## Docs', '', ...rows, '', '## Optional', '', ...more].join('\n');
}

function operationList(endpoints: ServiceEndpoints): string {
  return [
    '## Operations',
    '',
    ...endpoints.groups.flatMap((group, index) => [
      ...(index > 0 ? [''] : []),
      `### ${group.name}`,
      ...(group.description ? ['', group.description] : []),
      '',
      ...group.operations.map((op) => `- \`${op.method} ${op.url}\`: ${op.summary}${op.requires ? ` (needs: ${op.requires})` : ''}`),
    ]),
  ].join('\n');
}

/** /llms.txt. */
export function llmsTxt(facts: OnboardingFacts): string {
  const base = facts.endpoints.health.slice(0, -'/api/health'.length);
  const sections = [
    `# ${facts.title}`,
    `> ${facts.summary}`,
    [
      `Base URL: ${base}. Three ways in: REST (${facts.endpoints.openapi})`,
      facts.endpoints.a2a ? `, A2A (${facts.endpoints.a2a.endpoint})` : '',
      facts.mcpEndpoint ? `, MCP (${facts.mcpEndpoint})` : '',
      '. Networks: `mainnet` (Celo, chain id 42220) and `testnet` (Celo Sepolia, chain id 11142220); a request that names no network means mainnet.',
    ].join(''),
    modes(),
    registration(base, facts.limits),
    signing(facts.signingSchemes),
    a2a(facts.endpoints, facts.skills),
    mcp(facts.mcpEndpoint, facts.skills),
    errors(facts.limits),
    operationList(facts.endpoints),
    links(facts),
  ];
  return `${sections.filter((section) => section !== '').join('\n\n')}\n`;
}

function schemaText(schema: unknown): string {
  return JSON.stringify(schema, null, 2);
}

function operationDetail(path: string, method: string, op: OpenApiOperation, base: string): string {
  const parts = [`### ${method.toUpperCase()} ${base}${path}`, '', op.summary + (op.description ? `\n\n${op.description}` : '')];
  const params = op.parameters ?? [];
  if (params.length > 0) {
    parts.push(
      '',
      'Parameters:',
      '',
      ...params.map((p) => `- \`${p.name}\` (${p.in}${p.required ? ', required' : ''})${p.description ? `: ${p.description}` : ''}`),
    );
  }
  const body = op.requestBody?.content;
  if (body) for (const [type, { schema }] of Object.entries(body)) parts.push('', `Body (${type}):`, '', code([schemaText(schema)]));
  parts.push('', 'Answers:', '', ...Object.entries(op.responses).map(([status, answer]) => `- ${status}: ${answer.description}`));
  return parts.join('\n');
}

/** /llms-full.txt: llms.txt, then every operation of the OpenAPI document in full, then its schemas. */
export function llmsFullTxt(facts: OnboardingFacts, document: OpenApiDocument): string {
  const base = facts.endpoints.health.slice(0, -'/api/health'.length);
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => operationDetail(path, method, op as OpenApiOperation, base)),
  );
  const schemas = Object.entries(document.components.schemas).map(([name, schema]) => `### ${name}\n\n${code([schemaText(schema)])}`);
  return `${[llmsTxt(facts).trimEnd(), '## Every operation', ...operations, '## Schemas', ...schemas].join('\n\n')}\n`;
}
