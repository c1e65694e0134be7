// The MCP server through the SDK's own client over Streamable HTTP, against a listening service on real chains:
// - the tools are the catalog's, and each one's input and output JSON Schemas are those of its REST route (taken
//   from the route table, converted the way the SDK converts the tool's);
// - the queries answer about real agents exactly what REST answers;
// - a full registration on the local testnet: register_agent reports progress (the first report carries the deep
//   link), the identity app approves, and the tool ends with the agent id;
// - a refused input is a tool error whose message says what to fix, never a protocol error;
// - the resources: the discovery document, the OpenAPI document, the interface summary.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { signRequest } from '../../src/client/signing.js';
import { SESSION_BASE_PATHS } from '../../src/core/endpoints.js';
import { routeTable } from '../../src/http/app.js';
import type { Route } from '../../src/http/route.js';
import { createLogger } from '../../src/logger.js';
import { INTERFACE_SUMMARY_URI } from '../../src/mcp/server.js';
import { SESSION_TOOLS, TOOL_NAMES, TOOLS, type ToolName } from '../../src/mcp/tool-catalog.js';
import { Metrics } from '../../src/metrics.js';
import { asToolResult, dereferenced, type ListeningApp, listeningApp, mcpClient, membersOf, textOf } from '../support/mcp.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { type ApiAgent, registerAgent } from '../support/session-flows.js';
import { registeredSigner } from '../support/signers.js';

const TESTNET = '11142220';

describe('MCP over Streamable HTTP', () => {
  let net: TestNetworks;
  let service: ListeningApp;
  let client: Client;
  let routes: Route[];
  let agent: ApiAgent;

  beforeAll(async () => {
    net = await deployTestNetworks();
    service = await listeningApp(net.chains, { mcp: { waitMs: 60_000 } });
    await service.services.queries.start();
    ({ client } = await mcpClient(service.base));
    routes = routeTable({ chains: net.chains, services: service.services, logger: createLogger('silent'), version: '0' }, new Metrics());
    agent = await registerAgent(service.app, net, 'linked');
  });

  afterAll(async () => {
    await client?.close();
    await service?.services.queries.stop();
    await service?.close();
  });

  const routeOf = (method: Route['method'], path: string): Route => {
    const route = routes.find((r) => r.method === method && r.path === path);
    if (!route) throw new Error(`no route ${method} ${path}`);
    return route;
  };
  /** A REST schema as the SDK converts a tool's: draft 7, then its references resolved. */
  const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output') => dereferenced(z.toJSONSchema(schema, { target: 'draft-7', io }));
  const call = async (name: ToolName, args: Record<string, unknown>) => asToolResult(await client.callTool({ name, arguments: args }));

  describe('tools and their schemas', () => {
    it('lists the catalog: every tool with its title, description and annotations', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      for (const tool of tools) {
        const info = TOOLS[tool.name as ToolName];
        expect(tool.title).toBe(info.title);
        expect(tool.description).toBe(info.description);
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        expect(tool.annotations?.title).toBe(info.title);
      }
    });

    it("takes and answers exactly its REST route's schemas", async () => {
      const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name as ToolName, tool]));
      const input = (name: ToolName) => membersOf(dereferenced(tools.get(name)!.inputSchema));
      const output = (name: ToolName) => dereferenced(tools.get(name)!.outputSchema) as { properties: Record<string, unknown> };
      const schemaOf = (route: Route, part: 'params' | 'body' | 'query'): z.ZodType => route[part] as z.ZodType;
      const answerOf = (route: Route): z.ZodType => route.responses[200]!.schema!;

      for (const name of ['lookup_agent', 'verify_agent', 'agents_of_human', 'agents_of_nullifier', 'proof_freshness'] as const) {
        const route = routeOf(TOOLS[name].rest.method, TOOLS[name].rest.path);
        expect(input(name), name).toEqual(membersOf(jsonSchemaOf(schemaOf(route, 'params'), 'input')));
        expect(membersOf(output(name)), name).toEqual(membersOf(jsonSchemaOf(answerOf(route), 'output')));
      }

      const demoVerify = routeOf('post', '/api/demo/verify');
      const network = (jsonSchemaOf(schemaOf(demoVerify, 'query'), 'input') as { properties: { network: unknown } }).properties.network;
      expect((input('verify_signed_request').properties as { network: unknown }).network).toEqual(network);
      expect(membersOf(output('verify_signed_request'))).toEqual(membersOf(jsonSchemaOf(answerOf(demoVerify), 'output')));

      const kinds = { register_agent: 'register', deregister_agent: 'deregister', refresh_proof: 'refresh', identify_human: 'identify' } as const;
      // the union lists each kind's status in the order of the session tools
      const statusRoutes = SESSION_TOOLS.map((name) => answerOf(routeOf('get', `${SESSION_BASE_PATHS[kinds[name]]}/status`)));
      for (const name of SESSION_TOOLS) {
        const base = SESSION_BASE_PATHS[kinds[name]];
        const opening = routeOf('post', base);
        expect(input(name), name).toEqual(membersOf(jsonSchemaOf(schemaOf(opening, 'body'), 'input')));
        const { session, status } = output(name).properties;
        expect(membersOf(session), name).toEqual(membersOf(jsonSchemaOf(answerOf(opening), 'output')));
        expect(membersOf(status), name).toEqual(membersOf(jsonSchemaOf(answerOf(routeOf('get', `${base}/status`)), 'output')));
      }
      const statuses = (output('registration_status').properties['status'] as { anyOf: unknown[] }).anyOf;
      expect(statuses.map(membersOf)).toEqual(statusRoutes.map((schema) => membersOf(jsonSchemaOf(schema, 'output'))));
    });
  });

  describe('queries answer what REST answers', () => {
    const rest = async (path: string) => {
      const res = await request(service.app).get(path);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      return res.body as Record<string, unknown>;
    };

    it('lookup_agent, verify_agent, agents_of_human, agents_of_nullifier, proof_freshness', async () => {
      const id = String(agent.agentId);
      const info = await call('lookup_agent', { chainId: TESTNET, agentId: id });
      expect(info.isError).toBeFalsy();
      expect(info.structuredContent).toEqual(await rest(`/api/agent/info/${TESTNET}/${id}`));
      expect(textOf(info)).toContain(`Agent ${id} on testnet: verified`);

      const verified = await call('verify_agent', { chainId: TESTNET, agentId: id });
      const verification = await rest(`/api/agent/verify/${TESTNET}/${id}`);
      expect(verified.structuredContent).toEqual(verification);
      expect(verification['isVerified']).toBe(true);

      const owned = await call('agents_of_human', { chainId: TESTNET, address: agent.owner });
      expect(owned.structuredContent).toEqual(await rest(`/api/agent/agents/${TESTNET}/${agent.owner}`));
      expect((owned.structuredContent as { agents: number[] }).agents).toContain(agent.agentId);

      const nullifier = String(verification['humanNullifier']);
      const same = await call('agents_of_nullifier', { chainId: TESTNET, nullifier });
      expect(same.structuredContent).toEqual(await rest(`/api/agent/agents-by-nullifier/${TESTNET}/${nullifier}`));

      const fresh = await call('proof_freshness', { chainId: TESTNET, agentId: id });
      const { secondsRemaining: _now, ...freshness } = await rest(`/api/agent/freshness/${TESTNET}/${id}`);
      expect(fresh.structuredContent).toMatchObject({ ...freshness, isProofFresh: true, hasProof: true });
    });

    it('verify_signed_request: the agent behind a request someone received, once', async () => {
      const { signer, key } = await registeredSigner(service.app, net, { mode: 'wallet-free' });
      const body = JSON.stringify({ order: 1 });
      const headers = await signRequest(signer, { method: 'POST', url: '/orders?id=7', body });
      const signedRequest = { method: 'POST', url: '/orders?id=7', headers, body };
      const verified = await call('verify_signed_request', { network: 'testnet', signedRequest });
      expect(verified.isError, textOf(verified)).toBeFalsy();
      expect(verified.structuredContent).toMatchObject({
        valid: true,
        network: 'testnet',
        agentId: String(key.agentId),
        agentAddress: key.agentAddress,
      });
      const replayed = await call('verify_signed_request', { network: 'testnet', signedRequest });
      expect(replayed.isError).toBe(true);
      expect(textOf(replayed)).toMatch(/^Replay detected/);
    });
  });

  describe('a registration on the local testnet', () => {
    it('register_agent: progress as the human acts, the deep link first, and the agent id at the end', async () => {
      const reports: Progress[] = [];
      let sawLink: (deepLink: string) => void = () => undefined;
      const deepLink = new Promise<string>((resolve) => {
        sawLink = resolve;
      });
      const answered = client.callTool({ name: 'register_agent', arguments: { mode: 'wallet-free', network: 'testnet' } }, undefined, {
        timeout: 120_000,
        resetTimeoutOnProgress: true,
        onprogress: (progress) => {
          reports.push(progress);
          const link = /Deep link for the identity app: (\S+)/.exec(progress.message ?? '')?.[1];
          if (link) sawLink(link);
        },
      });
      const approval = await approveDeepLink(service.app, net, await deepLink);
      expect(approval.callback?.body).toMatchObject({ received: true });
      const result = asToolResult(await answered);
      expect(result.isError, textOf(result)).toBeFalsy();
      const { session, status } = result.structuredContent as { session: Record<string, unknown>; status: Record<string, unknown> };
      expect(status).toMatchObject({ stage: 'completed', mode: 'wallet-free', network: 'testnet', agentAddress: session['agentAddress'] });
      expect(status['agentId']).toEqual(expect.any(Number));
      expect(textOf(result)).toContain(`Registration completed: agent ${status['agentId']} on testnet`);
      // the QR code as an image, the scan page and the deep link in words
      expect(result.content).toContainEqual({ type: 'image', data: session['qrImageBase64'], mimeType: 'image/png' });
      expect(textOf(result)).toContain(String(session['scanPageUrl']));
      // progress: opened (with the links and the token), then each stage up to the end, counting up
      expect(reports[0]).toMatchObject({ progress: 1, total: 3 });
      expect(reports[0]!.message).toContain(`Scan page (QR code, live status): ${session['scanPageUrl']}`);
      expect(reports.at(-1)).toMatchObject({ progress: 3, total: 3 });
      expect(reports.map((r) => r.progress)).toEqual([...reports.map((r) => r.progress)].sort());
      // the agent is on chain, as REST says
      const info = await request(service.app).get(`/api/agent/info/${TESTNET}/${status['agentId']}`);
      expect(info.body).toMatchObject({ agentAddress: session['agentAddress'], isVerified: true });
    });

    it('without a progressToken the session is answered at once, and registration_status follows it', async () => {
      const opened = await call('register_agent', { mode: 'wallet-free', network: 'testnet' });
      expect(opened.isError, textOf(opened)).toBeFalsy();
      const { session, status } = opened.structuredContent as { session: { sessionToken: string; deepLink: string }; status: { stage: string } };
      expect(status.stage).toBe('qr-ready');
      expect(textOf(opened)).toContain('Follow it with registration_status and sessionToken');
      const read = await call('registration_status', { sessionToken: session.sessionToken });
      expect(read.structuredContent).toMatchObject({ kind: 'register', status: { stage: 'qr-ready', mode: 'wallet-free' } });
      // following with progress: the human approves meanwhile, and the status ends completed
      const followed = client.callTool({ name: 'registration_status', arguments: { sessionToken: session.sessionToken } }, undefined, {
        timeout: 120_000,
        onprogress: () => undefined,
      });
      await approveDeepLink(service.app, net, session.deepLink);
      const done = asToolResult(await followed);
      expect(done.structuredContent).toMatchObject({ kind: 'register', status: { stage: 'completed', agentId: expect.any(Number) } });
    });
  });

  describe('refused input: a tool error that says what to fix', () => {
    it('an argument its schema refuses names the field and the rule', async () => {
      const result = await call('lookup_agent', { chainId: '1', agentId: '0x5' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('unsupported chain "1": use 42220 (mainnet) or 11142220 (testnet) at chainId');
      expect(textOf(result)).toContain('must be a positive decimal integer no larger than 9007199254740991');
    });

    it("what the service refuses says so in the service's words", async () => {
      const linked = await call('register_agent', { mode: 'linked', network: 'testnet' });
      expect(linked.isError).toBe(true);
      expect(textOf(linked)).toMatch(/^humanAddress is required for mode linked/);
      const missing = await call('lookup_agent', { chainId: TESTNET, agentId: '999999' });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toBe(`Agent 999999 not found on chain ${TESTNET}`);
      const token = await call('registration_status', { sessionToken: 'not-a-token' });
      expect(token.isError).toBe(true);
    });

    it('an unknown tool is a tool error too', async () => {
      const result = await call('burn_everything' as ToolName, {});
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('Tool burn_everything not found');
    });
  });

  it('its exchanges are counted like any endpoint, under the route /mcp', async () => {
    const text = (await request(service.app).get('/metrics')).text;
    expect(text).toMatch(/^http_requests_total\{[^}]*route="\/mcp"[^}]*method="POST"[^}]*status="200"[^}]*\} [1-9]\d*$/m);
  });

  describe('resources', () => {
    it('the discovery document, the OpenAPI document and the interface summary', async () => {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.name).sort()).toEqual(['discovery', 'interface-summary', 'openapi']);
      const read = async (uri: string) => {
        const [content] = (await client.readResource({ uri })).contents;
        return (content as { text: string }).text;
      };
      const discovery = JSON.parse(await read(`${service.base}/.well-known/self-agent-id.json`));
      expect(discovery).toEqual((await request(service.app).get('/.well-known/self-agent-id.json')).body);
      expect(discovery.mcp).toMatchObject({ endpoint: `${service.base}/mcp`, transport: 'streamable-http' });
      const openApi = JSON.parse(await read(`${service.base}/openapi.json`));
      expect(openApi).toEqual((await request(service.app).get('/openapi.json')).body);
      const summary = await read(INTERFACE_SUMMARY_URI);
      // generated from what is served: every tool, every documented operation
      for (const name of TOOL_NAMES) expect(summary).toContain(`- ${name} (`);
      for (const [path, operations] of Object.entries(openApi.paths as Record<string, object>)) {
        for (const method of Object.keys(operations)) expect(summary).toContain(`- ${method.toUpperCase()} ${path}`);
      }
    });
  });
});

describe('MCP limits, as on REST', () => {
  let net: TestNetworks;
  let service: ListeningApp;

  beforeAll(async () => {
    net = await deployTestNetworks();
    service = await listeningApp(net.chains);
  });

  afterAll(async () => {
    await service?.close();
  });

  it('sessions opened through a tool count against the per-client session-creation limit', async () => {
    const { client } = await mcpClient(service.base);
    const open = async () => asToolResult(await client.callTool({ name: 'identify_human', arguments: { network: 'testnet' } }));
    for (let i = 0; i < 10; i++) expect((await open()).isError, `session ${i + 1}`).toBeFalsy();
    const refused = await open();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Too many session creations.*\(try again in \d+ s\)$/s);
    // REST counts the same budget
    expect((await request(service.app).post('/api/agent/identify').send({ network: 'testnet' })).status).toBe(429);
    await client.close();
  });

  it('a body over the service limit is refused before it is read', async () => {
    const res = await fetch(`${service.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { padding: 'x'.repeat(210 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/too large/i);
  });

  it('a request of an unknown session is 404, as the transport specifies', async () => {
    const res = await fetch(`${service.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': 'nobody' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 }, id: null });
  });

  it('DELETE ends the session', async () => {
    const { client, transport } = await mcpClient(service.base);
    const id = transport.sessionId!;
    await transport.terminateSession();
    const res = await fetch(`${service.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': id },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    await client.close();
  });
});
