// What the shared middleware stack does for every request, whatever shape it takes (app.ts, middleware/*): one log
// line per request with its request id and without the query string, counts per route template, the security
// headers helmet would set, each route's CORS group in its preflights and in those of unknown paths below it, headers
// a handler sets itself winning, and a body read only by routes that take one.
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { createApp, routeTable } from '../../src/http/app.js';
import { CORS_GROUPS, type Route, staticPrefix } from '../../src/http/route.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

const VERIFY = '/api/agent/verify/11142220/987654';

/** A route that sets its own headers, as a page with its own Content-Security-Policy does. */
const ownHeaders: Route = {
  method: 'get',
  path: '/test/own-headers',
  summary: 'A page with headers of its own',
  tags: ['Service'],
  cache: 'agent',
  undocumented: true,
  responses: { 200: { description: 'A page' } },
  handler: (_req, res) => {
    res.setHeader('Content-Security-Policy', "default-src 'none'");
    res.setHeader('Cache-Control', 'private, max-age=5');
    res.type('html').send('<p>page</p>');
  },
};

describe('the middleware stack', () => {
  let app: Express;
  let routes: Route[];
  let metrics: Metrics;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    const chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
    metrics = new Metrics();
    const t = testApp(chains, { metrics });
    // the service's own logger (redaction included), on a destination that keeps the lines
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const deps = { chains, services: t.services, logger, version: '0', metrics, a2a: t.a2a };
    app = createApp(deps, { extraRoutes: [ownHeaders] });
    routes = routeTable(deps, new Metrics());
  });

  const linesOf = (reqId: string) => lines.filter((line) => line['reqId'] === reqId);

  describe('request log', () => {
    it('one line per request: its id (the one sent back as X-Request-Id), method, path without the query, status, time', async () => {
      const res = await request(app).get(`${VERIFY}?token=secret-session-token`);
      expect(res.status).toBe(200);
      const id = String(res.headers['x-request-id']);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const [line, ...more] = linesOf(id);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: 30, msg: 'request completed', method: 'GET', path: VERIFY, status: 200, ms: expect.any(Number) });
      expect(JSON.stringify(lines)).not.toContain('secret-session-token');
    });

    it('keeps a sane X-Request-Id of the caller and replaces one that is not', async () => {
      const kept = await request(app).get('/api/no/such/thing').set('X-Request-Id', 'caller-id.42');
      expect(kept.headers['x-request-id']).toBe('caller-id.42');
      expect(linesOf('caller-id.42')).toEqual([expect.objectContaining({ status: 404, path: '/api/no/such/thing' })]);
      const replaced = await request(app).get('/api/health').set('X-Request-Id', 'no spaces <or> markup');
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('answers refused at the edge are logged too (405, a preflight)', async () => {
      const refused = await request(app).put(VERIFY).set('X-Request-Id', 'put-verify');
      expect(refused.status).toBe(405);
      expect(linesOf('put-verify')).toEqual([expect.objectContaining({ method: 'PUT', status: 405 })]);
      await request(app)
        .options(VERIFY)
        .set('X-Request-Id', 'preflight')
        .set('Origin', 'https://a.example')
        .set('Access-Control-Request-Method', 'GET');
      expect(linesOf('preflight')).toEqual([expect.objectContaining({ method: 'OPTIONS', status: 204 })]);
    });

    it('the logger redacts secrets in what other lines carry', () => {
      const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      logger.info({ reqId: 'redaction', session: { token: 'tok', privateKey: '0xkey' } }, 'a line');
      expect(linesOf('redaction')[0]).toMatchObject({ session: { token: '[redacted]', privateKey: '[redacted]' } });
    });
  });

  describe('metrics', () => {
    it('counts requests per route template, method and status, and unmatched ones under one label', async () => {
      const count = async (labels: string): Promise<number> => {
        const text = (await request(app).get('/metrics')).text;
        const line = text.split('\n').find((l) => l.startsWith(`http_requests_total{${labels}}`));
        return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
      };
      const verify = 'route="/api/agent/verify/:chainId/:agentId",method="GET",status="200"';
      const unknown = 'route="unmatched",method="GET",status="404"';
      const [verifyBefore, unknownBefore] = [await count(verify), await count(unknown)];
      for (let i = 0; i < 3; i++) expect((await request(app).get(VERIFY)).status).toBe(200);
      expect((await request(app).get('/api/agent/verify/11142220/1/extra')).status).toBe(404);
      expect(await count(verify)).toBe(verifyBefore + 3);
      expect(await count(unknown)).toBe(unknownBefore + 1);
      const text = (await request(app).get('/metrics')).text;
      expect(text).toMatch(/http_request_duration_seconds_count\{route="\/api\/agent\/verify\/:chainId\/:agentId",method="GET",status="200"\} \d+/);
    });
  });

  describe('headers', () => {
    it('every header helmet 8 sets by default (with the service CSP, CORP and frame policy), on answers and errors', async () => {
      for (const path of ['/api/health', '/api/no/such/thing', VERIFY]) {
        const res = await request(app).get(path);
        expect(res.headers, path).toMatchObject({
          'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
          'cross-origin-opener-policy': 'same-origin',
          'cross-origin-resource-policy': 'cross-origin',
          'origin-agent-cluster': '?1',
          'referrer-policy': 'strict-origin-when-cross-origin',
          'strict-transport-security': 'max-age=31536000; includeSubDomains',
          'x-content-type-options': 'nosniff',
          'x-dns-prefetch-control': 'off',
          'x-download-options': 'noopen',
          'x-frame-options': 'DENY',
          'x-permitted-cross-domain-policies': 'none',
          'x-xss-protection': '0',
        });
        expect(res.headers['x-powered-by'], path).toBeUndefined();
      }
    });

    it('a handler sets its own headers over the shared ones', async () => {
      const res = await request(app).get('/test/own-headers');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'");
      expect(res.headers['cache-control']).toBe('private, max-age=5');
      expect(res.headers['x-frame-options']).toBe('DENY');
    });

    it("a preflight of each route's path gets that path's CORS group, and so does an unknown path below it", async () => {
      for (const route of routes) {
        // one preflight per path: the group of the path's first route
        const group = routes.find((other) => other.path === route.path)?.cors;
        const path = route.path.replace(/\{[^}]+\}/g, 'x');
        for (const asked of [path, `${staticPrefix(route.path)}/no/such/thing`]) {
          const res = await request(app)
            .options(asked)
            .set('Origin', 'https://a.example')
            .set('Access-Control-Request-Method', route.method.toUpperCase());
          const where = `${route.method} ${route.path}: OPTIONS ${asked}`;
          expect(res.status, where).toBe(group || asked === path ? 204 : 404);
          expect(res.headers['access-control-allow-methods'], where).toBe(group ? CORS_GROUPS[group].methods : undefined);
          expect(res.headers['access-control-allow-origin'], where).toBe(group ? '*' : undefined);
        }
      }
    });

    it('HEAD of a cacheable read has its policy; its errors and other methods are never stored', async () => {
      expect((await request(app).head(VERIFY)).headers['cache-control']).toBe('public, max-age=1');
      expect((await request(app).get('/api/agent/verify/1/1')).headers['cache-control']).toBe('no-store');
      expect((await request(app).post(VERIFY)).headers['cache-control']).toBe('no-store');
    });
  });

  describe('bodies', () => {
    const malformed = (req: request.Test) => req.set('content-type', 'application/json').send('{"not": json');

    it('a route that takes a body answers a malformed one with 400', async () => {
      const res = await malformed(request(app).post('/api/agent/register'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Request body is not valid JSON' });
    });

    it('a GET never reads its body, an unknown path is a JSON 404 and a wrong method a 405 whatever the body', async () => {
      expect((await malformed(request(app).get(VERIFY))).status).toBe(200);
      const unknown = await malformed(request(app).post('/api/no/such/thing'));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'No endpoint POST /api/no/such/thing' });
      const wrongMethod = await malformed(request(app).post(VERIFY));
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers['allow']).toBe('GET, HEAD, OPTIONS');
    });
  });
});
