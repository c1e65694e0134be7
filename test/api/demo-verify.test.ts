// POST /api/demo/verify on real local chains: ECDSA and Ed25519 agents registered through the mock identity app
// sign requests; the service names the agent, refuses what it must (401 without headers, 403 for a tampered
// body, another path, an old timestamp, an unknown or deregistered agent), refuses a replay (409) also after a
// restart over the same store, and a warm verify costs no RPC round trip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { AGENT_HEADERS, type RequestSigner, signedHeaders } from '../../src/core/signed-request.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { newAccount, registerLinked } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { deregisterByProof, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { registeredSigner } from '../support/signers.js';

const PATH = '/api/demo/verify?network=testnet';
const BODY = '{"hello":"registry"}';

describe('POST /api/demo/verify', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-verify-'));
  let networks: TestNetworks;
  let store: SqliteStore;
  let q: QueryTestApp;

  const send = async (
    signer: RequestSigner,
    options: { signedPath?: string; path?: string; body?: string; signedBody?: string; timestamp?: string } = {},
  ) => {
    const path = options.path ?? PATH;
    const body = options.body ?? BODY;
    const headers = await signedHeaders(signer, {
      method: 'POST',
      url: options.signedPath ?? path,
      body: options.signedBody ?? body,
      ...(options.timestamp ? { timestamp: options.timestamp } : {}),
    });
    return { headers, res: await request(q.app).post(path).set(headers).set('content-type', 'application/json').send(body) };
  };

  let ecdsa: RequestSigner;
  let ed: RequestSigner;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    store = new SqliteStore(join(dir, 'store.sqlite'));
    // the log follower polls only when told to (syncNow), so RPC round trips can be counted exactly
    q = await queryTestApp(networks, { store, eventPollIntervalMs: 3_600_000 });
    ecdsa = (await registeredSigner(q.app, networks, { mode: 'wallet-free' })).signer;
    ed = (await registeredSigner(q.app, networks, { mode: 'ed25519' })).signer;
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names an ECDSA agent, its human agent count and credentials, and counts verifications', async () => {
    const first = await send(ecdsa);
    expect(first.res.status).toBe(200);
    expect(first.res.body).toMatchObject({
      valid: true,
      network: 'testnet',
      keyType: 'secp256k1',
      agentAddress: first.headers[AGENT_HEADERS.address],
      agentId: expect.stringMatching(/^[1-9]\d*$/),
      agentCount: '1',
      credentials: { olderThan: 0, ofac: [false, false, false], nationality: '' },
    });
    const second = await send(ecdsa);
    expect(second.res.body.verificationCount).toBe(first.res.body.verificationCount + 1);
  });

  it('verifies an agent as soon as its session completes, before the log follower has seen the registration', async () => {
    // the follower polls only on syncNow: its last block is before this registration
    const { signer } = await registeredSigner(q.app, networks, { mode: 'wallet-free' });
    const { res } = await send(signer);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.valid).toBe(true);
  });

  it('names an Ed25519 agent by its raw key', async () => {
    const { headers, res } = await send(ed);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      valid: true,
      keyType: 'ed25519',
      agentKey: headers[AGENT_HEADERS.key],
      agentAddress: headers[AGENT_HEADERS.address],
    });
  });

  it('401 without the signed headers', async () => {
    const res = await request(q.app).post(PATH).set('content-type', 'application/json').send(BODY);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing agent authentication headers' });
  });

  it('403 for a tampered body, another path, an old timestamp, and an agent that is not registered', async () => {
    for (const signer of [ecdsa, ed]) {
      // the request, not the registration, is named as the cause
      for (const changed of [{ signedBody: '{"hello":"someone else"}' }, { signedPath: '/api/demo/census' }]) {
        const { res } = await send(signer, changed);
        expect(res.status).toBe(403);
        expect(res.body.error).toMatch(
          /(?:signature of this request|Invalid Ed25519 signature): it does not sign this method, path and query, body and timestamp/,
        );
      }
      const old = await send(signer, { timestamp: String(Date.now() - 6 * 60_000) });
      expect(old.res.status).toBe(403);
      expect(old.res.body.error).toMatch(/^Timestamp expired or invalid/);
      const iso = await send(signer, { timestamp: new Date().toISOString() });
      expect(iso.res.status).toBe(403);
    }
    const stranger = await send({ type: 'secp256k1', account: newAccount() });
    expect(stranger.res.status).toBe(403);
    expect(stranger.res.body.error).toMatch(/^Agent not verified on-chain/);
  });

  it('400 for a network it does not serve', async () => {
    const res = (await send(ecdsa, { path: '/api/demo/verify?network=44787' })).res;
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^network: must be one of/);
  });

  it('409 for a replay, also once the service restarted over the same store', async () => {
    const { headers, res } = await send(ecdsa);
    expect(res.status).toBe(200);
    const replay = () => request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(BODY);
    expect((await replay()).status).toBe(409);
    expect((await replay()).body).toEqual({ error: 'Replay detected' });

    // another service process over the same sqlite file
    const restarted = testApp(new ChainGateway({ mainnet: networks.mainnet.gateway, testnet: networks.testnet.gateway }), { store });
    try {
      const again = await request(restarted.app).post(PATH).set(headers).set('content-type', 'application/json').send(BODY);
      expect(again.status).toBe(409);
    } finally {
      await restarted.services.queries.stop();
    }
  });

  it('a warm verify costs no RPC round trip', async () => {
    expect((await send(ecdsa)).res.status).toBe(200); // warm
    q.resetRpc();
    expect((await send(ecdsa)).res.status).toBe(200);
    expect(q.rpc).toEqual({ testnet: 0, mainnet: 0 });
  });

  it('403 once the agent is deregistered', async () => {
    const linked = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const signer: RequestSigner = { type: 'secp256k1', account: linked.agent };
    expect((await send(signer)).res.status).toBe(200);
    await deregisterByProof(networks.testnet, { human: linked.human, agent: linked.agent.address });
    await q.services.queries.syncNow();
    const refused = await send(signer);
    expect(refused.res.status).toBe(403);
    expect(refused.res.body.error).toMatch(/^Agent not verified on-chain/);
  });
});
