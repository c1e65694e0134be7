// The account-abstraction proxy against real upstream HTTP servers on loopback (one answering JSON-RPC, one that
// never answers, one that cuts the connection or answers 500): every refusal with its status and message, in the
// service's order; the caller's body reaching the upstream unchanged and without the token; the upstream's answer
// passed back byte for byte; the size limit on the bytes actually sent; the limits with Retry-After; the token
// secret generated once into DATA_DIR and shared by a restart.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AaProxyOptions, UpstreamFailure } from '../../src/aa/aa-proxy.js';
import { BUNDLER_METHODS, PAYMASTER_METHODS } from '../../src/aa/json-rpc-request.js';
import { PROXY_TOKEN_SECRET, userAgentHash } from '../../src/aa/proxy-tokens.js';
import { decodeSponsoree } from '../../src/aa/sponsoree-header.js';
import { ChainGateway } from '../../src/chain/gateway.js';
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import type { OpenApiDocument } from '../../src/http/openapi/document.js';
import { REDACTED_PATHS } from '../../src/logger.js';
import { createServices } from '../../src/services/index.js';
import { loadKeptSecret } from '../../src/store/kept-secret.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { deployTestSystem } from '../support/chain.js';

const TESTNET = '11142220';
const MAINNET = '42220';
const HOST = 'wallet.example';
const ORIGIN = `https://${HOST}`;
const UA = 'Mozilla/5.0 (aa-proxy test)';
const API_KEY = 'provider-key-that-must-not-leak';
const LIMIT = 200_000;

/** What the JSON-RPC upstream answers: odd spacing and number formats that a re-serialization would change. */
const UPSTREAM_ANSWER = '{"jsonrpc":"2.0", "id":7,  "result":{"hash":"0xab","big":123456789012345678901234567890,"f":1.50,"s":"\\u00e9"}}';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server; `answer` decides what each request gets. */
async function upstream(
  answer: (req: Received, res: import('node:http').ServerResponse) => void,
): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const one = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(one);
      answer(one, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

describe('account-abstraction proxy', () => {
  let chains: ChainGateway;
  let good: Awaited<ReturnType<typeof upstream>>;
  let slow: Awaited<ReturnType<typeof upstream>>;
  let broken: Awaited<ReturnType<typeof upstream>>;
  const servers: Server[] = [];
  const dataDirs: string[] = [];
  let logLines: string[];
  let failures: UpstreamFailure[];
  let app: Express;
  let nextIp = 1;
  /** Every test calls from its own address, so the per-address limits of one test do not touch another. */
  const freshIp = (): string => `203.0.113.${nextIp++}`;
  /** The answers of the page-like requests, checked against the OpenAPI document at the end. */
  const answers: request.Response[] = [];
  const record = (res: request.Response): void => {
    answers.push(res);
  };

  /** The app as the composition root builds it, with these AA settings and a log captured as text lines. */
  function aaApp(aa: Partial<AaProxyOptions> = {}, clock?: () => number): Express {
    const store = new MemoryStore(clock);
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    const services = createServices({
      chains,
      store,
      sessionSecret: new Uint8Array(32).fill(7),
      publicUrl: 'http://127.0.0.1:3000',
      deepLinkScheme: 'selfapp',
      appName: 'Agent Identity Registry',
      ...(clock ? { clock } : {}),
      aa: {
        tokenSecret: new TextEncoder().encode('a'.repeat(64)),
        upstreams: {
          testnet: { bundlerUrl: `${good.url}/rpc?apikey=${API_KEY}`, paymasterUrl: `${good.url}/pm?apikey=${API_KEY}` },
        },
        onUpstreamError: (failure) => {
          failures.push(failure);
          logger.warn(failure, 'AA proxy upstream failed');
        },
        ...aa,
      },
    });
    return createApp({ chains, services, logger, version: '0' });
  }

  /** A request from the page of HOST, from `ip`, with the test's User-Agent. */
  const fromPage = (test: request.Test, ip: string, userAgent = UA): request.Test =>
    test.set('Host', HOST).set('Origin', ORIGIN).set('X-Forwarded-For', ip).set('User-Agent', userAgent).expect(record);

  async function tokenFor(target: Express, ip: string, chainId = TESTNET, userAgent = UA): Promise<string> {
    const res = await fromPage(request(target).post(`/api/aa/token?chainId=${chainId}`), ip, userAgent);
    expect(res.status, res.text).toBe(200);
    return res.body.token as string;
  }

  const rpc = (method: string, extra: object = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [], ...extra });

  /** A proxied call from `ip` with `token`; the body is sent as the exact text given. */
  const call = (target: Express, route: 'bundler' | 'paymaster', ip: string, token: string | undefined, body: string, chainId = TESTNET) => {
    const test = fromPage(request(target).post(`/api/aa/${route}?chainId=${chainId}`), ip).set('Content-Type', 'application/json');
    return (token === undefined ? test : test.set('x-aa-proxy-token', token)).send(body);
  };

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
    good = await upstream((req, res) => {
      res.writeHead(req.path.startsWith('/created') ? 201 : 200, { 'Content-Type': 'application/json' });
      res.end(UPSTREAM_ANSWER);
    });
    slow = await upstream(() => {
      // never answers: the proxy's deadline must end the call
    });
    broken = await upstream((req, res) => {
      if (req.path.startsWith('/close')) {
        res.socket?.destroy();
        return;
      }
      if (req.path.startsWith('/partial')) {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
        res.write('{"jsonrpc":"2.0",');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (req.path.startsWith('/html')) {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>maintenance</html>');
        return;
      }
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end('{"error":"internal"}');
    });
    servers.push(good.server, slow.server, broken.server);
    logLines = [];
    failures = [];
    app = aaApp();
  });

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  describe('POST /api/aa/token', () => {
    it('issues a token bound to the chain, the address and the User-Agent, with no CORS headers and no-store', async () => {
      const ip = freshIp();
      const before = Date.now();
      const res = await fromPage(request(app).post(`/api/aa/token?chainId=${TESTNET}`), ip);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'token']);
      expect(res.body.expiresAt).toBeGreaterThanOrEqual(before + 90_000);
      expect(res.body.expiresAt).toBeLessThanOrEqual(Date.now() + 90_000);
      const [payload, signature] = (res.body.token as string).split('.');
      expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'))).toEqual({
        exp: res.body.expiresAt,
        chainId: TESTNET,
        ip,
        uaHash: userAgentHash(UA),
      });
    });

    it('takes the network by name too, and refuses a missing, unknown or contradictory chain (400)', async () => {
      const ip = freshIp();
      const byName = await fromPage(request(app).post('/api/aa/token?network=mainnet'), ip);
      expect(byName.status).toBe(200);
      expect(JSON.parse(Buffer.from(byName.body.token.split('.')[0], 'base64url').toString()).chainId).toBe(MAINNET);
      for (const query of ['', '?chainId=1', '?chainId=44787', '?network=goerli', `?chainId=${MAINNET}&network=testnet`]) {
        const res = await fromPage(request(app).post(`/api/aa/token${query}`), ip);
        expect(res.status, query).toBe(400);
        expect(res.body.error, query).toMatch(query.includes('&') ? /name different chains/ : /^Unsupported or missing chain/);
      }
    });

    it('refuses a page of another origin (403) before anything else', async () => {
      const res = await request(app).post('/api/aa/token?chainId=1').set('Host', HOST).set('Origin', 'https://evil.example');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Cross-origin request blocked' });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('gives one address 30 tokens a minute, then 429 with Retry-After', async () => {
      const ip = freshIp();
      for (let i = 0; i < 30; i++) await tokenFor(app, ip);
      const res = await fromPage(request(app).post(`/api/aa/token?chainId=${TESTNET}`), ip);
      expect(res.status).toBe(429);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatch(/^Too many AA proxy tokens: at most 30 per 60 s from one address; try again in \d+ s$/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // a sliding window: the rest of this minute, then until this minute's 30 weigh one less (1/30 of the next)
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60 + 2);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      // another address still has its budget
      await tokenFor(app, freshIp());
    });
  });

  describe('origin check (403)', () => {
    const refusals: [string, (test: request.Test) => request.Test, string][] = [
      ['no Origin and no Referer', (t) => t.set('Host', HOST), 'Missing origin/referer'],
      ['Origin "null"', (t) => t.set('Host', HOST).set('Origin', 'null'), 'Invalid origin/referer'],
      ['a page of another host', (t) => t.set('Host', HOST).set('Origin', 'https://other.example'), 'Cross-origin request blocked'],
      ['a Referer of another host', (t) => t.set('Host', HOST).set('Referer', 'https://other.example/app'), 'Cross-origin request blocked'],
      ['another port of the host', (t) => t.set('Host', HOST).set('Origin', `${ORIGIN}:8443`), 'Cross-origin request blocked'],
    ];

    it.each(refusals)('refuses %s', async (_name, headers, message) => {
      const token = await tokenFor(app, freshIp());
      for (const route of ['token', 'bundler', 'paymaster']) {
        const res = await headers(request(app).post(`/api/aa/${route}?chainId=${TESTNET}`))
          .set('x-aa-proxy-token', token)
          .expect(record)
          .send(rpc('eth_chainId'));
        expect(res.status, route).toBe(403);
        expect(res.body, route).toEqual({ error: message });
      }
    });

    it('takes the Referer when there is no Origin, and ignores the case of the host and the default port', async () => {
      const ip = freshIp();
      const viaReferer = await request(app)
        .post(`/api/aa/token?chainId=${TESTNET}`)
        .set('Host', 'Wallet.Example:443')
        .set('Referer', `${ORIGIN}/pay?x=1`)
        .set('X-Forwarded-For', ip);
      expect(viaReferer.status).toBe(200);
    });

    it('with AA_PROXY_ALLOWED_ORIGINS: only those origins, whatever the host', async () => {
      const listed = aaApp({ allowedOrigins: ['https://app.example', 'http://localhost:5173'] });
      const ip = freshIp();
      const allowed = await request(listed)
        .post(`/api/aa/token?chainId=${TESTNET}`)
        .set('Origin', 'http://localhost:5173')
        .set('X-Forwarded-For', ip);
      expect(allowed.status).toBe(200);
      const other = await request(listed).post(`/api/aa/token?chainId=${TESTNET}`).set('Host', HOST).set('Origin', ORIGIN).set('X-Forwarded-For', ip);
      expect(other.status).toBe(403);
      expect(other.body).toEqual({ error: 'Origin not allowed' });
    });

    it('with AA_PROXY_ENFORCE_ORIGIN=false: no origin needed, the token still is', async () => {
      const open = aaApp({ enforceOrigin: false });
      const ip = freshIp();
      const issued = await request(open).post(`/api/aa/token?chainId=${TESTNET}`).set('X-Forwarded-For', ip).set('User-Agent', UA);
      expect(issued.status).toBe(200);
      const noToken = await request(open).post(`/api/aa/bundler?chainId=${TESTNET}`).set('X-Forwarded-For', ip).send(rpc('eth_chainId'));
      expect(noToken.status).toBe(401);
      const ok = await request(open)
        .post(`/api/aa/bundler?chainId=${TESTNET}`)
        .set('X-Forwarded-For', ip)
        .set('User-Agent', UA)
        .set('x-aa-proxy-token', issued.body.token)
        .send(rpc('eth_chainId'));
      expect(ok.status).toBe(200);
    });
  });

  describe('token check (401)', () => {
    it('says why a token is refused: missing, malformed, forged, for another chain, address or client', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      const [payload, signature] = token.split('.') as [string, string];
      const forgedPayload = Buffer.from(JSON.stringify({ exp: Date.now() + 60_000, chainId: TESTNET, ip, uaHash: userAgentHash(UA) })).toString(
        'base64url',
      );
      const otherSecret = aaApp({ tokenSecret: new TextEncoder().encode('b'.repeat(64)) });
      const cases: [string, string | undefined, string, string?][] = [
        ['missing', undefined, 'Missing AA proxy token'],
        ['empty', '', 'Missing AA proxy token'],
        ['not two parts', 'abc', 'Malformed AA token'],
        ['three parts', `${token}.x`, 'Malformed AA token'],
        ['payload not JSON', `${Buffer.from('nope').toString('base64url')}.${signature}`, 'Malformed AA token'],
        [
          'payload fields of the wrong type',
          `${Buffer.from('{"exp":"1","chainId":1,"ip":1,"uaHash":1}').toString('base64url')}.${signature}`,
          'Malformed AA token',
        ],
        ['another payload', `${forgedPayload}.${signature}`, 'Invalid AA token signature'],
        ['a changed signature', `${payload}.${signature.slice(0, -2)}AA`, 'Invalid AA token signature'],
        ['a short signature', `${payload}.${signature.slice(0, 10)}`, 'Invalid AA token signature'],
        ['another secret', await tokenFor(otherSecret, ip), 'Invalid AA token signature'],
        ['another chain', await tokenFor(app, ip, MAINNET), 'AA token chain mismatch'],
        ['another address', await tokenFor(app, freshIp()), 'AA token IP mismatch'],
        ['another User-Agent', await tokenFor(app, ip, TESTNET, 'curl/8.0'), 'AA token client mismatch'],
      ];
      for (const [name, value, message] of cases) {
        for (const route of ['bundler', 'paymaster'] as const) {
          const res = await call(app, route, ip, value, rpc('eth_chainId'));
          expect(res.status, `${name} (${route})`).toBe(401);
          expect(res.body, `${name} (${route})`).toEqual({ error: message });
        }
      }
    });

    it('refuses a token after its lifetime (401 AA token expired)', async () => {
      let now = Date.now();
      const clocked = aaApp({ tokenTtlMs: 10_000 }, () => now);
      const ip = freshIp();
      const token = await tokenFor(clocked, ip);
      expect((await call(clocked, 'bundler', ip, token, rpc('eth_chainId'))).status).toBe(200);
      now += 10_000;
      const res = await call(clocked, 'bundler', ip, token, rpc('eth_chainId'));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'AA token expired' });
    });
  });

  describe('JSON-RPC request (400)', () => {
    it('refuses what is not one allowed JSON-RPC 2.0 request, naming the problem', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      const before = good.received.length;
      const cases: ['bundler' | 'paymaster', string, string][] = [
        ['bundler', '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"', 'Invalid JSON body'],
        ['bundler', '', 'Invalid JSON body'],
        ['bundler', `[${rpc('eth_chainId')}]`, 'Batch requests are not supported'],
        ['bundler', '5', 'Invalid JSON-RPC request: the body must be a JSON object'],
        ['bundler', 'null', 'Invalid JSON-RPC request: the body must be a JSON object'],
        ['bundler', rpc('eth_chainId', { jsonrpc: '1.0' }), 'Invalid JSON-RPC request: jsonrpc must be "2.0"'],
        ['bundler', JSON.stringify({ id: 1, method: 'eth_chainId' }), 'Invalid JSON-RPC request: jsonrpc must be "2.0"'],
        ['bundler', rpc('eth_chainId', { method: 7 }), 'Invalid JSON-RPC request: method must be a string'],
        ['bundler', rpc('eth_sendRawTransaction'), `Method not allowed: eth_sendRawTransaction (allowed: ${BUNDLER_METHODS.join(', ')})`],
        ['bundler', rpc('pm_sponsorUserOperation'), `Method not allowed: pm_sponsorUserOperation (allowed: ${BUNDLER_METHODS.join(', ')})`],
        ['paymaster', rpc('eth_sendUserOperation'), `Method not allowed: eth_sendUserOperation (allowed: ${PAYMASTER_METHODS.join(', ')})`],
        ['bundler', rpc('eth_chainId', { params: { a: 1 } }), 'Invalid params: params must be an array'],
        ['bundler', rpc('eth_chainId', { params: 'x' }), 'Invalid params: params must be an array'],
        ['bundler', JSON.stringify({ jsonrpc: '2.0', method: 'eth_chainId' }), 'Invalid JSON-RPC request: id must be a string, a number or null'],
        ['bundler', rpc('eth_chainId', { id: { a: 1 } }), 'Invalid JSON-RPC request: id must be a string, a number or null'],
      ];
      for (const [route, body, message] of cases) {
        const res = await call(app, route, ip, token, body);
        expect(res.status, body).toBe(400);
        expect(res.body, body).toEqual({ error: message });
      }
      expect(good.received.length).toBe(before);
    });

    it('refuses a body that repeats a key (400 naming it): the upstream would get bytes with two readings', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      const before = good.received.length;
      // the review's case: the last "method" is allowed and was checked, the first one reached the upstream too
      const cases: ['bundler' | 'paymaster', string, string][] = [
        [
          'paymaster',
          '{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":[],"method":"eth_chainId"}',
          'Invalid JSON body: duplicate key "method"',
        ],
        [
          'bundler',
          '{"jsonrpc":"2.0","id":1,"\\u006dethod":"eth_sendRawTransaction","method":"eth_chainId"}',
          'Invalid JSON body: duplicate key "method"',
        ],
        ['bundler', '{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_chainId"}', 'Invalid JSON body: duplicate key "id"'],
        [
          'bundler',
          '{"jsonrpc":"2.0","id":1,"method":"eth_estimateUserOperationGas","params":[{"sender":"0x01","sender":"0x02"},"0x00"]}',
          'Invalid JSON body: duplicate key "sender" in params[0]',
        ],
      ];
      for (const [route, body, message] of cases) {
        const res = await call(app, route, ip, token, body);
        expect(res.status, body).toBe(400);
        expect(res.body, body).toEqual({ error: message });
      }
      expect(good.received.length).toBe(before);
    });

    it('forwards every allowed method, params absent or an array, ids of any allowed kind', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      for (const method of BUNDLER_METHODS) expect((await call(app, 'bundler', ip, token, rpc(method))).status, method).toBe(200);
      for (const method of PAYMASTER_METHODS) expect((await call(app, 'paymaster', ip, token, rpc(method))).status, method).toBe(200);
      for (const body of [
        JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'eth_chainId' }),
        JSON.stringify({ jsonrpc: '2.0', id: null, method: 'eth_chainId', params: [] }),
      ]) {
        expect((await call(app, 'bundler', ip, token, body)).status, body).toBe(200);
      }
    });
  });

  describe('forwarding', () => {
    it("sends the caller's body text unchanged, without the token, to the configured URL, and answers the upstream's text byte for byte", async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      // spacing, a number beyond double precision, an escape and key order that a re-serialization would change
      const body =
        '{ "id" : 99,\n "method":"eth_sendUserOperation", "jsonrpc":"2.0",\t"params":[{"sender":"0x01","n":123456789012345678901234567890,"x":1.0,"s":"\\u00e9"}, "0x0000000071727De22E5E9d8BAf0edAc6f37da032"] }';
      const before = good.received.length;
      const res = await call(app, 'bundler', ip, token, body).set('Cookie', 'session=1');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.text).toBe(UPSTREAM_ANSWER);
      expect(good.received.length).toBe(before + 1);
      const sent = good.received.at(-1)!;
      expect(sent.body).toBe(body);
      expect(sent.path).toBe(`/rpc?apikey=${API_KEY}`);
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.headers['content-length']).toBe(String(Buffer.byteLength(body)));
      for (const header of ['x-aa-proxy-token', 'cookie', 'origin', 'referer', 'x-forwarded-for', 'x-sponsoree'])
        expect(sent.headers[header], header).toBeUndefined();

      const paymaster = await call(app, 'paymaster', ip, token, rpc('pm_getPaymasterStubData'));
      expect(paymaster.text).toBe(UPSTREAM_ANSWER);
      expect(good.received.at(-1)!.path).toBe(`/pm?apikey=${API_KEY}`);
    });

    it("tells the service's own paymaster, and no other upstream, who asks: the client address and the token's id, MACed", async () => {
      const sponsoreeKey = randomBytes(32);
      const local = aaApp({
        upstreams: { testnet: { bundlerUrl: `${good.url}/rpc`, paymasterUrl: `${good.url}/local-pm`, sponsoreeKey } },
      });
      const ip = freshIp();
      const token = await tokenFor(local, ip);
      expect((await call(local, 'paymaster', ip, token, rpc('pm_getPaymasterData'))).status).toBe(200);
      const header = good.received.at(-1)!.headers['x-sponsoree'] as string;
      expect(decodeSponsoree(sponsoreeKey, header)).toEqual({
        client: ip,
        token: createHash('sha256').update(token).digest('base64url').slice(0, 22),
      });
      expect(header).not.toContain(token.split('.')[1]);
      expect(decodeSponsoree(randomBytes(32), header), 'another key').toBeUndefined();
      expect((await call(local, 'bundler', ip, token, rpc('eth_chainId'))).status).toBe(200);
      expect(good.received.at(-1)!.headers['x-sponsoree'], 'the bundler is not told').toBeUndefined();
    });

    it('answers 200 whatever 2xx the upstream used', async () => {
      const created = aaApp({ upstreams: { testnet: { bundlerUrl: `${good.url}/created` } } });
      const ip = freshIp();
      const res = await call(created, 'bundler', ip, await tokenFor(created, ip), rpc('eth_chainId'));
      expect(res.status).toBe(200);
      expect(res.text).toBe(UPSTREAM_ANSWER);
    });

    it('504 when the upstream does not answer in time', async () => {
      const slowApp = aaApp({ upstreams: { testnet: { bundlerUrl: `${slow.url}/rpc?apikey=${API_KEY}` } }, upstreamTimeoutMs: 300 });
      const ip = freshIp();
      const token = await tokenFor(slowApp, ip);
      const started = Date.now();
      const res = await call(slowApp, 'bundler', ip, token, rpc('eth_chainId'));
      expect(res.status).toBe(504);
      expect(res.body).toEqual({ error: 'Upstream timeout' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(failures.at(-1)).toMatchObject({ network: 'testnet', route: 'bundler', upstream: slow.url, timedOut: true });
    });

    it('502 when the upstream cuts the connection (before or during its answer), answers 500 or what is not JSON, or cannot be reached', async () => {
      const closed = await upstream(() => {});
      const deadUrl = closed.url;
      closed.server.close();
      for (const [bundlerUrl, reason] of [
        [`${broken.url}/close?apikey=${API_KEY}`, /socket hang up|ECONNRESET/],
        [`${broken.url}/500?apikey=${API_KEY}`, /^HTTP 500$/],
        [`${broken.url}/partial?apikey=${API_KEY}`, /cut off/],
        [`${broken.url}/html?apikey=${API_KEY}`, /JSON/],
        [`${deadUrl}/rpc?apikey=${API_KEY}`, /ECONNREFUSED/],
      ] as const) {
        const brokenApp = aaApp({ upstreams: { testnet: { bundlerUrl } } });
        const ip = freshIp();
        const res = await call(brokenApp, 'bundler', ip, await tokenFor(brokenApp, ip), rpc('eth_chainId'));
        expect(res.status, bundlerUrl).toBe(502);
        expect(res.body, bundlerUrl).toEqual({ error: 'Upstream request failed' });
        expect(failures.at(-1), bundlerUrl).toMatchObject({
          network: 'testnet',
          route: 'bundler',
          upstream: new URL(bundlerUrl).origin,
          timedOut: false,
        });
        expect(failures.at(-1)!.reason, bundlerUrl).toMatch(reason);
      }
    });

    it('503 naming the setting on a network without an upstream, before the token is looked at', async () => {
      const ip = freshIp();
      const bundler = await call(app, 'bundler', ip, undefined, rpc('eth_chainId'), MAINNET);
      expect(bundler.status).toBe(503);
      expect(bundler.body).toEqual({ error: 'Bundler not configured for mainnet: set MAINNET_BUNDLER_URL' });
      const paymaster = await call(app, 'paymaster', ip, undefined, rpc('eth_chainId'), MAINNET);
      expect(paymaster.status).toBe(503);
      expect(paymaster.body).toEqual({ error: 'Paymaster not configured for mainnet: set MAINNET_PAYMASTER_URL' });
      const onlyBundler = aaApp({ upstreams: { testnet: { bundlerUrl: `${good.url}/rpc` } } });
      expect((await call(onlyBundler, 'paymaster', ip, undefined, rpc('eth_chainId'))).body).toEqual({
        error: 'Paymaster not configured for testnet: set TESTNET_PAYMASTER_URL',
      });
      // the chain is checked first: an unknown one is the caller's mistake, not a missing upstream
      expect((await call(app, 'bundler', ip, undefined, rpc('eth_chainId'), '1')).status).toBe(400);
    });

    it('60 calls a minute per address and route, then 429 with Retry-After', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      for (let i = 0; i < 60; i++) expect((await call(app, 'bundler', ip, token, rpc('eth_chainId'))).status).toBe(200);
      const res = await call(app, 'bundler', ip, token, rpc('eth_chainId'));
      expect(res.status).toBe(429);
      expect(res.body.error).toMatch(/^Too many bundler calls: at most 60 per 60 s from one address; try again in \d+ s$/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // the paymaster route has its own budget
      expect((await call(app, 'paymaster', ip, token, rpc('eth_chainId'))).status).toBe(200);
    });

    it('never logs the token or the upstream URL beyond its origin', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      await call(app, 'bundler', ip, token, rpc('eth_chainId'));
      const failing = aaApp({ upstreams: { testnet: { bundlerUrl: `${broken.url}/500?apikey=${API_KEY}` } } });
      expect((await call(failing, 'bundler', ip, await tokenFor(failing, ip), rpc('eth_chainId'))).status).toBe(502);
      const log = logLines.join('');
      expect(log).toContain('"path":"/api/aa/bundler"');
      expect(log).toContain('AA proxy upstream failed');
      expect(log).not.toContain(token.split('.')[1]);
      expect(log).not.toContain(API_KEY);
      expect(log).not.toContain('apikey');
    });
  });

  describe('body size (413)', () => {
    /** A valid request padded with spaces to exactly `bytes` bytes. */
    const padded = (bytes: number): string => {
      const base = rpc('eth_chainId');
      return `${base.slice(0, -1)}${' '.repeat(bytes - base.length)}}`;
    };

    it('forwards 200,000 bytes and refuses 200,001 (413 Request too large)', async () => {
      const ip = freshIp();
      const token = await tokenFor(app, ip);
      const atLimit = await call(app, 'bundler', ip, token, padded(LIMIT));
      expect(atLimit.status).toBe(200);
      expect(good.received.at(-1)!.body).toHaveLength(LIMIT);
      const over = await call(app, 'bundler', ip, token, padded(LIMIT + 1));
      expect(over.status).toBe(413);
      expect(over.body).toEqual({ error: 'Request too large' });
      // counted in bytes: 100,001 two-byte characters are over the limit
      const wide = await call(
        app,
        'bundler',
        ip,
        token,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['é'.repeat(100_001)] }),
      );
      expect(wide.status).toBe(413);
    });

    describe('on a listening server, whatever Content-Length says', () => {
      let server: Server;
      let port: number;
      let ip: string;
      let token: string;

      beforeAll(async () => {
        server = createServer(app);
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        port = (server.address() as AddressInfo).port;
        ip = '127.0.0.1';
        token = await tokenFor(app, ip);
      });

      const headers = (): Record<string, string> => ({
        Host: HOST,
        Origin: ORIGIN,
        'User-Agent': UA,
        'Content-Type': 'application/json',
        'x-aa-proxy-token': token,
      });

      it('chunked without a Content-Length: cut off after 200,000 bytes', async () => {
        const before = good.received.length;
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest(
            { host: '127.0.0.1', port, method: 'POST', path: `/api/aa/bundler?chainId=${TESTNET}`, headers: headers() },
            (res) => {
              let body = '';
              res.on('data', (chunk: Buffer) => {
                body += chunk.toString('utf8');
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on('error', reject);
          const text = padded(LIMIT + 50_000);
          for (let i = 0; i < text.length; i += 10_000) req.write(text.slice(i, i + 10_000));
          req.end();
        });
        expect(answer).toEqual({ status: 413, body: JSON.stringify({ error: 'Request too large' }) });
        expect(good.received.length).toBe(before);
      });

      it('a Content-Length over the limit: refused without reading the body', async () => {
        const answer = await rawExchange({ 'Content-Length': String(LIMIT + 1) }, '{"jsonrpc"');
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(answer).toContain('{"error":"Request too large"}');
      });

      it('a Content-Length lying low: only that many bytes are the body, never more (the rest is refused by the HTTP parser)', async () => {
        const before = good.received.length;
        const answer = await rawExchange({ 'Content-Length': '20' }, padded(LIMIT + 1));
        // the first 20 bytes are the body (not JSON on their own); the bytes after them are no request at all
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).not.toMatch(/HTTP\/1\.1 200 /);
        expect(good.received.length).toBe(before);
      });

      /** Sends the head and `body` over a socket and returns all the server answered until it closed. */
      function rawExchange(extra: Record<string, string>, body: string): Promise<string> {
        return new Promise((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          let answer = '';
          socket.on('data', (chunk) => {
            answer += chunk.toString('utf8');
          });
          socket.on('error', (error: NodeJS.ErrnoException) =>
            error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer) : reject(error),
          );
          socket.on('close', () => resolve(answer));
          const head = Object.entries({ ...headers(), ...extra, Connection: 'close' })
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('');
          socket.write(`POST /api/aa/bundler?chainId=${TESTNET} HTTP/1.1\r\n${head}\r\n`);
          socket.end(body);
          setTimeout(() => socket.destroy(), 5_000).unref();
        });
      }
    });
  });

  describe('token secret', () => {
    it('is generated once into DATA_DIR (mode 0600) and shared by a restart: the second app accepts the first one’s tokens', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'aa-secret-'));
      dataDirs.push(dataDir);
      const logs: string[] = [];
      const first = aaApp({ tokenSecret: loadKeptSecret(PROXY_TOKEN_SECRET, { dataDir, log: (m) => logs.push(m) }) });
      const path = join(dataDir, 'aa-proxy-token-secret');
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(logs).toEqual([
        `generated a token secret for the account-abstraction proxy in ${path}; set AA_PROXY_TOKEN_SECRET to manage it yourself`,
      ]);
      const ip = freshIp();
      const token = await tokenFor(first, ip);

      const restarted = aaApp({ tokenSecret: loadKeptSecret(PROXY_TOKEN_SECRET, { dataDir, log: (m) => logs.push(m) }) });
      expect(logs).toHaveLength(1);
      expect((await call(restarted, 'bundler', ip, token, rpc('eth_chainId'))).status).toBe(200);

      const elsewhere = mkdtempSync(join(tmpdir(), 'aa-secret-'));
      dataDirs.push(elsewhere);
      const stranger = aaApp({ tokenSecret: loadKeptSecret(PROXY_TOKEN_SECRET, { dataDir: elsewhere, log: () => {} }) });
      expect((await call(stranger, 'bundler', ip, token, rpc('eth_chainId'))).body).toEqual({ error: 'Invalid AA token signature' });
      // AA_PROXY_TOKEN_SECRET wins and writes nothing
      const configured = loadKeptSecret(PROXY_TOKEN_SECRET, { value: 'c'.repeat(32), dataDir: join(elsewhere, 'unused'), log: () => {} });
      expect(configured).toEqual(new TextEncoder().encode('c'.repeat(32)));
      expect(() => statSync(join(elsewhere, 'unused'))).toThrow();
    });
  });

  it('is documented: every status of the three routes, the token header, the validators as schemas', async () => {
    const doc = (await request(app).get('/openapi.json')).body as OpenApiDocument;
    const token = doc.paths['/api/aa/token']?.post;
    expect(Object.keys(token?.responses ?? {})).toEqual(['200', '400', '403', '429']);
    expect(token?.parameters?.map((p) => [p.name, p.in, p.required])).toEqual([
      ['chainId', 'query', false],
      ['network', 'query', false],
    ]);
    expect(token?.parameters?.[0]?.schema).toEqual({ type: 'string', enum: ['42220', '11142220'] });
    for (const [route, methods, schema] of [
      ['bundler', BUNDLER_METHODS, 'BundlerRequest'],
      ['paymaster', PAYMASTER_METHODS, 'PaymasterRequest'],
    ] as const) {
      const operation = doc.paths[`/api/aa/${route}`]?.post;
      expect(Object.keys(operation?.responses ?? {}), route).toEqual(['200', '400', '401', '403', '413', '429', '502', '503', '504']);
      expect(operation?.security, route).toEqual([{ aaProxyToken: [] }]);
      expect(operation?.requestBody).toEqual({
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
      });
      const body = doc.components.schemas[schema] as { properties: Record<string, { enum?: string[]; const?: string }>; required: string[] };
      expect(body.properties['method']?.enum).toEqual([...methods]);
      expect(body.properties['jsonrpc']?.const).toBe('2.0');
      expect(body.required.sort()).toEqual(['id', 'jsonrpc', 'method']);
    }
    expect(doc.components.securitySchemes['aaProxyToken']).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-aa-proxy-token' });

    // every answer the tests above got: its status is documented for its route, and its body matches the schema
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'api', components: doc.components });
    const statuses = new Set<string>();
    for (const res of answers) {
      const path = new URL((res as unknown as { req: { path: string } }).req.path, 'http://x').pathname;
      const documented = doc.paths[path]?.post?.responses[String(res.status)];
      expect(documented, `${path} answered ${res.status}`).toBeDefined();
      const ref = documented!.content?.['application/json']?.schema?.['$ref'];
      expect(ref, `${path} ${res.status} is JSON`).toBeDefined();
      const validate = ajv.compile({ $ref: `api${String(ref)}` });
      expect(validate(JSON.parse(res.text)) ? [] : validate.errors, `${path} ${res.status}: ${res.text.slice(0, 200)}`).toEqual([]);
      statuses.add(`${path} ${res.status}`);
    }
    expect([...statuses].sort()).toEqual(
      [
        ...['200', '400', '403', '429'].map((status) => `/api/aa/token ${status}`),
        ...['200', '400', '401', '403', '413', '429', '502', '503', '504'].map((status) => `/api/aa/bundler ${status}`),
        ...['200', '400', '401', '403', '503'].map((status) => `/api/aa/paymaster ${status}`),
      ].sort(),
    );
  });

  it('reads its settings from the environment, with defaults, and names a bad one', () => {
    expect(loadConfig({}).aaProxy).toEqual({
      tokenTtlMs: 90_000,
      enforceOrigin: true,
      allowedOrigins: [],
      tokenLimitPerMinute: 30,
      proxyLimitPerMinute: 60,
      upstreamTimeoutMs: 8_000,
      upstreams: {},
    });
    const bundlerUrl = `https://api.pimlico.io/v2/42220/rpc?apikey=${API_KEY}`;
    expect(
      loadConfig({
        MAINNET_BUNDLER_URL: bundlerUrl,
        TESTNET_PAYMASTER_URL: 'http://127.0.0.1:4337/pm',
        AA_PROXY_ALLOWED_ORIGINS: ' https://App.example/ ,, http://localhost:5173',
        AA_PROXY_ENFORCE_ORIGIN: 'false',
        AA_PROXY_TOKEN_SECRET: 'd'.repeat(32),
      }).aaProxy,
    ).toMatchObject({
      tokenSecret: 'd'.repeat(32),
      enforceOrigin: false,
      allowedOrigins: ['https://app.example', 'http://localhost:5173'],
      upstreams: { mainnet: { bundlerUrl }, testnet: { paymasterUrl: 'http://127.0.0.1:4337/pm' } },
    });
    expect(() =>
      loadConfig({
        AA_PROXY_TOKEN_TTL_MS: '5000',
        AA_PROXY_ALLOWED_ORIGINS: 'https://a.example/path',
        AA_PROXY_TOKEN_SECRET: 'short',
        TESTNET_BUNDLER_URL: 'ftp://x',
      }),
    ).toThrow(
      /AA_PROXY_TOKEN_SECRET[\s\S]*AA_PROXY_TOKEN_TTL_MS: must be at least 10000[\s\S]*https:\/\/a\.example\/path is not an origin[\s\S]*TESTNET_BUNDLER_URL/,
    );
  });
});
