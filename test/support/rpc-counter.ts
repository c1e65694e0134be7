// A JSON-RPC front that forwards every HTTP request to a real node and counts them: what a program pointed at it
// (the SDK's verifier, given only an RPC URL) costs in round trips to the chain. A JSON-RPC batch is one round trip.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcCounter {
  url: string;
  /** HTTP requests forwarded since the last reset. */
  readonly count: number;
  reset(): void;
  close(): Promise<void>;
}

export async function rpcCounter(target: string): Promise<RpcCounter> {
  let count = 0;
  const server: Server = createServer(async (req, res) => {
    count++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get count() {
      return count;
    },
    reset: () => {
      count = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
