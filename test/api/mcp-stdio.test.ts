// The MCP server over stdio: the bridge as a child process (node dist/mcp/stdio-main.js --url <service>), driven by
// the SDK's own client over its stdio transport. It lists the service's tools as they are, answers a query as REST
// does, forwards a registration's progress (the deep link first) up to the agent id, and ends its session on the
// service when the host goes.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/mcp/tool-catalog.js';
import { asToolResult, type ListeningApp, listeningApp, textOf } from '../support/mcp.js';
import { eventually } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { type ApiAgent, registerAgent } from '../support/session-flows.js';

const BRIDGE = join(process.cwd(), 'dist/mcp/stdio-main.js');
/** The command line's launcher, as npx runs it. */
const CLI = join(process.cwd(), 'bin/agent-identity-registry.js');

describe('MCP over stdio, through the bridge to the service', () => {
  let net: TestNetworks;
  let service: ListeningApp;
  let client: Client;
  let agent: ApiAgent;

  beforeAll(async () => {
    net = await deployTestNetworks();
    service = await listeningApp(net.chains, { mcp: { waitMs: 60_000 } });
    agent = await registerAgent(service.app, net, 'linked');
    client = new Client({ name: 'stdio-host', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE, '--url', service.base], stderr: 'inherit' }));
  });

  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it("lists the service's tools, and answers a query as REST does", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(client.getServerVersion()?.name).toBe('agent-identity-registry');
    const result = asToolResult(await client.callTool({ name: 'lookup_agent', arguments: { chainId: '11142220', agentId: String(agent.agentId) } }));
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toEqual((await request(service.app).get(`/api/agent/info/11142220/${agent.agentId}`)).body);
  });

  it('forwards the progress of a registration, and its end', async () => {
    const reports: Progress[] = [];
    let sawLink: (deepLink: string) => void = () => undefined;
    const deepLink = new Promise<string>((resolve) => {
      sawLink = resolve;
    });
    const answered = client.callTool({ name: 'register_agent', arguments: { mode: 'wallet-free', network: 'testnet' } }, undefined, {
      timeout: 120_000,
      onprogress: (progress) => {
        reports.push(progress);
        const link = /Deep link for the identity app: (\S+)/.exec(progress.message ?? '')?.[1];
        if (link) sawLink(link);
      },
    });
    await approveDeepLink(service.app, net, await deepLink);
    const result = asToolResult(await answered);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: { stage: 'completed', agentId: expect.any(Number) } });
    expect(reports[0]).toMatchObject({ progress: 1, total: 3 });
    // each stage once, in order; the last (3, completed) is sent before the answer, but an SDK client that reads both
    // at once settles the answer first and drops the progress it no longer follows, so it may not be seen here
    const stages = reports.map((report) => report.progress);
    expect(stages).toEqual([...new Set(stages)].sort((a, b) => a - b));
    expect(stages.every((stage) => stage >= 1 && stage <= 3)).toBe(true);
  });

  it('the command line serves the same bridge: npx agent-identity-registry mcp --url <service>', async () => {
    const host = new Client({ name: 'cli-host', version: '1.0.0' });
    await host.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--url', service.base], stderr: 'inherit' }));
    try {
      const { tools } = await host.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      const result = asToolResult(await host.callTool({ name: 'verify_agent', arguments: { chainId: '11142220', agentId: String(agent.agentId) } }));
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toEqual((await request(service.app).get(`/api/agent/verify/11142220/${agent.agentId}`)).body);
    } finally {
      await host.close();
    }
  });

  it('a refused input is the tool error the service gave', async () => {
    const result = asToolResult(await client.callTool({ name: 'lookup_agent', arguments: { chainId: '1', agentId: '1' } }));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('unsupported chain "1"');
  });

  it('ends its session on the service when the host goes', async () => {
    expect(service.mcp.size).toBe(1);
    await client.close();
    await eventually(
      async () => service.mcp.size,
      (size) => size === 0,
      10_000,
    );
    expect(service.mcp.size).toBe(0);
  });
});
