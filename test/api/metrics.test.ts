// GET /metrics: request counters and latency by route template (never a raw URL: no ids, no tokens), and
// RPC round trips per network, compared with what a counting proxy in front of each chain really saw.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway, createNetworkGateway, type NetworkGateway } from '../../src/chain/gateway.js';
import type { NetworkName } from '../../src/core/networks.js';
import { Metrics } from '../../src/metrics.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { testApp } from '../support/app.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

/** An HTTP proxy to an RPC that counts the requests it forwards, and the JSON-RPC calls in them by method. */
async function countingProxy(
  target: string,
): Promise<{ url: string; count: () => number; methods: Map<string, number>; close: () => Promise<void> }> {
  let count = 0;
  const methods = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    count += 1;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const call of Array.isArray(body) ? body : [body]) {
        const { method } = call as { method: string };
        methods.set(method, (methods.get(method) ?? 0) + 1);
      }
      fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => count,
    methods,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The value of one sample of the exposition text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    const present = labelText.split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

/** All values of one label in the samples of one metric. */
function labelValues(text: string, name: string, label: string): string[] {
  const values = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = new RegExp(`[{,]${label}="([^"]*)"`).exec(line);
    if (match) values.add(match[1] as string);
  }
  return [...values];
}

describe('GET /metrics', () => {
  let mainnet: TestSystem;
  let testnet: TestSystem;
  const proxies: Awaited<ReturnType<typeof countingProxy>>[] = [];
  let app: Express;
  let metrics: Metrics;

  /** The network's gateway, its RPC behind a counting proxy and every round trip counted in `metrics`. */
  async function countedGateway(
    system: TestSystem,
    network: NetworkName,
  ): Promise<{ gateway: NetworkGateway; proxy: Awaited<ReturnType<typeof countingProxy>> }> {
    const proxy = await countingProxy(system.rpcUrl);
    proxies.push(proxy);
    const gateway = createNetworkGateway(network, {
      clientOptions: { rpcUrl: proxy.url, ...LOCAL, onRequest: (methods) => metrics.rpcRequest(network, methods) },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    });
    return { gateway, proxy };
  }

  let rpc: Record<NetworkName, Awaited<ReturnType<typeof countingProxy>>>;

  beforeAll(async () => {
    [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet')]);
    metrics = new Metrics();
    const [m, t] = await Promise.all([countedGateway(mainnet, 'mainnet'), countedGateway(testnet, 'testnet')]);
    rpc = { mainnet: m.proxy, testnet: t.proxy };
    ({ app } = testApp(new ChainGateway({ mainnet: m.gateway, testnet: t.gateway }), { metrics }));
  });

  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
  });

  it('answers in the Prometheus text format', async () => {
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(metrics.registry.contentType);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'rpc_requests_total',
      'rpc_round_trips_total',
      'cache_lookups_total',
    ]) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
  });

  it('counts requests and latency per route template and status, without ids or tokens in the labels', async () => {
    const token = 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..SECRET-TOKEN-VALUE';
    await request(app).get('/api/health');
    await request(app).get('/api/health');
    await request(app).get('/api/agent/register/status').query({ token });
    await request(app).get('/api/agent/register/status').set('Authorization', `Bearer ${token}`);
    await request(app).get('/api/agent/info/11142220/424242');
    await request(app).get('/api/agent/agents/11142220/0x00000000000000000000000000000000000a11ce');
    await request(app).get('/docs/assets/swagger-ui.css');
    await request(app).options('/api/agent/verify/11142220/424242').set('Origin', 'https://x.example');

    const text = (await request(app).get('/metrics')).text;
    expect(sample(text, 'http_requests_total', { route: '/api/health', method: 'GET', status: '200' })).toBe(2);
    expect(sample(text, 'http_requests_total', { route: '/api/agent/register/status', method: 'GET', status: '401' })).toBe(2);
    expect(sample(text, 'http_requests_total', { route: '/docs/assets/:file', method: 'GET', status: '200' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'OPTIONS', status: '204' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/api/health', method: 'GET', status: '200' })).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_bucket', { route: '/api/health', method: 'GET', status: '200', le: '+Inf' })).toBe(2);

    expect(text).not.toContain('SECRET-TOKEN-VALUE');
    expect(text).not.toContain('424242');
    expect(text.toLowerCase()).not.toContain('a11ce');
    // every route label is a route template or "unmatched"
    for (const route of labelValues(text, 'http_requests_total', 'route')) {
      expect(route === 'unmatched' || /^\/[\w./:-]*$/.test(route), route).toBe(true);
      expect(route, route).not.toMatch(/\/\d+(\/|$)/);
    }
  });

  it('counts every HTTP round trip to a chain RPC, per network', async () => {
    const before = (await request(app).get('/metrics')).text;
    const proxied = { mainnet: rpc.mainnet.count(), testnet: rpc.testnet.count() };
    await request(app).get('/api/health');
    await request(app).get('/api/health');
    // a registration session reads the testnet registry
    await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
    const after = (await request(app).get('/metrics')).text;

    for (const network of ['mainnet', 'testnet'] as const) {
      const counted = sample(after, 'rpc_round_trips_total', { network }) - sample(before, 'rpc_round_trips_total', { network });
      const seen = rpc[network].count() - proxied[network];
      expect(counted, network).toBe(seen);
      expect(counted, network).toBeGreaterThanOrEqual(2); // at least one per health check
    }
    // and in total, since the start, exactly as many as the proxies forwarded
    expect(sample(after, 'rpc_round_trips_total', { network: 'mainnet' })).toBe(rpc.mainnet.count());
    expect(sample(after, 'rpc_round_trips_total', { network: 'testnet' })).toBe(rpc.testnet.count());
    // each call by its method, exactly as the proxies saw them in the bodies they forwarded
    for (const network of ['mainnet', 'testnet'] as const) {
      const methods = labelValues(after, 'rpc_requests_total', 'method').filter(
        (method) => sample(after, 'rpc_requests_total', { network, method }) > 0,
      );
      expect(methods.length, network).toBeGreaterThan(0);
      for (const method of new Set([...methods, ...rpc[network].methods.keys()])) {
        expect(sample(after, 'rpc_requests_total', { network, method }), `${network} ${method}`).toBe(rpc[network].methods.get(method) ?? 0);
      }
    }
  });

  it("shows the store's size on disk and its live keys at each scrape", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-store-'));
    const store = new SqliteStore(join(dir, 'store.sqlite'));
    try {
      const own = new Metrics();
      own.observeStore(store);
      const before = await own.registry.metrics();
      await store.set('k', 'x'.repeat(100_000));
      const after = await own.registry.metrics();
      expect(sample(before, 'store_keys', { backend: 'sqlite' })).toBe(0);
      expect(sample(after, 'store_keys', { backend: 'sqlite' })).toBe(1);
      // the file and its write-ahead log, where the new pages are until a checkpoint
      expect(sample(after, 'store_size_bytes', { backend: 'sqlite' }) - sample(before, 'store_size_bytes', { backend: 'sqlite' })).toBeGreaterThan(
        100_000,
      );
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
