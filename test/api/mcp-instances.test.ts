// An MCP session across two instances sharing one real redis-server (each its own store connection, event bus and
// instance id, the same session secret), as two processes behind a load balancer hold it:
// - a session opened on instance A continues on instance B: B takes it over from the store, its client never
//   initializing again;
// - a registration that A runs keeps going after its client's stream to A breaks: the client resumes the stream on
//   B from the last event it saw (the shared event store), the identity app approves, and the answer A sends
//   reaches the client through B, with the agent id.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEventBus } from '../../src/store/redis-event-bus.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { asToolResult, type ListeningApp, listeningApp, mcpClient, textOf } from '../support/mcp.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../support/redis-server.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { type ApiAgent, registerAgent } from '../support/session-flows.js';

const PREFIX = 'mcp-instances-test:';

describe.skipIf(!hasRedisServer())('MCP sessions across two instances sharing one Redis', () => {
  let redis: RedisServer;
  let net: TestNetworks;
  const sessionSecret = randomBytes(32);
  const closers: (() => Promise<void>)[] = [];
  let a: ListeningApp;
  let b: ListeningApp;
  let agent: ApiAgent;

  const instance = async (instanceId: string): Promise<ListeningApp> => {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix: PREFIX });
    const events = new RedisEventBus({ url: redis.url, keyPrefix: PREFIX });
    // a publish before the connection is up fails (a watch would then wait for its poll)
    await events.ready();
    const service = await listeningApp(net.chains, { store, events, sessionSecret, mcp: { instanceId, waitMs: 60_000 } });
    closers.push(async () => {
      await service.close();
      await events.close();
      await store.close();
    });
    return service;
  };

  /** A client of B in the session `sessionId` opened elsewhere: it does not initialize again. */
  const joining = async (sessionId: string, protocolVersion: string): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.base), { sessionId });
    transport.setProtocolVersion(protocolVersion);
    const client = new SdkClient({ name: 'same-host-elsewhere', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  beforeAll(async () => {
    [redis, net] = await Promise.all([startRedisServer(), deployTestNetworks()]);
    a = await instance('instance-a');
    b = await instance('instance-b');
    agent = await registerAgent(a.app, net, 'linked');
  });

  afterAll(async () => {
    for (const close of closers) await close();
    await redis?.stop();
  });

  it('a session opened on A continues on B', async () => {
    const { client: onA, transport } = await mcpClient(a.base);
    const lookup = { name: 'lookup_agent', arguments: { chainId: '11142220', agentId: String(agent.agentId) } };
    const fromA = asToolResult(await onA.callTool(lookup));
    expect(fromA.isError, textOf(fromA)).toBeFalsy();
    expect(b.mcp.size).toBe(0);

    const onB = await joining(transport.sessionId!, transport.protocolVersion!);
    const fromB = asToolResult(await onB.callTool(lookup));
    expect(fromB.structuredContent).toEqual(fromA.structuredContent);
    expect((await onB.listTools()).tools.length).toBeGreaterThan(0);
    // B holds the session now, taken over from the store; A still does too
    expect(b.mcp.size).toBe(1);
    expect(a.mcp.size).toBeGreaterThanOrEqual(1);
    await onA.close();
    await onB.close();
  });

  it("a registration A runs reaches its client through B after the client's stream to A broke", async () => {
    const { client: onA, transport } = await mcpClient(a.base);
    let lastEventId: string | undefined;
    let sawLink: (deepLink: string) => void = () => undefined;
    const deepLink = new Promise<string>((resolve) => {
      sawLink = resolve;
    });
    const params = { name: 'register_agent', arguments: { mode: 'wallet-free', network: 'testnet' } };
    const onAAnswer = onA
      .callTool(params, undefined, {
        timeout: 120_000,
        onresumptiontoken: (token) => {
          lastEventId = token;
        },
        onprogress: (progress) => {
          const link = /Deep link for the identity app: (\S+)/.exec(progress.message ?? '')?.[1];
          if (link) sawLink(link);
        },
      })
      .catch((error: unknown) => error);
    const link = await deepLink;
    expect(lastEventId).toBeDefined();
    // the client's connection to A breaks; A goes on following the session
    await onA.close();
    expect(await onAAnswer).toBeInstanceOf(Error);

    const onB = await joining(transport.sessionId!, transport.protocolVersion!);
    const resumed = onB.callTool(params, undefined, { timeout: 120_000, resumptionToken: lastEventId });
    // the human approves (the identity app reports to B: the session is in the shared store)
    const approval = await approveDeepLink(b.app, net, link);
    expect(approval.callback?.body).toMatchObject({ received: true });
    const result = asToolResult(await resumed);
    expect(result.isError, textOf(result)).toBeFalsy();
    const { status } = result.structuredContent as { status: { stage: string; agentId: number } };
    expect(status.stage).toBe('completed');
    const info = await request(b.app).get(`/api/agent/info/11142220/${status.agentId}`);
    expect(info.status).toBe(200);
    await onB.close();
  });
});
