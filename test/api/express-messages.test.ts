// The main server builds each request and response with the express app's prototypes (src/http/express-messages.ts):
// express then finds them in place, and everything express and node:http do with a request still works, over real
// HTTP on a kept-alive connection.
import { Agent, IncomingMessage, request, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { canBuildWithPrototypes, ExpressMessages } from '../../src/http/express-messages.js';
import { createLimitedServer } from '../../src/http/server-limits.js';

interface Seen {
  /** The request's and response's prototypes when the server handed them over, before express. */
  request: object | null;
  response: object | null;
}

let server: Server | undefined;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

afterEach(async () => {
  const open = server;
  server = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

/** An express app with a JSON GET and a JSON POST, served as main.ts serves it; `adopt` false: no app adopted. */
async function serve(adopt: boolean): Promise<{ app: Express; base: string; seen: Seen[] }> {
  const app = express();
  app.get('/echo', (req, res) => {
    res.status(203).json({ query: req.query, own: Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response });
  });
  app.post('/echo', express.json(), (req, res) => {
    res.json({ body: req.body as unknown });
  });
  const messages = new ExpressMessages();
  server = createLimitedServer({ requestTimeoutMs: 5_000, headersTimeoutMs: 2_000, maxConnections: 0 }, messages);
  if (adopt) messages.adopt(app);
  const seen: Seen[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ request: Object.getPrototypeOf(req) as object, response: Object.getPrototypeOf(res) as object });
    app(req, res);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { app, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function ask(base: string, path: string, body?: string): Promise<{ status: number; json: unknown; socket: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: body === undefined ? 'GET' : 'POST', agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')), socket: res.socket }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

describe('requests and responses built with the app prototypes', () => {
  it('runs on this Node release', () => {
    expect(canBuildWithPrototypes).toBe(true);
  });

  it('hands express requests and responses whose prototypes are already its own, and express serves them', async () => {
    const { app, base, seen } = await serve(true);
    const first = await ask(base, '/echo?agent=1');
    const second = await ask(base, '/echo', JSON.stringify({ intent: 'verify' }));
    const third = await ask(base, '/echo?agent=2');
    expect(first).toMatchObject({ status: 203, json: { query: { agent: '1' }, own: true } });
    expect(second).toMatchObject({ status: 200, json: { body: { intent: 'verify' } } });
    expect(third.json).toEqual({ query: { agent: '2' }, own: true });
    // one kept-alive connection: node:http's own setup of each request and response held
    expect(third.socket).toBe(first.socket);
    expect(seen).toHaveLength(3);
    for (const one of seen) expect(one).toEqual({ request: app.request, response: app.response });
  });

  it("builds node:http's own until an app is adopted, and express sets its prototypes then", async () => {
    const { base, seen } = await serve(false);
    expect((await ask(base, '/echo?agent=1')).json).toEqual({ query: { agent: '1' }, own: true });
    expect(seen).toEqual([{ request: IncomingMessage.prototype, response: ServerResponse.prototype }]);
  });
});
