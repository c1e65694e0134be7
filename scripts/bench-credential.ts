// npm run bench:credential: what the human-backed-agent credential costs. Issuance: the median of one
// AgentCredentialService.issue (a signed request checked as every signed endpoint checks it: signature, the agent warm
// in the cache, the replay claim, the quota; then a status index on the store and the SD-JWT VC signed), one call at
// a time, with the signatures made up front (the agent's work, not the service's); and the median of a whole POST
// over loopback HTTP for scale. Verification: verifyAgentCredential of an Ed25519 agent's presentation (one
// disclosure, its KB-JWT) with the JWKS and status list already fetched (warm caches: no network), one call at a time
// on one core, as verifications per second; the goal is at least 10,000/s, and issuance under 2 ms at the median.
// The store is sqlite, as in the embedded default; the chain a local anvil with the contracts deployed.
// Environment: ISSUES (default 3000), VERIFIES (default 20000), ROUNDS (default 5).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpCache, presentCredential, requestCredential, verifyAgentCredential } from '../src/client/credentials.js';
import { secp256k1Jwk } from '../src/core/agent-credential.js';
import { type RequestSigner, signedHeaders } from '../src/core/signed-request.js';
import { createApp } from '../src/http/app.js';
import { createLogger } from '../src/logger.js';
import { createServices } from '../src/services/index.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { registerEd25519Agent, registerLinkedAgent, startLocalSystem } from './local-system.js';

const ISSUES = Number(process.env['ISSUES'] ?? 3_000);
const VERIFIES = Number(process.env['VERIFIES'] ?? 20_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const AUDIENCE = 'https://verifier.example';
const PATH = '/api/agent/credential?network=testnet';

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const system = await startLocalSystem();
const dir = mkdtempSync(join(tmpdir(), 'bench-credential-'));
const store = new SqliteStore(join(dir, 'store.sqlite'));
let server: Server | undefined;
// the service names its own URL in what it signs: the port is taken first
let handler: (req: Parameters<Server['emit']>[1], res: unknown) => void = () => undefined;
try {
  const { createServer } = await import('node:http');
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const services = createServices({
    chains: system.gateway(),
    store,
    sessionSecret: randomBytes(32),
    publicUrl: base,
    deepLinkScheme: 'selfapp',
    appName: 'bench',
    eventPollIntervalMs: 3_600_000,
  });
  const [{ agent }, ed] = [await registerLinkedAgent(system), await registerEd25519Agent(system)];
  await services.queries.start();
  const app = createApp({ chains: system.gateway(), services, logger: createLogger('silent'), version: 'bench' });
  handler = app as unknown as typeof handler;

  // issuance: signed requests made up front, each a new message (one millisecond apart: ECDSA is deterministic)
  const signer: RequestSigner = { type: 'secp256k1', account: agent };
  const body = JSON.stringify({ audience: AUDIENCE, jwk: secp256k1Jwk(agent.publicKey) });
  const now = Date.now();
  const requests = [];
  for (let i = 0; i < ISSUES + 200; i++) {
    const headers = await signedHeaders(signer, { method: 'POST', url: PATH, body, timestamp: String(now - i) });
    requests.push({ headers, method: 'POST', url: PATH, body });
  }
  const issueMs: number[] = [];
  for (const [i, request] of requests.entries()) {
    const start = process.hrtime.bigint();
    await services.credentials.issue(request, 'testnet');
    if (i >= 200) issueMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const httpMs: number[] = [];
  const edSigner: RequestSigner = { type: 'ed25519', seed: ed.seed };
  for (let i = 0; i < 500; i++) {
    const start = process.hrtime.bigint();
    await requestCredential(edSigner, { registryUrl: base, audience: AUDIENCE });
    httpMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  }

  // verification with warm caches: presentations made up front (the agent's work), verified in turn
  const issued = await requestCredential(edSigner, { registryUrl: base, audience: AUDIENCE });
  const cache = new HttpCache();
  {
    const t = await (await fetch(issued.status.uri)).text();
    console.log(
      JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString()).iat,
      Math.floor(Date.now() / 1000),
      JSON.parse(Buffer.from(issued.credential.split('.')[1]!, 'base64url').toString()).iat,
    );
  }
  const presentations: { presentation: string; nonce: string }[] = [];
  for (let i = 0; i < 1_000; i++) {
    const nonce = randomUUID();
    presentations.push({ nonce, presentation: await presentCredential(issued, edSigner, { audience: AUDIENCE, nonce, disclose: ['age_over_18'] }) });
  }
  const verify = (i: number) => {
    const { presentation, nonce } = presentations[i % presentations.length] as { presentation: string; nonce: string };
    return verifyAgentCredential(presentation, { audience: AUDIENCE, nonce, issuer: base, cache });
  };
  for (let i = 0; i < 2_000; i++) await verify(i);
  const perSecond: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < VERIFIES; i++) await verify(i);
    perSecond.push(VERIFIES / (Number(process.hrtime.bigint() - start) / 1e9));
  }

  const issue = median(issueMs);
  const verifies = median(perSecond);
  console.log(`node ${process.version}, ${cpus()[0]?.model ?? 'cpu'}; sqlite store; local anvil`);
  console.log(
    `issue (service, secp256k1 agent, x-svc-agent)   median ${issue.toFixed(3)} ms  p90 ${[...issueMs].sort((a, b) => a - b)[Math.floor(issueMs.length * 0.9)]?.toFixed(3)} ms  (${ISSUES} calls)`,
  );
  console.log(`issue (POST over loopback HTTP, Ed25519 agent)  median ${median(httpMs).toFixed(3)} ms, signing included (500 calls)`);
  console.log(
    `verify presentation, warm JWKS and status list  ${Math.round(verifies)}/s  (${(1e6 / verifies).toFixed(1)} us each; median of ${ROUNDS} rounds of ${VERIFIES})`,
  );
  console.log(issue < 2 ? `issuance goal met: ${issue.toFixed(3)} ms < 2 ms` : `ISSUANCE GOAL MISSED: ${issue.toFixed(3)} ms >= 2 ms`);
  console.log(
    verifies >= 10_000
      ? `verification goal met: ${Math.round(verifies)}/s >= 10,000/s`
      : `VERIFICATION GOAL MISSED: ${Math.round(verifies)}/s < 10,000/s`,
  );
  await services.queries.stop();
} finally {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await store.close();
  await system.chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
