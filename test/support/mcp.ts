// The MCP side of the tests: a test app listening for real (the SDK's client speaks HTTP), a connected SDK client,
// and the JSON Schemas of tools and routes made comparable.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChainGateway } from '../../src/chain/gateway.js';
import { type TestApp, type TestAppOptions, testApp } from './app.js';

export interface ListeningApp extends TestApp {
  base: string;
  close(): Promise<void>;
}

/** The test app on a loopback port, its public URL the one it listens at. */
export async function listeningApp(chains: ChainGateway, options: TestAppOptions = {}): Promise<ListeningApp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = testApp(chains, { ...options, publicUrl: base });
  server.on('request', t.app);
  return {
    ...t,
    base,
    close: async () => {
      await t.mcp.close();
      t.services.watcher.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The SDK's client, connected to the service's MCP endpoint at `base` (a session of its own). */
export async function mcpClient(
  base: string,
  options: { sessionId?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'registry-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), options.sessionId ? { sessionId: options.sessionId } : {});
  await client.connect(transport);
  return { client, transport };
}

/** A tool's answer, whatever the SDK's result union says. */
export const asToolResult = (result: unknown): CallToolResult => result as CallToolResult;

/** The text of a tool answer's text parts. */
export const textOf = (result: CallToolResult): string =>
  result.content
    .filter((part) => part.type === 'text')
    .map((part) => (part as { text: string }).text)
    .join('\n');

type Json = Record<string, unknown>;

/** A draft-7 JSON Schema with its local references (#/definitions/X) replaced by what they name. */
export function dereferenced(schema: unknown, definitions: Json = (schema as Json)['definitions'] as Json): unknown {
  if (Array.isArray(schema)) return schema.map((item) => dereferenced(item, definitions));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as Json)['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/definitions/')) return dereferenced(definitions[ref.slice('#/definitions/'.length)], definitions);
  return Object.fromEntries(
    Object.entries(schema as Json)
      .filter(([key]) => key !== 'definitions' && key !== '$schema')
      .map(([key, value]) => [key, dereferenced(value, definitions)]),
  );
}

/** What an object schema says of its members: the part a tool's schema and its route's must share. */
export const membersOf = (schema: unknown): Json => {
  const { properties, required, additionalProperties } = schema as Json;
  return { properties, required, additionalProperties };
};
