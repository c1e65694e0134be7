// Every answer of the service is JSON with the status that says what happened, also at the edges: an unknown path
// (404), a path of the route table asked with a method it does not have (405 with Allow, derived from the table),
// OPTIONS (204 with Allow), the body parser's refusals (400, 413, 415), and what Node's HTTP server answers by
// itself, checked over raw sockets: a request it cannot parse (400), headers too large (431), a method it does not
// know (501), a request that does not arrive in time (408), CONNECT (405), an Expect it cannot meet (417), no Host (400).
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { routeTable } from '../../src/http/app.js';
import { ExpressMessages } from '../../src/http/express-messages.js';
import { startMetricsServer } from '../../src/http/metrics-server.js';
import { createLimitedServer } from '../../src/http/server-limits.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

/** A concrete path of a route template: every parameter 1. */
const concrete = (template: string): string => template.replace(/\{[^}]+\}/g, '1');

const ORDER = ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'];

describe('HTTP edges: every answer is JSON with the right status', () => {
  let t: TestApp;
  let app: Express;
  /** Each path template of the table with the methods its routes have. */
  let table: Map<string, Set<string>>;

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    const chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
    t = testApp(chains);
    app = t.app;
    table = new Map();
    const routes = routeTable(
      { chains, services: t.services, logger: createLogger('silent'), version: '0', a2a: t.a2a, mcp: t.mcp.mount },
      new Metrics(),
    );
    for (const route of routes) table.set(route.path, (table.get(route.path) ?? new Set()).add(route.method.toUpperCase()));
  });

  /** The Allow header a path of the table must carry: its methods, HEAD with GET, OPTIONS. */
  const allowOf = (methods: Set<string>): string => {
    const all = new Set([...methods, ...(methods.has('GET') ? ['HEAD'] : []), 'OPTIONS']);
    return ORDER.filter((method) => all.has(method)).join(', ');
  };

  describe('methods, from the route table', () => {
    it('every path of the table: a method it does not have is 405 JSON with Allow naming the ones it has', async () => {
      expect(table.size).toBeGreaterThan(30);
      for (const [template, methods] of table) {
        const path = concrete(template);
        const wrong = ['PUT', 'PATCH', ...['GET', 'POST', 'DELETE'].filter((method) => !methods.has(method))];
        for (const method of wrong) {
          const res = await request(app)[method.toLowerCase() as 'put'](path);
          expect(res.status, `${method} ${path}`).toBe(405);
          expect(res.headers['content-type'], `${method} ${path}`).toMatch(/^application\/json/);
          expect(res.headers['allow'], `${method} ${path}`).toBe(allowOf(methods));
          expect(res.body.error, `${method} ${path}`).toBe(`Method ${method} is not allowed on ${path}: use ${allowOf(methods)}`);
        }
      }
    });

    it('PUT /api/agent/register: 405 JSON with Allow: POST, OPTIONS (not an HTML page)', async () => {
      const res = await request(app).put('/api/agent/register').send({ mode: 'wallet-free' });
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('POST, OPTIONS');
      expect(res.body).toEqual({ error: 'Method PUT is not allowed on /api/agent/register: use POST, OPTIONS' });
    });

    it('405 comes before the body is read: a malformed body does not turn it into a 400', async () => {
      const res = await request(app).put('/api/agent/register').set('Content-Type', 'application/json').send('{"mode":');
      expect(res.status).toBe(405);
    });

    it('TRACE, and methods express does not route by default (QUERY, PROPFIND), are 405 on a path of the table', async () => {
      for (const method of ['TRACE', 'QUERY', 'PROPFIND']) {
        const res = await request(app)[method.toLowerCase() as 'trace']('/api/health');
        expect(res.status, method).toBe(405);
        expect(res.headers['allow'], method).toBe('GET, HEAD, OPTIONS');
        expect(res.headers['content-type'], method).toMatch(/^application\/json/);
      }
    });

    it('a path in other case or with a trailing slash, which express routes, gets the same 405 and Allow', async () => {
      for (const path of ['/API/Health', '/api/health/', '/Api/Agent/Register/']) {
        const res = await request(app).put(path);
        expect(res.status, path).toBe(405);
        expect(res.headers['allow'], path).toBe(path.toLowerCase().includes('register') ? 'POST, OPTIONS' : 'GET, HEAD, OPTIONS');
        expect(res.body.error, path).toBe(`Method PUT is not allowed on ${path}: use ${res.headers['allow']}`);
      }
      const preflight = await request(app)
        .options('/API/agent/info/1/1/')
        .set('Origin', 'https://app.example')
        .set('Access-Control-Request-Method', 'GET');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['allow']).toBe('GET, HEAD, OPTIONS');
    });

    it('HEAD of a GET route is answered like GET, without a body', async () => {
      const res = await request(app).head('/.well-known/self-agent-id.json');
      expect(res.status).toBe(200);
      expect(res.text ?? '').toBe('');
    });

    it('OPTIONS: a CORS preflight where CORS applies, else 204 with Allow', async () => {
      const preflight = await request(app).options('/api/health').set('Origin', 'https://app.example').set('Access-Control-Request-Method', 'GET');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
      const aa = await request(app).options('/api/aa/bundler');
      expect(aa.status).toBe(204);
      expect(aa.headers['allow']).toBe('POST, OPTIONS');
      expect(aa.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.headers['allow']).toBe('GET, HEAD, OPTIONS');
      const metrics = await request(app).options('/metrics');
      expect(metrics.status).toBe(204);
      expect(metrics.headers['allow']).toBe('GET, HEAD, OPTIONS');
      expect(metrics.text ?? '').toBe('');
    });
  });

  describe('unknown paths: 404 JSON everywhere', () => {
    it.each([
      ['GET', '/'],
      ['GET', '/nowhere'],
      ['POST', '/nowhere'],
      ['PUT', '/favicon.ico'],
      ['GET', '/api/nowhere'],
      ['DELETE', '/api/agent/info/1'],
      ['TRACE', '/nowhere'],
    ])('%s %s', async (method, path) => {
      const res = await request(app)[method.toLowerCase() as 'get'](path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: `No endpoint ${method} ${path}` });
    });
  });

  describe("the body parser's refusals", () => {
    it('malformed JSON: 400', async () => {
      const res = await request(app).post('/api/agent/register').set('Content-Type', 'application/json').send('{"mode":');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Request body is not valid JSON' });
    });

    it('over 200 kB: 413', async () => {
      const res = await request(app)
        .post('/api/agent/register')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ mode: 'wallet-free', pad: 'x'.repeat(210_000) }));
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'Request body is too large (at most 200kb)' });
    });

    it('over 200 kB on a route that reads its body as text (signed requests): 413', async () => {
      const res = await request(app).post('/api/demo/verify?network=testnet').set('Content-Type', 'application/json').send('x'.repeat(210_000));
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    });

    it('a charset other than UTF-8: 415', async () => {
      const res = await request(app)
        .post('/api/agent/register')
        .set('Content-Type', 'application/json; charset=latin1')
        .send('{"mode":"wallet-free"}');
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ error: 'Request body charset is not supported: send UTF-8' });
    });

    it('an unknown Content-Encoding: 415', async () => {
      const res = await request(app)
        .post('/api/agent/register')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'x-squeeze')
        .send('{}');
      expect(res.status).toBe(415);
      expect(res.body.error).toMatch(/encoding is not supported/);
    });

    it('a path parameter that is not valid percent-encoding: 400, whatever the method', async () => {
      for (const method of ['get', 'head', 'post', 'put'] as const) {
        const res = await request(app)[method]('/api/agent/info/11142220/%E0%A4%A');
        expect(res.status, method).toBe(400);
        if (method === 'head') continue;
        expect(res.headers['content-type'], method).toMatch(/^application\/json/);
        expect(res.body, method).toEqual({ error: "Failed to decode param '%E0%A4%A'" });
      }
    });
  });

  describe("what Node's HTTP server answers by itself, over raw sockets", () => {
    let server: Server;
    let port: number;

    beforeAll(async () => {
      // as main.ts makes it: requests and responses built with the app's prototypes
      const messages = new ExpressMessages();
      server = createLimitedServer({ requestTimeoutMs: 1_500, headersTimeoutMs: 1_000, maxConnections: 0 }, messages);
      messages.adopt(app);
      server.on('request', app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    interface RawAnswer {
      status: number;
      headers: Record<string, string>;
      body: string;
    }

    /** Writes `text`, reads until the server closes (or `stopAfterMs`), and parses the first answer. */
    function exchange(text: string, stopAfterMs = 15_000): Promise<RawAnswer> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        const stop = setTimeout(() => socket.destroy(), stopAfterMs);
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('latin1');
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          clearTimeout(stop);
          const end = received.indexOf('\r\n\r\n');
          if (end < 0) {
            reject(new Error(`no answer: ${JSON.stringify(received)}`));
            return;
          }
          const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
          const headers = Object.fromEntries(
            lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
          );
          const length = Number(headers['content-length'] ?? received.length);
          resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: received.slice(end + 4, end + 4 + length) });
        });
        socket.write(text);
      });
    }

    const expectJson = (answer: RawAnswer, status: number, error: RegExp): void => {
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(error) });
    };

    it('bad framing (Content-Length and Transfer-Encoding together): 400 JSON, then the connection closes', async () => {
      const answer = await exchange(
        'POST /api/agent/register HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      expectJson(answer, 400, /^Malformed HTTP request/);
      expect(answer.headers['connection']).toBe('close');
    });

    it('a header line without a colon: 400 JSON', async () => {
      expectJson(await exchange('GET /api/health HTTP/1.1\r\nHost x\r\n\r\n'), 400, /^Malformed HTTP request/);
    });

    it('headers over the limit: 431 JSON', async () => {
      expectJson(await exchange(`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, /headers are too large/);
    });

    it('a method Node does not know: 501 JSON', async () => {
      expectJson(await exchange('BREW /api/health HTTP/1.1\r\nHost: x\r\n\r\n'), 501, /^Unknown method/);
    });

    it('headers that do not arrive in time: 408 JSON', async () => {
      expectJson(await exchange('GET /api/health HTTP/1.1\r\nHost: x\r\n'), 408, /did not arrive in time/);
    });

    it('CONNECT to another host: 405 JSON with the methods the server has', async () => {
      const answer = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expectJson(answer, 405, /^Method CONNECT is not allowed on this server: it is not a proxy/);
      expect(answer.headers['allow']).toBe('GET, HEAD, POST, DELETE, OPTIONS');
    });

    it('CONNECT to a path of the table: 405 JSON with its Allow', async () => {
      const answer = await exchange('CONNECT /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      expectJson(answer, 405, /^Method CONNECT is not allowed on \/api\/health/);
      expect(answer.headers['allow']).toBe('GET, HEAD, OPTIONS');
    });

    it('OPTIONS * (the server as a whole): 204 with Allow', async () => {
      const answer = await exchange('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(answer.status).toBe(204);
      expect(answer.headers['allow']).toBe('GET, HEAD, POST, DELETE, OPTIONS');
    });

    it('an Expect other than 100-continue: 417 JSON', async () => {
      expectJson(await exchange('GET /api/health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n'), 417, /^Unsupported Expect/);
    });

    it('HTTP/1.1 without Host: 400 JSON', async () => {
      expectJson(await exchange('GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, /^Missing Host header/);
    });

    it('TRACE: 405 JSON over the wire too', async () => {
      const answer = await exchange('TRACE /api/agent/register HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expectJson(answer, 405, /^Method TRACE is not allowed/);
      expect(answer.headers['allow']).toBe('POST, OPTIONS');
    });

    it('after all this the server still answers', async () => {
      const answer = await exchange('GET /.well-known/self-agent-id.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(answer.status).toBe(200);
    });
  });

  describe('the metrics listener of its own (METRICS_PORT)', () => {
    it('another method on /metrics is 405 JSON with Allow; a request it cannot parse is 400 JSON', async () => {
      const separate = await startMetricsServer(new Metrics(), { port: 0, host: '127.0.0.1' });
      try {
        const post = await fetch(separate.url, { method: 'POST', body: '{}' });
        expect(post.status).toBe(405);
        expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
        expect(await post.json()).toEqual({ error: 'Method POST is not allowed on /metrics: use GET, HEAD, OPTIONS' });
        const port = Number(new URL(separate.url).port);
        const answer = await new Promise<string>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          let received = '';
          socket.on('data', (chunk: Buffer) => {
            received += chunk.toString();
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve(received));
          socket.write('GET /metrics HTTP/1.1\r\nHost x\r\n\r\n');
        });
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toMatch(/\r\n\r\n\{"error":"Malformed HTTP request/);
      } finally {
        await separate.close();
      }
    });
  });
});
