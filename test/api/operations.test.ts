// Operating the service: a caller's mistake is logged at warn without a stack and our own failure at error with
// it (the A2A SDK's console output too); A2A requests are counted per JSON-RPC method; a real listening server cuts
// off a client that trickles its body and refuses connections beyond its cap; /metrics can require a token or live
// on a listener of its own.

import { get, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isA2aCallerError } from '../../src/a2a/caller-errors.js';
import { startMetricsServer } from '../../src/http/metrics-server.js';
import { bearerMatches } from '../../src/http/routes/metrics.js';
import { createLimitedServer, type ServerLimits } from '../../src/http/server-limits.js';
import { routeConsoleTo } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A pino logger whose lines the test reads. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, next) {
        lines.push(JSON.parse(chunk.toString()) as LogLine);
        next();
      },
    }),
  );
  return { logger, lines };
}

/** The value of one sample of the exposition text, 0 when absent (labels compared exactly). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const present = line
      .slice(name.length + 1, line.indexOf('}'))
      .split(',')
      .sort()
      .join(',');
    if (present === wanted) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** GET over a fresh connection: the status, or the error when the connection is refused or dropped. */
const getOnce = (port: number, path: string): Promise<number | Error> =>
  new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve(error));
  });

const until = async (condition: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe('operations', () => {
  let net: TestNetworks;

  beforeAll(async () => {
    net = await deployTestNetworks();
  });

  describe('logging', () => {
    const original = { debug: console.debug, log: console.log, info: console.info, warn: console.warn, error: console.error };
    afterEach(() => Object.assign(console, original));

    it("a caller's mistake (400) is a warn line with status, route and message, and no stack", async () => {
      const { logger, lines } = capturingLogger();
      const { app } = testApp(net.chains, { logger });
      const res = await request(app).post('/api/agent/register').send({ mode: 'no-such-mode', network: 'testnet' });
      expect(res.status).toBe(400);
      const refused = lines.filter((line) => line.msg === 'request refused');
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ level: 40, status: 400, method: 'POST', route: '/api/agent/register', error: res.body.error });
      expect(JSON.stringify(refused[0])).not.toMatch(/stack|\bat \w/);
      expect(lines.some((line) => line.level >= 50)).toBe(false);

      // a malformed body, refused by the parser before any route: still warn
      await request(app).post('/api/agent/register').set('Content-Type', 'application/json').send('{"mode":');
      expect(lines.filter((line) => line.msg === 'request refused').at(-1)).toMatchObject({
        level: 40,
        status: 400,
        error: 'Request body is not valid JSON',
      });
      expect(lines.some((line) => line.level >= 50)).toBe(false);
    });

    it('a failure of ours (500) is an error line with the error and its stack', async () => {
      const { logger, lines } = capturingLogger();
      const { app, services } = testApp(net.chains, { logger });
      services.registration.status = () => Promise.reject(new Error('the store went away'));
      const res = await request(app).get('/api/agent/register/status').query({ token: 'x' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal server error' });
      const failed = lines.find((line) => line.msg === 'request failed' && line['err'] !== undefined);
      expect(failed).toMatchObject({ level: 50, status: 500, route: '/api/agent/register/status', err: { message: 'the store went away' } });
      expect((failed?.['err'] as { stack?: string } | undefined)?.stack).toMatch(/Error: the store went away\n\s+at /);
    });

    it("the A2A SDK's report of a caller's mistake is a warn line without a stack; an error of ours keeps error", async () => {
      const { logger, lines } = capturingLogger();
      const { app } = testApp(net.chains, { logger });
      routeConsoleTo(logger, { isCallerError: isA2aCallerError });
      // answered through the SDK's transport by our JSON-RPC front: a caller's mistake logs no error
      const res = await request(app).post('/api/a2a').set('A2A-Version', '9.9').send({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} });
      expect(res.status).toBe(200);
      expect(res.body.error.message).toMatch(/9\.9/);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      // a stream the SDK's express handler cannot open: the SDK reports it on the console
      const stream = await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .send({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: 'no-such-task' } });
      expect(stream.body.error).toMatchObject({ code: -32001 });
      const fromSdk = lines.filter((line) => line['source'] === 'console');
      expect(fromSdk.length).toBeGreaterThan(0);
      for (const line of fromSdk) {
        expect(line.level).toBe(40);
        expect(line['err']).toBeUndefined();
        expect(line['error']).toMatchObject({ type: 'TaskNotFoundError', message: expect.stringMatching(/no-such-task/) });
      }
      console.error('Unhandled error in JSON-RPC POST handler:', new Error('boom'));
      expect(lines.at(-1)).toMatchObject({ level: 50, source: 'console', err: { message: 'boom', stack: expect.stringMatching(/\n\s+at /) } });
    });
  });

  describe('metrics of the A2A endpoint', () => {
    it('are labelled by JSON-RPC method, unknown and missing methods as "other", never route "/"', async () => {
      const metrics = new Metrics();
      const { app } = testApp(net.chains, { metrics });
      const help = { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'help' }] } };
      await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id: 1, method: 'message/send', params: help });
      await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id: 2, method: 'message/send', params: help });
      await request(app)
        .post('/api/a2a')
        .send({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: 'no-such-task' } });
      await request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .send({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'no-such-task' } });
      await request(app)
        .post('/api/a2a')
        .send({ jsonrpc: '2.0', id: 5, method: 'x'.repeat(40), params: {} });
      await request(app).post('/api/a2a').send({ jsonrpc: '2.0', id: 6, method: 'tasks/evil', params: {} });
      await request(app).post('/api/a2a').set('Content-Type', 'application/json').send('{not json');
      await request(app).get('/api/a2a');

      const text = (await request(app).get('/metrics')).text;
      const a2a = (rpc_method: string) => sample(text, 'http_requests_total', { route: '/api/a2a', method: 'POST', status: '200', rpc_method });
      expect(a2a('message/send')).toBe(2);
      expect(a2a('tasks/get')).toBe(1);
      expect(a2a('GetTask')).toBe(1);
      expect(a2a('other')).toBe(3);
      expect(
        sample(text, 'http_request_duration_seconds_count', { route: '/api/a2a', method: 'POST', status: '200', rpc_method: 'message/send' }),
      ).toBe(2);
      expect(sample(text, 'http_requests_total', { route: '/api/a2a', method: 'GET', status: '200' })).toBe(1);
      expect(text).not.toMatch(/route="\/"/);
      expect(text).not.toContain('xxxxxxxx');
      expect(text).not.toContain('tasks/evil');
    });
  });

  describe('server limits, on a real listening server', () => {
    const servers: Server[] = [];
    const sockets: Socket[] = [];
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map(closeServer));
    });

    async function serve(app: Express, limits: ServerLimits): Promise<{ server: Server; port: number }> {
      const server = createLimitedServer(limits);
      server.on('request', app);
      servers.push(server);
      return { server, port: await listen(server) };
    }

    it('a client that sends its headers and then trickles its body is cut off at the request timeout', async () => {
      const requestTimeoutMs = 1_000;
      const { port } = await serve(testApp(net.chains).app, { requestTimeoutMs, headersTimeoutMs: 1_000, maxConnections: 0 });
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
      const started = Date.now();
      socket.write('POST /api/agent/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{');
      // one byte every 100 ms: 20 s for the whole body
      const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('close', resolve));
      clearInterval(trickle);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(requestTimeoutMs - 50);
      // the timeout plus Node's check interval (1 s here), with room for a slow machine
      expect(elapsed).toBeLessThan(10_000);
      if (answer !== '') expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    });

    it('connections beyond the cap are refused while those within it are served', async () => {
      const { server, port } = await serve(testApp(net.chains).app, { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 2 });
      const connections = () => new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count)));
      // two clients hold a connection each
      const held = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
      sockets.push(...held);
      await until(async () => (await connections()) === 2);

      const refused = await getOnce(port, '/openapi.json');
      expect(refused).toBeInstanceOf(Error);
      expect((refused as NodeJS.ErrnoException).code ?? (refused as Error).message).toMatch(/ECONNRESET|socket hang up|EPIPE/);

      // one leaves: the next client is served
      held[0]?.destroy();
      await until(async () => (await connections()) === 1);
      expect(await getOnce(port, '/openapi.json')).toBe(200);
    });
  });

  describe('/metrics access', () => {
    const token = 'metrics-token-0123456789abcdef';

    it('with METRICS_TOKEN: 401 JSON without the bearer token or with another, the metrics with it', async () => {
      const { app } = testApp(net.chains, { metricsEndpoint: { token } });
      const none = await request(app).get('/metrics');
      expect(none.status).toBe(401);
      expect(none.headers['content-type']).toMatch(/^application\/json/);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(none.body.error).toMatch(/Authorization: Bearer/);
      expect((await request(app).get('/metrics').set('Authorization', `Bearer ${token}x`)).status).toBe(401);
      expect((await request(app).get('/metrics').set('Authorization', `Basic ${token}`)).status).toBe(401);
      const ok = await request(app).get('/metrics').set('Authorization', `Bearer ${token}`);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('# TYPE http_requests_total counter');
    });

    it('compares the token in constant time, whatever the lengths', () => {
      expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
      expect(bearerMatches(`bearer  ${token}`, token)).toBe(true);
      for (const header of [undefined, '', 'Bearer', 'Bearer ', `Bearer ${token.slice(1)}`, `Bearer ${token}${token}`, token]) {
        expect(bearerMatches(header, token), String(header)).toBe(false);
      }
    });

    it('with METRICS_PORT: served on its own loopback listener (with the token if set), not on the main port', async () => {
      const metrics = new Metrics();
      const { app } = testApp(net.chains, { metrics, metricsEndpoint: false });
      const separate = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1', token });
      try {
        expect(separate.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
        await request(app).get('/openapi.json');
        expect((await request(app).get('/metrics')).status).toBe(404);

        expect((await fetch(separate.url)).status).toBe(401);
        const res = await fetch(separate.url, { headers: { Authorization: `Bearer ${token}` } });
        expect(res.status).toBe(200);
        expect(await res.text()).toMatch(/http_requests_total\{[^}]*route="\/openapi\.json"/);
        expect((await fetch(separate.url.replace('/metrics', '/api/health'))).status).toBe(404);
      } finally {
        await separate.close();
      }
    });
  });
});
