// Shared response headers: CORS (any origin for the public reads and the session endpoints, preflight 204),
// helmet's security headers, the Cache-Control policy, and the docs page loading everything from us.
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { routeTable } from '../../src/http/app.js';
import { errorHandler } from '../../src/http/middleware/errors.js';
import { cacheFor } from '../../src/http/middleware/security.js';
import { CACHE_POLICIES, type Route } from '../../src/http/route.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

const ORIGIN = 'https://some-agent-app.example';

/** Public GETs of the interface (whether or not this build routes them yet) and the discovery documents. */
const PUBLIC_GETS = [
  '/api/health',
  '/api/agent/info/11142220/1',
  '/api/agent/agents/11142220/0x0000000000000000000000000000000000000001',
  '/api/agent/agents-by-nullifier/11142220/12345',
  '/api/agent/verify/11142220/1',
  '/api/cards/11142220/1',
  '/api/reputation/11142220/1',
  '/api/verify-status/11142220/1',
  '/.well-known/a2a/1?chain=11142220',
  '/.well-known/self-agent-id.json',
  '/.well-known/agent-registration.json',
  '/.well-known/jwks.json',
  '/openapi.json',
];

const SESSION_PATHS = [
  '/api/agent/register',
  '/api/agent/register/status',
  '/api/agent/register/export',
  '/api/agent/deregister',
  '/api/agent/identify/status',
  '/api/agent/refresh',
];

describe('security headers, CORS and caching', () => {
  let app: express.Express;
  /** The route table the app is built from. */
  let routes: Route[];

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    const chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
    const t = testApp(chains);
    app = t.app;
    routes = routeTable({ chains, services: t.services, logger: createLogger('silent'), version: '0' }, new Metrics());
  });

  describe('CORS', () => {
    it('public GETs answer any origin, errors included, and never allow credentials', async () => {
      for (const path of PUBLIC_GETS) {
        const res = await request(app).get(path).set('Origin', ORIGIN);
        expect(res.headers['access-control-allow-origin'], path).toBe('*');
        expect(res.headers['access-control-expose-headers'], path).toBe('X-Request-Id, Retry-After');
        expect(res.headers['access-control-allow-credentials'], path).toBeUndefined();
      }
    });

    it('a preflight of a public GET is a 204 with an empty body and a max age', async () => {
      for (const path of PUBLIC_GETS) {
        const res = await request(app)
          .options(path)
          .set('Origin', ORIGIN)
          .set('Access-Control-Request-Method', 'GET')
          .set('Access-Control-Request-Headers', 'content-type');
        expect(res.status, path).toBe(204);
        expect(res.text ?? '', path).toBe('');
        expect(res.headers['access-control-allow-origin'], path).toBe('*');
        expect(res.headers['access-control-allow-methods'], path).toBe('GET, HEAD, OPTIONS');
        expect(res.headers['access-control-allow-headers'], path).toBe('Content-Type, Accept');
        expect(res.headers['access-control-max-age'], path).toBe('86400');
      }
    });

    it('session endpoints answer any origin and allow the Authorization header (bearer token)', async () => {
      for (const path of SESSION_PATHS) {
        const preflight = await request(app)
          .options(path)
          .set('Origin', ORIGIN)
          .set('Access-Control-Request-Method', 'POST')
          .set('Access-Control-Request-Headers', 'authorization, content-type');
        expect(preflight.status, path).toBe(204);
        expect(preflight.headers['access-control-allow-origin'], path).toBe('*');
        expect(preflight.headers['access-control-allow-methods'], path).toBe('GET, POST, OPTIONS');
        expect(preflight.headers['access-control-allow-headers'], path).toBe('Content-Type, Accept, Authorization');
      }
      const res = await request(app).post('/api/agent/register').set('Origin', ORIGIN).send({ mode: 'nope' });
      expect(res.status).toBe(400);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('a body the parser refuses still carries the CORS headers', async () => {
      const res = await request(app).post('/api/agent/register').set('Origin', ORIGIN).set('content-type', 'application/json').send('{"mode": ');
      expect(res.status).toBe(400);
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('the demo endpoints answer any origin, take the signature headers and expose those of a signed answer', async () => {
      const preflight = await request(app)
        .options('/api/demo/agent-to-agent')
        .set('Origin', ORIGIN)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'x-svc-agent-signature, x-svc-agent-timestamp, content-type');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-headers']).toContain('x-svc-agent-signature');
      const res = await request(app).get('/api/demo/verify').set('Origin', ORIGIN);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-expose-headers']).toContain('x-svc-agent-signature');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('an unknown path answers with the CORS of the nearest route above it, else public under /api and /.well-known', async () => {
      const corsOf = async (path: string) => {
        const preflight = await request(app).options(path).set('Origin', ORIGIN).set('Access-Control-Request-Method', 'GET');
        const get = await request(app).get(path).set('Origin', ORIGIN);
        expect(get.status, path).toBe(404);
        expect(get.headers['access-control-allow-origin'], path).toBe(preflight.headers['access-control-allow-origin']);
        return preflight.headers['access-control-allow-methods'] ?? null;
      };
      expect(await corsOf('/api/agent/register/unknown')).toBe('GET, POST, OPTIONS');
      expect(await corsOf('/api/a2a/x')).toBe('POST, OPTIONS');
      expect(await corsOf('/api/no/such/thing')).toBe('GET, HEAD, OPTIONS');
      expect(await corsOf('/.well-known/nothing')).toBe('GET, HEAD, OPTIONS');
      expect(await corsOf('/api/aa/token/x')).toBeNull();
      expect(await corsOf('/api/aa/nothing')).toBeNull();
      expect(await corsOf('/docs/x')).toBeNull();
      expect(await corsOf('/docsx')).toBeNull();
    });

    it('the AA proxy, /metrics and /docs send no CORS headers', async () => {
      for (const path of ['/api/aa/token', '/metrics', '/docs']) {
        const res = await request(app).get(path).set('Origin', ORIGIN);
        expect(res.headers['access-control-allow-origin'], path).toBeUndefined();
      }
      const preflight = await request(app).options('/api/aa/token').set('Origin', ORIGIN).set('Access-Control-Request-Method', 'POST');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('helmet', () => {
    it('sets the security headers on API answers and pages', async () => {
      for (const path of ['/api/health', '/api/no/such/thing', '/docs', '/openapi.json']) {
        const res = await request(app).get(path);
        expect(res.headers['x-content-type-options'], path).toBe('nosniff');
        expect(res.headers['x-frame-options'], path).toBe('DENY');
        expect(res.headers['referrer-policy'], path).toBe('strict-origin-when-cross-origin');
        expect(res.headers['strict-transport-security'], path).toMatch(/max-age=\d+/);
        expect(res.headers['x-dns-prefetch-control'], path).toBe('off');
        expect(res.headers['cross-origin-resource-policy'], path).toBe('cross-origin');
        expect(res.headers['permissions-policy'], path).toBe('camera=(), microphone=(), geolocation=()');
        expect(res.headers['x-powered-by'], path).toBeUndefined();
        const csp = String(res.headers['content-security-policy']);
        expect(csp, path).toContain("default-src 'self'");
        expect(csp, path).toContain("script-src 'self';");
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).not.toContain('upgrade-insecure-requests');
      }
    });
  });

  describe('Cache-Control', () => {
    it('follows the policy: discovery 1 h, the JWKS 5 min, agent reads 1 s, docs assets 1 day, the docs page revalidated; sessions, health and errors not stored', async () => {
      const expectations: [string, string][] = [
        ['/openapi.json', CACHE_POLICIES.discovery],
        ['/docs', CACHE_POLICIES.revalidate],
        ['/docs/assets/swagger-ui-bundle.js', CACHE_POLICIES.static],
        ['/docs/assets/no-such-file.js', CACHE_POLICIES.none],
        ['/api/health', CACHE_POLICIES.none],
        ['/api/agent/register/status?token=x', CACHE_POLICIES.none],
        ['/api/no/such/thing', CACHE_POLICIES.none],
        ['/metrics', CACHE_POLICIES.none],
        ['/.well-known/self-agent-id.json', CACHE_POLICIES.discovery],
        ['/.well-known/agent-registration.json', CACHE_POLICIES.discovery],
        ['/.well-known/a2a/7?chain=11142220', CACHE_POLICIES.discovery],
        ['/.well-known/jwks.json', CACHE_POLICIES.keys],
        // an agent that does not exist: verify and verify-status answer their no-proof bodies (cacheable) ...
        ['/api/agent/verify/11142220/987654', CACHE_POLICIES.agent],
        ['/api/verify-status/11142220/987654', CACHE_POLICIES.agent],
        // ... the others 404, and errors are never stored
        ['/api/agent/info/11142220/987654', CACHE_POLICIES.none],
        ['/api/agent/verify/1/987654', CACHE_POLICIES.none],
      ];
      for (const [path, policy] of expectations) {
        const res = await request(app).get(path);
        expect(res.headers['cache-control'], `${path} (${res.status})`).toBe(policy);
      }
      const agentReads = [
        '/api/agent/info/',
        '/api/agent/agents/',
        '/api/agent/agents-by-nullifier/',
        '/api/agent/verify/',
        '/api/cards/',
        '/api/reputation/',
        '/api/verify-status/',
      ];
      for (const prefix of agentReads) {
        const read = routes.find((route) => route.path.startsWith(prefix));
        expect({ method: read?.method, cache: read?.cache }, prefix).toEqual({ method: 'get', cache: 'agent' });
      }
      // a cacheable read answers HEAD with its policy, and any other method with no-store
      expect((await request(app).head('/api/agent/verify/11142220/987654')).headers['cache-control']).toBe(CACHE_POLICIES.agent);
      for (const method of ['post', 'put', 'options'] as const) {
        expect((await request(app)[method]('/api/agent/verify/11142220/987654')).headers['cache-control'], method).toBe(CACHE_POLICIES.none);
      }
      for (const path of ['/api/agent/register/status', '/api/agent/deregister/status', '/api/health', '/metrics', '/docsx', '/openapi.json/x']) {
        expect((await request(app).get(path)).headers['cache-control'], path).toBe(CACHE_POLICIES.none);
      }
      expect(CACHE_POLICIES.agent).toBe('public, max-age=1');
      expect(CACHE_POLICIES.discovery).toBe('public, max-age=3600');
    });

    it('cacheFor: a cacheable route answers with its policy, but its errors are never stored', async () => {
      const probe = express();
      probe.get('/ok', cacheFor('agent'), (_req, res) => {
        res.json({ ok: true });
      });
      probe.get('/missing', cacheFor('agent'), (_req, res) => {
        res.status(404).json({ error: 'not found' });
      });
      probe.get('/throws', cacheFor('agent'), () => {
        throw new Error('boom');
      });
      probe.get('/head', cacheFor('discovery'), (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"x"}');
      });
      probe.use(errorHandler(createLogger('silent')));
      expect((await request(probe).get('/ok')).headers['cache-control']).toBe('public, max-age=1');
      expect((await request(probe).get('/missing')).headers['cache-control']).toBe('no-store');
      expect((await request(probe).get('/throws')).headers['cache-control']).toBe('no-store');
      expect((await request(probe).get('/head')).headers['cache-control']).toBe('no-store');
    });
  });

  describe('GET /docs', () => {
    it('carries a strong ETag of the page, and a revalidation with it is a 304', async () => {
      const first = await request(app).get('/docs');
      const etag = first.headers['etag'] as string;
      expect(etag).toMatch(/^"[\w-]{43}"$/);
      expect((await request(app).get('/docs')).headers['etag']).toBe(etag);
      const again = await request(app).get('/docs').set('If-None-Match', etag);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect((await request(app).get('/docs').set('If-None-Match', '"other"')).status).toBe(200);
    });

    it('serves an HTML page whose scripts, styles and icons all load from this service', async () => {
      const res = await request(app).get('/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const html = res.text;
      const urls = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      expect(urls.length).toBeGreaterThanOrEqual(3);
      // no inline script: every <script> has a src (the CSP allows only 'self')
      expect(html.match(/<script\b[^>]*>/g)?.every((tag) => /\bsrc="/.test(tag))).toBe(true);
      for (const url of urls) {
        expect(url, 'a same-origin path, not a CDN').toMatch(/^\/[^/]/);
        const asset = await request(app).get(url);
        expect(asset.status, url).toBe(200);
        expect(Number(asset.headers['content-length'] ?? asset.text?.length ?? 0), url).toBeGreaterThan(0);
        if (url.endsWith('.js')) expect(asset.headers['content-type'], url).toMatch(/javascript/);
        if (url.endsWith('.css')) expect(asset.headers['content-type'], url).toMatch(/^text\/css/);
        if (url.endsWith('.png')) expect(asset.headers['content-type'], url).toBe('image/png');
      }
      const init = await request(app).get('/docs/assets/init.js');
      expect(init.text).toContain("url: '/openapi.json'");
      expect(init.text).toContain('validatorUrl: null'); // no badge from an online validator
    });

    it('serves only the files the page uses', async () => {
      for (const file of ['index.html', 'package.json', '..%2Fpackage.json', '__proto__', 'swagger-initializer.js']) {
        const res = await request(app).get(`/docs/assets/${file}`);
        expect(res.status, file).toBe(404);
        expect(res.body, file).toEqual({ error: expect.any(String) });
      }
    });
  });
});
