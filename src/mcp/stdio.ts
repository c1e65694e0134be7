// The MCP server over stdio, for hosts that start their servers as processes: a bridge that serves the service's
// tools and resources as they are, forwarding each request to the service at a URL over Streamable HTTP with the
// SDK's Client, and each progress notification back. It holds nothing of its own: what the host sees is what the
// service answers. A session the service no longer knows (it expired) is opened again once, transparently.
// Self-contained (the SDK and core only), so a command-line entry can import it alone.
import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Progress,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_PATH } from '../core/endpoints.js';

export interface StdioBridgeOptions {
  /** The service's base URL, e.g. http://localhost:3000 (its MCP endpoint is that URL + /mcp). */
  url: string;
  /** Where the host's messages come from and go to; default this process's stdin and stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Longest wait for one forwarded request, restarted by each progress notification; default 10 minutes. */
  timeoutMs?: number;
  /** Where the bridge says what went wrong (never stdout: that is the protocol's); default stderr. */
  log?: (message: string) => void;
}

export interface StdioBridge {
  /** Resolves when the host has gone (stdin ended) or close() was called. */
  readonly closed: Promise<void>;
  /** Ends the session on the service and stops serving. */
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'agent-identity-registry-stdio', version: '1.0.0' };

/** Serves the service at `options.url` over stdio until the host goes away. */
export async function runStdioBridge(options: StdioBridgeOptions): Promise<StdioBridge> {
  const endpoint = new URL(MCP_PATH, options.url);
  const timeout = options.timeoutMs ?? 10 * 60_000;
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const connect = async (): Promise<Client> => {
    const client = new Client(CLIENT_INFO);
    await client.connect(new StreamableHTTPClientTransport(endpoint));
    return client;
  };
  let remote = await connect();
  /** `call` on the service; once more on a new session if the service no longer knows this one. */
  const forward = async <T>(call: (client: Client) => Promise<T>): Promise<T> => {
    try {
      return await call(remote);
    } catch (error) {
      if (!(error instanceof StreamableHTTPError && error.code === 404)) throw error;
      log(`the service ended the MCP session: opening another one at ${endpoint.href}`);
      await remote.close().catch(() => undefined);
      remote = await connect();
      return call(remote);
    }
  };

  const server = new Server(remote.getServerVersion() ?? CLIENT_INFO, {
    capabilities: { tools: {}, resources: {} },
    ...(remote.getInstructions() ? { instructions: remote.getInstructions() } : {}),
  });
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) =>
    forward((client) => client.listTools(request.params, { signal: extra.signal })),
  );
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { _meta, ...params } = request.params;
    const progressToken = _meta?.progressToken;
    // progress goes to the host in order, and before the answer (after it, the host would drop it as unknown)
    let forwarded = Promise.resolve();
    const relay = (progress: Progress): void => {
      forwarded = forwarded
        .then(() =>
          extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: progressToken as string | number } }),
        )
        .catch(() => undefined);
    };
    try {
      const result = await forward((client) =>
        client.callTool(params, undefined, {
          signal: extra.signal,
          timeout,
          resetTimeoutOnProgress: true,
          ...(progressToken === undefined ? {} : { onprogress: relay }),
        }),
      );
      await forwarded;
      return result as CallToolResult;
    } catch (error) {
      // the host's own protocol errors (an unknown tool) pass as they are; the service out of reach is the tool's failure
      if (error instanceof McpError) throw error;
      const why = error instanceof Error ? error.message : String(error);
      log(`${request.params.name}: ${why}`);
      return { content: [{ type: 'text', text: `The service at ${options.url} did not answer: ${why}` }], isError: true };
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
    forward((client) => client.listResources(request.params, { signal: extra.signal })),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
    forward((client) => client.listResourceTemplates(request.params, { signal: extra.signal })),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    forward((client) => client.readResource(request.params, { signal: extra.signal })),
  );

  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  let done: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    done = resolve;
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stdin.off('end', hostGone);
      stdin.off('close', hostGone);
      await server.close().catch(() => undefined);
      // the session on the service ends with the host's
      await (remote.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
      await remote.close().catch(() => undefined);
      done();
    })();
    return closing;
  };
  const hostGone = (): void => void close();
  stdin.once('end', hostGone);
  stdin.once('close', hostGone);
  transport.onerror = (error) => log(`stdio: ${error.message}`);
  await server.connect(transport);
  return { closed, close };
}
