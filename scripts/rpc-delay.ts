// A JSON-RPC front that forwards each HTTP request to a node after a fixed delay and streams the answer back: the
// round trip to a provider some way off, in front of a local chain (bench:history's first start against a remote
// RPC).
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DelayedRpc {
  url: string;
  close(): Promise<void>;
}

export async function delayedRpc(target: string, delayMs: number): Promise<DelayedRpc> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.once('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"error":"the node did not answer"}');
    });
    forwarded.end(Buffer.concat(chunks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
