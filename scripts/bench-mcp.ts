// npm run bench:mcp: what a question costs over MCP next to REST, and what taking a session over costs an instance.
// Two instances of the real app (sources, in this process) over one local chain with one registered agent, sharing
// one store and one events port as instances sharing Redis do (here the same sqlite file's store object).
// 1. CALLS sequential reads of the agent: REST GET /api/agent/info (through express; no response cache in front, so
//    both ways reach the query service, warm) against MCP tools/call lookup_agent with the SDK's client in one
//    session; median and p95 in ms.
// 2. SESSIONS sessions opened on instance A (initialize), each then asked once on instance B (the first request takes
//    the session over from the store: the replayed initialize, then the call) and once more (held): median and p95.
// Environment: CALLS (default 500), SESSIONS (default 25).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { skills } from '../src/a2a/agent-card.js';
import { createApp } from '../src/http/app.js';
import { createLogger, logDestination } from '../src/logger.js';
import { createMcpEndpoint, type McpEndpoint } from '../src/mcp/endpoint.js';
import { Metrics } from '../src/metrics.js';
import { createServices } from '../src/services/index.js';
import { InProcessEventBus } from '../src/store/event-bus.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { registerLinkedAgent, startLocalSystem } from './local-system.js';
import { listen } from './query-apps.js';

const CALLS = Number(process.env['CALLS'] ?? 500);
// under the per-client limit of MCP sessions opened a minute (30): the bench is one client
const SESSIONS = Number(process.env['SESSIONS'] ?? 25);

const system = await startLocalSystem(11142220);
const { agentId } = await registerLinkedAgent(system);
const dataDir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
const store = new SqliteStore(join(dataDir, 'store.sqlite'));
const events = new InProcessEventBus();
const logger = createLogger('info', logDestination('/dev/null'));
const sessionSecret = randomBytes(32);
const endpoints: McpEndpoint[] = [];

async function instance(name: string) {
  const metrics = new Metrics();
  const chains = system.gateway();
  const placeholder = 'http://127.0.0.1';
  const services = createServices({
    chains,
    store,
    events,
    sessionSecret,
    publicUrl: placeholder,
    deepLinkScheme: 'selfapp',
    appName: 'bench',
    metrics,
  });
  await services.queries.start();
  const mcp = createMcpEndpoint({ services, store, events, instanceId: name, publicUrl: placeholder, version: 'bench', logger, a2aSkills: skills() });
  endpoints.push(mcp);
  const app = createApp({ chains, services, logger, version: 'bench', metrics, publicUrl: placeholder, mcp: mcp.mount });
  return { ...(await listen(app)), services };
}

const stats = (times: number[]): string => {
  const sorted = [...times].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms (${times.length})`;
};
const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const client = async (
  base: string,
  sessionId?: string,
  protocolVersion?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), sessionId ? { sessionId } : {});
  if (protocolVersion) transport.setProtocolVersion(protocolVersion);
  const connected = new Client({ name: 'bench', version: '1' });
  await connected.connect(transport);
  return { client: connected, transport };
};

const a = await instance('a');
const b = await instance('b');
const lookup = { name: 'lookup_agent', arguments: { chainId: '11142220', agentId: String(agentId) } };
try {
  const rest = `${a.base}/api/agent/info/11142220/${agentId}`;
  const { client: onA } = await client(a.base);
  for (let i = 0; i < 20; i++) await Promise.all([fetch(rest).then((r) => r.json()), onA.callTool(lookup)]);
  const restTimes: number[] = [];
  const mcpTimes: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    restTimes.push(await timed(async () => (await fetch(rest)).json()));
    mcpTimes.push(await timed(() => onA.callTool(lookup)));
  }
  console.log(`agent info over REST:                ${stats(restTimes)}`);
  console.log(`lookup_agent over MCP (one session):  ${stats(mcpTimes)}`);
  await onA.close();

  const initializeTimes: number[] = [];
  const takeoverTimes: number[] = [];
  const heldTimes: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    let opened: Awaited<ReturnType<typeof client>> | undefined;
    initializeTimes.push(
      await timed(async () => {
        opened = await client(a.base);
      }),
    );
    const { transport } = opened!;
    const { client: onB } = await client(b.base, transport.sessionId, transport.protocolVersion);
    takeoverTimes.push(await timed(() => onB.callTool(lookup)));
    heldTimes.push(await timed(() => onB.callTool(lookup)));
    await transport.terminateSession();
    await opened!.client.close();
    await onB.close();
  }
  console.log(`a session opened (initialize):        ${stats(initializeTimes)}`);
  console.log(`first call on another instance:       ${stats(takeoverTimes)}   (takes the session over from the store)`);
  console.log(`next call there:                      ${stats(heldTimes)}`);
} finally {
  await Promise.all(endpoints.map((endpoint) => endpoint.close()));
  for (const server of [a.server, b.server]) server.closeAllConnections();
  await Promise.all([a, b].map(({ server }) => new Promise((resolve) => server.close(resolve))));
  await Promise.all([a, b].map(({ services }) => services.queries.stop()));
  await system.chain.stop();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
