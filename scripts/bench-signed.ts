// npm run bench:signed: requests/s of POST /api/demo/verify with valid signed requests (a fresh signature per
// request, so the replay guard accepts each one; the agent warm in the cache) next to an unsigned trivial POST
// route of a bare express app in the same run, and the RPC round trips the signed requests cost (read from the
// app's own metrics: its log follower is told not to poll during the runs, so every round trip counted is one
// a verify made).
//
// Signatures are made before the runs (signing is the client's work, not the server's), ECDSA agents
// (personal_sign, recovered by the server). Load: autocannon, loopback, CONNECTIONS connections, DURATION seconds
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
import { signedHeaders } from '../src/core/signed-request.js';
import { createApp } from '../src/http/app.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
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
  const headers: Record<string, string>[] = [];
  // one millisecond apart: ECDSA signatures are deterministic, so two requests signed in the same millisecond
  // would carry the same signature, and the second would be a replay
  const now = Date.now();
  for (let i = 0; i < needed; i++) {
    headers.push(await signedHeaders({ type: 'secp256k1', account: agent }, { method: 'POST', url: PATH, body: BODY, timestamp: String(now - i) }));
  }
  console.log(`agent ${agentId}: ${needed} signed requests made in ${Math.round(performance.now() - started)} ms`);
  let next = 0;
  const signedRequest = (request: autocannon.Request) => {
    const own = headers[next++];
    if (!own) throw new Error('out of signed requests: raise the number made up front');
    return { ...request, headers: { ...request.headers, ...own } };
  };

  const run = (target: 'signed' | 'trivial', duration: number) =>
    autocannon({
      url: target === 'signed' ? `${signed.base}${PATH}` : `${trivial.base}/trivial`,
      connections: CONNECTIONS,
      duration,
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json' },
      ...(target === 'signed' ? { requests: [{ setupRequest: signedRequest }] } : {}),
    });
  const rpcCount = async () => (await metrics.rpcRequests.get()).values.reduce((sum, v) => sum + v.value, 0);

  await run('trivial', WARMUP);
  await run('signed', WARMUP);
  const results: Record<'signed' | 'trivial', autocannon.Result[]> = { signed: [], trivial: [] };
  const rpcBefore = await rpcCount();
  for (let round = 0; round < ROUNDS; round++) {
    results.trivial.push(await run('trivial', DURATION / ROUNDS));
    results.signed.push(await run('signed', DURATION / ROUNDS));
  }
  const rpc = (await rpcCount()) - rpcBefore;

  const figures = (rs: autocannon.Result[]) => ({
    rps: rs.reduce((sum, r) => sum + r.requests.total, 0) / rs.reduce((sum, r) => sum + r.duration, 0),
    p99: Math.max(...rs.map((r) => r.latency.p99)),
    non2xx: rs.reduce((sum, r) => sum + r.non2xx, 0),
    statuses: rs.map((r) => JSON.stringify(r.statusCodeStats)).join(' '),
    total: rs.reduce((sum, r) => sum + r.requests.total, 0),
  });
  const s = figures(results.signed);
  const t = figures(results.trivial);
  console.log(
    `${CONNECTIONS} connections, loopback; ${DURATION} s per target in ${ROUNDS} rounds; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
  );
  console.table([
    { target: 'POST /trivial (bare express, unsigned)', 'requests/s': Math.round(t.rps), 'p99 ms': t.p99, 'non-2xx': t.non2xx },
    { target: 'POST /api/demo/verify (signed, warm)', 'requests/s': Math.round(s.rps), 'p99 ms': s.p99, 'non-2xx': s.non2xx, statuses: s.statuses },
  ]);
  console.log(
    [
      `signed verify: ${Math.round((s.rps / t.rps) * 100)}% of the trivial route (goal >= 40%)`,
      `RPC round trips during the signed runs: ${rpc} for ${s.total} verifies (${(rpc / Math.max(1, s.total)).toFixed(4)} per request; goal 0)`,
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
