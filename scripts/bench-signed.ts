// npm run bench:signed: requests/s of POST /api/demo/verify with valid signed requests (a fresh signature per
// request, so the replay guard accepts each one; the agent warm in the cache), signed with the x-svc-agent-* headers
// and with RFC 9421 (ERC-8128) by the same agent, next to an unsigned trivial POST route of a bare express app in the
// same run; the RPC round trips the signed requests cost (read from the app's own metrics: its log follower is told
// not to poll during the runs, so every round trip counted is one a verify made); and what one human-level policy
// check costs (every policy set, the subject passing them all).
//
// Signatures are made before the runs (signing is the client's work, not the server's), by a secp256k1 agent
// (personal_sign or EIP-191 over the signature base, recovered by the server). Load: autocannon, loopback, CONNECTIONS connections, DURATION seconds
// per target in ROUNDS interleaved rounds after a warm-up; the store is sqlite, as in the embedded default.
// Environment: DURATION (default 10), ROUNDS (default 2), CONNECTIONS (default 10).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import express, { type Express } from 'express';
import { signRfc9421 } from '../src/core/rfc9421-sign.js';
import { signedHeaders } from '../src/core/signed-request.js';
import { createApp } from '../src/http/app.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { policyCheckNs } from './bench-policy.js';
import { registerLinkedAgent, startLocalSystem } from './local-system.js';

const DURATION = Number(process.env['DURATION'] ?? 10);
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const CONNECTIONS = Number(process.env['CONNECTIONS'] ?? 10);
const WARMUP = 2;
const PATH = '/api/demo/verify?network=testnet';
const BODY = '{"hello":"registry"}';

const listen = async (app: Express): Promise<{ server: Server; base: string }> => {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const system = await startLocalSystem();
const dir = mkdtempSync(join(tmpdir(), 'bench-signed-'));
const store = new SqliteStore(join(dir, 'store.sqlite'));
const servers: Server[] = [];
const metrics = new Metrics();
const services = createServices({
  chains: system.gateway(() => metrics.rpcRequest('testnet')),
  store,
  sessionSecret: randomBytes(32),
  publicUrl: 'http://127.0.0.1',
  deepLinkScheme: 'selfapp',
  appName: 'bench',
  metrics,
  // caught up once at start, then silent: the runs' round trips are the verifies' own
  eventPollIntervalMs: 3_600_000,
});
try {
  const { agent, agentId } = await registerLinkedAgent(system);
  await services.queries.start();
  const app = createApp({ chains: system.gateway(), services, logger: createLogger('silent'), version: 'bench', metrics });
  const signed = await listen(app);
  const reference = express();
  reference.post('/trivial', express.text({ type: () => true }), (_req, res) => {
    res.json({ valid: true });
  });
  const trivial = await listen(reference);
  servers.push(signed.server, trivial.server);

  // enough fresh signatures for the fastest rate one connection set could reach, made up front
  const needed = 3_000 * (DURATION + WARMUP + 1);
  const started = performance.now();
  const signer = { type: 'secp256k1', account: agent } as const;
  const made: Record<'xsvc' | 'rfc9421', Record<string, string>[]> = { xsvc: [], rfc9421: [] };
  // one millisecond apart: ECDSA signatures are deterministic, so two requests signed in the same millisecond
  // would carry the same signature, and the second would be a replay (RFC 9421 requests differ by their nonce)
  const now = Date.now();
  for (let i = 0; i < needed; i++) {
    made.xsvc.push(await signedHeaders(signer, { method: 'POST', url: PATH, body: BODY, timestamp: String(now - i) }));
    made.rfc9421.push(await signRfc9421(signer, { method: 'POST', url: `${signed.base}${PATH}`, body: BODY }, { chainId: 11142220 }));
  }
  console.log(`agent ${agentId}: ${needed} requests signed each way in ${Math.round(performance.now() - started)} ms`);
  const next = { xsvc: 0, rfc9421: 0 };
  const signedBy = (scheme: 'xsvc' | 'rfc9421') => (request: autocannon.Request) => {
    const own = made[scheme][next[scheme]++];
    if (!own) throw new Error('out of signed requests: raise the number made up front');
    return { ...request, headers: { ...request.headers, ...own } };
  };

  type Target = 'trivial' | 'xsvc' | 'rfc9421';
  const run = (target: Target, duration: number) =>
    autocannon({
      url: target === 'trivial' ? `${trivial.base}/trivial` : `${signed.base}${PATH}`,
      connections: CONNECTIONS,
      duration,
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json' },
      ...(target === 'trivial' ? {} : { requests: [{ setupRequest: signedBy(target) }] }),
    });
  const rpcCount = async () => (await metrics.rpcRequests.get()).values.reduce((sum, v) => sum + v.value, 0);

  await run('trivial', WARMUP);
  await run('xsvc', WARMUP);
  await run('rfc9421', WARMUP);
  const results: Record<Target, autocannon.Result[]> = { trivial: [], xsvc: [], rfc9421: [] };
  const rpcBefore = await rpcCount();
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of ['trivial', 'xsvc', 'rfc9421'] as const) results[target].push(await run(target, DURATION / ROUNDS));
  }
  const rpc = (await rpcCount()) - rpcBefore;

  const figures = (rs: autocannon.Result[]) => ({
    rps: rs.reduce((sum, r) => sum + r.requests.total, 0) / rs.reduce((sum, r) => sum + r.duration, 0),
    p99: Math.max(...rs.map((r) => r.latency.p99)),
    non2xx: rs.reduce((sum, r) => sum + r.non2xx, 0),
    statuses: rs.map((r) => JSON.stringify(r.statusCodeStats)).join(' '),
    total: rs.reduce((sum, r) => sum + r.requests.total, 0),
  });
  const t = figures(results.trivial);
  const x = figures(results.xsvc);
  const r = figures(results.rfc9421);
  const policyNs = policyCheckNs();
  console.log(
    `${CONNECTIONS} connections, loopback; ${DURATION} s per target in ${ROUNDS} rounds; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
  );
  console.table([
    { target: 'POST /trivial (bare express, unsigned)', 'requests/s': Math.round(t.rps), 'p99 ms': t.p99, 'non-2xx': t.non2xx },
    { target: 'POST /api/demo/verify, x-svc-agent-*', 'requests/s': Math.round(x.rps), 'p99 ms': x.p99, 'non-2xx': x.non2xx, statuses: x.statuses },
    {
      target: 'POST /api/demo/verify, RFC 9421 (ERC-8128)',
      'requests/s': Math.round(r.rps),
      'p99 ms': r.p99,
      'non-2xx': r.non2xx,
      statuses: r.statuses,
    },
  ]);
  console.log(
    [
      `x-svc-agent verify: ${Math.round((x.rps / t.rps) * 100)}% of the trivial route (goal >= 40%)`,
      `RFC 9421 verify costs ${(x.rps / r.rps).toFixed(2)}x an x-svc-agent verify per request (goal <= 1.2x)`,
      `RPC round trips during the signed runs: ${rpc} for ${x.total + r.total} verifies (${(rpc / Math.max(1, x.total + r.total)).toFixed(4)} per request; goal 0)`,
      `one policy check (every policy set): ${policyNs.toFixed(0)} ns (goal < 5 µs)`,
    ].join('\n'),
  );
} finally {
  await services.queries.stop();
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await store.close();
  await system.chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
