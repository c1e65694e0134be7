// Attack suite for the signed-request replay finding: one signed message must be usable once, service-wide. Each
// test plays one attack on real local chains, over real HTTP (supertest on the service's app, a listening Express
// app for the SDK's requireAgent), shows it refused, and shows a fresh legitimate request still accepted.
//   - malleated ECDSA forms of a spent signature (v as 0/1; the high-s twin n - s with the other v; both), at the
//     service's REST endpoint and in requireAgent;
//   - another valid signature of a spent message (a fresh nonce): the replay key is what was signed, not the bytes;
//   - Ed25519's S + L;
//   - a message spent at REST replayed through the A2A verify intent (of another instance sharing the store), and
//     the other way round; spent at one demo endpoint, replayed at another (the chat's built-in agent verifies a
//     signed request carried in its question) or over A2A.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/client/index.js';
import { AGENT_HEADERS, type RequestSigner, requestMessage, signedHeaders } from '../../src/core/signed-request.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { legacyDataOf, legacySend } from '../support/a2a.js';
import { registerLinked } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { ed25519PlusL, MALLEATED_FORMS, malleate, resign, withSignature } from '../support/signature-forms.js';
import { registeredSigner } from '../support/signers.js';

const VERIFY = '/api/demo/verify?network=testnet';
const CHAT = '/api/demo/chat?network=testnet';
const CENSUS = '/api/demo/census?network=testnet';
const ORDERS = '/orders';
const NON_CANONICAL = /^Non-canonical signature: .*; personal_sign and viem\/ethers signMessage produce the canonical form$/;

describe('attack suite: signed-request replays (one signed message, one use, service-wide)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'abuse-signatures-'));
  let networks: TestNetworks;
  /** Two instances of the service over one sqlite file: what one spends, the other refuses. */
  let stores: SqliteStore[];
  let one: TestApp;
  let two: TestApp;
  let shop: Server;
  let shopUrl: string;
  const key = generatePrivateKey();
  const ecdsa: RequestSigner = { type: 'secp256k1', account: privateKeyToAccount(key) };
  let ed: RequestSigner;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    const file = join(dir, 'store.sqlite');
    stores = [new SqliteStore(file), new SqliteStore(file)];
    one = testApp(networks.chains, { store: stores[0]! });
    two = testApp(networks.chains, { store: stores[1]! });
    await registerLinked(networks.testnet, { agent: ecdsa.account });
    ed = (await registeredSigner(one.app, networks, { mode: 'ed25519' })).signer;

    // another service that accepts only agents backed by a human, with the SDK's middleware
    const app = express();
    const guard = requireAgent({ network: 'testnet', rpcUrl: networks.testnet.rpcUrl, registry: networks.testnet.deployment.contracts.registry });
    app.post(ORDERS, express.text({ type: '*/*' }), guard, (req, res) => {
      res.json({ agentAddress: req.agent?.agentAddress });
    });
    shop = createServer(app);
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
    for (const t of [one, two]) t.services.watcher.stopAll();
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A distinct body per call: two requests signed in one millisecond would otherwise be one message. */
  const bodyOf = () => JSON.stringify({ nonce: crypto.randomUUID() });
  const sign = (signer: RequestSigner, url: string, body: string) => signedHeaders(signer, { method: 'POST', url, body });

  const postVerify = (headers: Record<string, string>, body: string, t: TestApp = one) =>
    request(t.app).post(VERIFY).set(headers).set('content-type', 'application/json').send(body);
  const postOrder = (headers: Record<string, string>, body: string) =>
    fetch(`${shopUrl}${ORDERS}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  /** The A2A verify intent (v0.3 message/send) checking a signed request: its answer's data part. */
  const a2aVerify = async (headers: Record<string, string>, url: string, body: string, t: TestApp = one) => {
    const res = await request(t.app)
      .post('/api/a2a')
      .send(legacySend({ intent: 'verify', network: 'testnet', signedRequest: { headers, method: 'POST', url, body } }));
    expect(res.status).toBe(200);
    return legacyDataOf(res.body.result);
  };
  /** The service's REST endpoint and the SDK's middleware: where each one is posted, and the answer's status. */
  const verifiers = () =>
    [
      [VERIFY, async (headers: Record<string, string>, body: string) => (await postVerify(headers, body)).status],
      [ORDERS, async (headers: Record<string, string>, body: string) => (await postOrder(headers, body)).status],
    ] as const;
  /** An anonymous chat whose question is the verify intent with a signed request: the built-in agent's data. */
  const chatVerify = async (headers: Record<string, string>, url: string, body: string) => {
    const query = JSON.stringify({ intent: 'verify', network: 'testnet', signedRequest: { headers, method: 'POST', url, body } });
    const res = await request(one.app)
      .post(CHAT)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ query, session_id: 'abuse' }));
    expect(res.status).toBe(200);
    return res.body.data as Record<string, unknown>;
  };

  it.each(MALLEATED_FORMS)('REST: the %s form of a spent ECDSA signature is refused (403, says what to send)', async (form) => {
    const body = bodyOf();
    const headers = await sign(ecdsa, VERIFY, body);
    expect((await postVerify(headers, body)).status).toBe(200);

    const forged = await postVerify(withSignature(headers, malleate(headers[AGENT_HEADERS.signature] as Hex, form)), body);
    expect(forged.status).toBe(403);
    expect(forged.body.error).toMatch(NON_CANONICAL);

    const fresh = bodyOf();
    expect((await postVerify(await sign(ecdsa, VERIFY, fresh), fresh)).body).toMatchObject({ valid: true, agentAddress: ecdsa.account.address });
  });

  it.each(MALLEATED_FORMS)('requireAgent: the %s form of a spent ECDSA signature is refused (403, says what to send)', async (form) => {
    const body = bodyOf();
    const headers = await sign(ecdsa, ORDERS, body);
    expect((await postOrder(headers, body)).status).toBe(200);

    const forged = await postOrder(withSignature(headers, malleate(headers[AGENT_HEADERS.signature] as Hex, form)), body);
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: string }).error).toMatch(NON_CANONICAL);

    const fresh = bodyOf();
    const ok = await postOrder(await sign(ecdsa, ORDERS, fresh), fresh);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ agentAddress: ecdsa.account.address });
  });

  it('another valid signature of a spent message (a fresh nonce) is a replay (409), at REST and in requireAgent', async () => {
    for (const [url, post] of verifiers()) {
      const body = bodyOf();
      const headers = await sign(ecdsa, url, body);
      expect(await post(headers, body), url).toBe(200);
      const message = requestMessage({ timestamp: headers[AGENT_HEADERS.timestamp]!, method: 'POST', url, body });
      const other = resign(key, message);
      expect(other).not.toBe(headers[AGENT_HEADERS.signature]);
      expect(await post(withSignature(headers, other), body), url).toBe(409);

      const fresh = bodyOf();
      expect(await post(await sign(ecdsa, url, fresh), fresh), url).toBe(200);
    }
  });

  it('Ed25519: S + L of a spent signature is refused (403) at REST and in requireAgent', async () => {
    for (const [url, post] of verifiers()) {
      const body = bodyOf();
      const headers = await sign(ed, url, body);
      expect(await post(headers, body), url).toBe(200);
      expect(await post(withSignature(headers, ed25519PlusL(headers[AGENT_HEADERS.signature] as Hex)), body), url).toBe(403);

      const fresh = bodyOf();
      expect(await post(await sign(ed, url, fresh), fresh), url).toBe(200);
    }
  });

  it.each([
    ['ECDSA', () => ecdsa],
    ['Ed25519', () => ed],
  ])('REST -> A2A: a %s message spent at POST /api/demo/verify is refused by the A2A verify intent of another instance', async (_, signer) => {
    const body = bodyOf();
    const headers = await sign(signer(), VERIFY, body);
    expect((await postVerify(headers, body)).status).toBe(200);
    expect(await a2aVerify(headers, VERIFY, body, two)).toMatchObject({ error: 'Replay detected', status: 409 });

    const fresh = bodyOf();
    expect(await a2aVerify(await sign(signer(), VERIFY, fresh), VERIFY, fresh, two)).toMatchObject({ valid: true });
  });

  it('A2A -> REST: a message the A2A verify intent accepted is refused at POST /api/demo/verify (409)', async () => {
    const body = bodyOf();
    const headers = await sign(ecdsa, VERIFY, body);
    expect(await a2aVerify(headers, VERIFY, body)).toMatchObject({ valid: true, agentAddress: ecdsa.account.address });
    const replay = await postVerify(headers, body, two);
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual({ error: 'Replay detected' });

    const fresh = bodyOf();
    expect((await postVerify(await sign(ecdsa, VERIFY, fresh), fresh, two)).status).toBe(200);
  });

  it('demo -> demo: a message spent at /api/demo/verify is refused when the chat carries it to its verify intent', async () => {
    const body = bodyOf();
    const headers = await sign(ecdsa, VERIFY, body);
    expect((await postVerify(headers, body)).status).toBe(200);
    expect(await chatVerify(headers, VERIFY, body)).toEqual({ error: 'Replay detected', status: 409 });
    // sent straight to another demo endpoint, the headers name no agent: the path is signed
    expect((await request(one.app).post(CENSUS).set(headers).set('content-type', 'application/json').send(body)).status).toBe(403);

    const fresh = bodyOf();
    expect(await chatVerify(await sign(ecdsa, VERIFY, fresh), VERIFY, fresh)).toMatchObject({ valid: true, agentAddress: ecdsa.account.address });
  });

  it.each([
    ['/api/demo/census', CENSUS],
    ['/api/demo/chat', CHAT],
  ])('demo -> A2A: a message spent at %s is refused by the A2A verify intent', async (_, url) => {
    const bodyFor = () => (url === CHAT ? JSON.stringify({ query: 'help', session_id: crypto.randomUUID() }) : bodyOf());
    const body = bodyFor();
    const headers = await sign(ecdsa, url, body);
    expect((await request(one.app).post(url).set(headers).set('content-type', 'application/json').send(body)).status).toBe(200);
    expect(await a2aVerify(headers, url, body)).toMatchObject({ error: 'Replay detected', status: 409 });

    const fresh = bodyFor();
    const freshHeaders = await sign(ecdsa, url, fresh);
    expect(await a2aVerify(freshHeaders, url, fresh)).toMatchObject({ valid: true });
    // and the message the A2A intent spent is now refused at the endpoint it names
    expect((await request(one.app).post(url).set(freshHeaders).set('content-type', 'application/json').send(fresh)).status).toBe(409);
  });
});
