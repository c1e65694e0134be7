// npm run bench:registration: latency of POST /api/agent/register and GET /api/agent/register/status over
// real HTTP on a local chain, and the delay between the block that registers the agent and the first
// status answer `completed`. The caller polls; the identity app does not call back, so the delay is the
// service's own chain check, not a push.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../src/http/app.js';
import { proofRequestFromDeepLink, prove } from '../src/identity-app/index.js';
import { createLogger } from '../src/logger.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { startLocalSystem } from './local-system.js';

const RUNS = Number(process.env['RUNS'] ?? 40);
const dir = mkdtempSync(join(tmpdir(), 'bench-registration-'));
const system = await startLocalSystem();
const { chain, client, attester } = system;
const store = new SqliteStore(join(dir, 'store.sqlite'));

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const round = (ms: number): number => Math.round(ms * 100) / 100;

try {
  const chains = system.gateway();
  const secret = randomBytes(32);
  const services = createServices({
    chains,
    store,
    sessionSecret: secret,
    publicUrl: 'http://127.0.0.1',
    deepLinkScheme: 'selfapp',
    appName: 'bench',
  });
  const app = createApp({ chains, services, logger: createLogger('silent'), version: 'bench' });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const relayer = await system.newWallet();

  const register: number[] = [];
  const status: number[] = [];
  const delay: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const human = privateKeyToAccount(generatePrivateKey()).address;
    let started = performance.now();
    const res = await fetch(`${base}/api/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.0.${i}.1` },
      body: JSON.stringify({ mode: 'linked', network: 'testnet', humanAddress: human }),
    });
    const session = (await res.json()) as { sessionToken: string; deepLink: string };
    register.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`register answered ${res.status}`);

    const result = await prove({ client, wallet: relayer, attester, request: proofRequestFromDeepLink(session.deepLink) });
    if (result.status !== 'submitted') throw new Error(result.reason);
    const mined = performance.now(); // prove() returns once the receipt of the registering block is in
    for (;;) {
      started = performance.now();
      const answer = (await (await fetch(`${base}/api/agent/register/status?token=${session.sessionToken}`)).json()) as { stage: string };
      status.push(performance.now() - started);
      if (answer.stage === 'completed') break;
    }
    delay.push(performance.now() - mined);
  }
  server.close();
  console.log(
    JSON.stringify({
      runs: RUNS,
      registerMedianMs: round(median(register)),
      statusMedianMs: round(median(status)),
      blockToCompletedMedianMs: round(median(delay)),
      blockToCompletedMaxMs: round(Math.max(...delay)),
    }),
  );
} finally {
  await store.close();
  await chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
