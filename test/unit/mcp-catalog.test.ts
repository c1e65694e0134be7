// The three ways an agent asks the service the same things agree: the A2A intents, the skills of the service's A2A
// card, and the MCP tools. Each intent is a skill of the card (and nothing else is), and each intent but help (which
// tools/list is) has an MCP tool that answers it; each tool names a real intent and a REST endpoint under its kind.
import { describe, expect, it } from 'vitest';
import { serviceAgentCard, skills } from '../../src/a2a/agent-card.js';
import { INTENTS } from '../../src/a2a/intents.js';
import { SESSION_BASE_PATHS } from '../../src/core/endpoints.js';
import { interfaceSummary } from '../../src/mcp/interface-summary.js';
import { TOOL_NAMES, TOOLS } from '../../src/mcp/tool-catalog.js';

describe('A2A intents, A2A card skills and MCP tools', () => {
  it("the card's skills are the intents, one each", () => {
    const card = serviceAgentCard({ publicUrl: 'https://registry.example', version: '1' });
    expect(card.skills.map((skill) => skill.id)).toEqual([...INTENTS]);
    expect(skills().map((skill) => skill.id)).toEqual([...INTENTS]);
  });

  it('every intent but help has a tool that answers it, and every tool names a real intent', () => {
    const intentsOfTools = new Set(TOOL_NAMES.flatMap((name) => (TOOLS[name].intent ? [TOOLS[name].intent] : [])));
    for (const intent of intentsOfTools) expect(INTENTS).toContain(intent);
    expect([...intentsOfTools].sort()).toEqual(INTENTS.filter((intent) => intent !== 'help').sort());
  });

  it('the session tools open the sessions of their REST endpoints', () => {
    expect(TOOLS.register_agent.rest).toEqual({ method: 'post', path: SESSION_BASE_PATHS.register });
    expect(TOOLS.deregister_agent.rest).toEqual({ method: 'post', path: SESSION_BASE_PATHS.deregister });
    expect(TOOLS.refresh_proof.rest).toEqual({ method: 'post', path: SESSION_BASE_PATHS.refresh });
    expect(TOOLS.identify_human.rest).toEqual({ method: 'post', path: SESSION_BASE_PATHS.identify });
  });

  it('the interface summary lists what it is given: tools, intents, operations by tag', () => {
    const summary = interfaceSummary({
      publicUrl: 'https://registry.example',
      api: {
        info: { title: 'Registry', version: '2.0.0', description: 'What it is.' },
        tags: [{ name: 'Queries', description: 'Reads' }],
        paths: { '/api/x/{id}': { get: { summary: 'An x', tags: ['Queries'] } }, '/api/y': { post: { summary: 'A y' } } },
      },
      discovery: { networks: ['mainnet', 'testnet'], registrationModes: ['linked'], sessionTtlMs: 1_800_000 },
      a2aSkills: skills(),
    });
    expect(summary).toMatch(/^# Registry 2\.0\.0\n\nWhat it is\.\n/);
    expect(summary).toContain('Sessions last 30 minutes.');
    expect(summary).toContain('- MCP: Streamable HTTP at https://registry.example/mcp');
    expect(summary).toContain('### Queries: Reads\n- GET /api/x/{id}: An x');
    expect(summary).toContain('### Other\n- POST /api/y: A y');
    expect(summary).toContain('- lookup_agent (GET /api/agent/info/{chainId}/{agentId}; A2A intent lookup): ');
    for (const intent of INTENTS) expect(summary).toContain(`\n- ${intent}: `);
  });
});
