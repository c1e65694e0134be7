// The client SDK against a real listening service on local chains: an agent registers through RegistryClient
// (the human approves in the mock identity app), exports its key, and signs requests with signingFetch that
// POST /api/demo/verify accepts, for ECDSA and Ed25519 keys. The package subpath `./client` loads in plain Node
// (no TypeScript loader) and signs exactly as the service's own code.
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient, type RequestSigner, signerFromExport, signingFetch, verifySignedResponse } from '../../src/client/index.js';
import { AGENT_HEADERS, signedHeaders } from '../../src/core/signed-request.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('client SDK', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    q = await queryTestApp(networks, { publicUrl: base });
    server.on('request', q.app);
  });

  afterAll(async () => {
    await q.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Registers through the client, the human approving in the mock identity app; the agent's signer. */
  async function registerWithClient(mode: 'wallet-free' | 'ed25519'): Promise<RequestSigner> {
    const registry = new RegistryClient(base);
    const session = await registry.openRegistration({ mode, network: 'testnet' });
    await approveDeepLink(q.app, networks, session.deepLink);
    const done = await registry.waitForRegistration(session.sessionToken, { timeoutMs: 10_000, pollIntervalMs: 50 });
    expect(done.stage).toBe('completed');
    const key = await registry.exportKey(done.sessionToken);
    expect(key.keyType).toBe(mode === 'ed25519' ? 'ed25519' : 'secp256k1');
    return signerFromExport(key);
  }

  it.each(['wallet-free', 'ed25519'] as const)('a %s agent registered through the client signs requests the service accepts', async (mode) => {
    const signer = await registerWithClient(mode);
    await q.services.queries.syncNow();
    const agentFetch = signingFetch(signer);
    const res = await agentFetch(`${base}/api/demo/verify?network=testnet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'registry' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ valid: true, keyType: mode === 'ed25519' ? 'ed25519' : 'secp256k1' });
  });

  it('the client names what the service refused', async () => {
    await expect(new RegistryClient(base).openRegistration({ mode: 'linked', network: 'testnet' })).rejects.toMatchObject({
      name: 'RegistryError',
      status: 400,
      message: expect.stringMatching(/humanAddress/),
    });
  });

  it('verifySignedResponse names the signer of a response, and refuses another or a changed body', async () => {
    const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    const body = '{"verified":true}';
    const headers = new Headers(await signedHeaders({ type: 'secp256k1', account }, { method: 'POST', url: '/api/demo/agent-to-agent', body }));
    const content = { method: 'POST', url: `${base}/api/demo/agent-to-agent`, body };
    expect((await verifySignedResponse({ headers }, content, { expected: account.address })).agentAddress).toBe(account.address);
    await expect(verifySignedResponse({ headers }, content, { expected: privateKeyToAccount(`0x${'11'.repeat(32)}`).address })).rejects.toThrow(
      /not by/,
    );
    await expect(verifySignedResponse({ headers }, { ...content, body: '{"verified":false}' }, { expected: account.address })).rejects.toThrow();
    headers.delete(AGENT_HEADERS.signature);
    await expect(verifySignedResponse({ headers }, content)).rejects.toThrow(/not signed/);
  });

  it('the package subpath ./client loads in plain Node and signs the shared vector', () => {
    // the build npm install and npm start make (here a no-op: the test setup has just made it)
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'pipe' });
    const script = `
      import { signRequest, AGENT_HEADERS } from 'agent-identity-registry/client';
      import { privateKeyToAccount } from 'viem/accounts';
      const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
      const headers = await signRequest({ type: 'secp256k1', account }, { method: 'GET', url: 'https://api.example.com/data', timestamp: '1700000000000' });
      process.stdout.write(headers[AGENT_HEADERS.signature]);`;
    const signature = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    // request-signing-vectors.json, first vector
    expect(signature).toBe(
      '0x90dcf2554522fd2803382796474a3e0b2966f9352ad3bb8d115922b7af743e1113ef900c78a7d20d0127b4488e92b0bdf90acdef0bc0b0b1fe9d426d7909b76d1b',
    );
  });
});
