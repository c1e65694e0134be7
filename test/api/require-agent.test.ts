// requireAgent() inside another Express service, against a real local chain: an agent registered through the
// mock identity app signs with the client SDK and gets in (req.agent set); no headers 401, a tampered body or an
// unknown agent 403, a replay 409, a deregistered agent 403; a body parsed before it is a configuration error.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestSigner, requireAgent, signingFetch, signRequest } from '../../src/client/index.js';
import { newAccount, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { deregisterByProof } from '../support/queries.js';

describe('requireAgent() in another Express service', () => {
  let system: TestSystem;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    const app = express();
    // cache 0: every request reads the chain, so a deregistration shows at once
    const guard = requireAgent({ network: 'testnet', rpcUrl: system.rpcUrl, registry: system.deployment.contracts.registry, cacheTtlMs: 0 });
    app.post('/orders', express.text({ type: '*/*' }), guard, (req, res) => {
      res.json({ agentId: String(req.agent?.agentId), agentAddress: req.agent?.agentAddress, agentCount: String(req.agent?.agentCount) });
    });
    app.post('/parsed-first', express.json(), guard, (_req, res) => {
      res.json({ ok: true });
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const order = (signer: RequestSigner, body = '{"item":"tea"}') =>
    signingFetch(signer)(`${base}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('lets a registered agent in, and names it on the request', async () => {
    const linked = await registerLinked(system);
    const res = await order({ type: 'secp256k1', account: linked.agent });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ agentId: String(linked.agentId), agentAddress: linked.agent.address, agentCount: '1' });
  });

  it('remembers only accepted agents: one refused before it registered gets in right after', async () => {
    const app = express();
    // a long cache: an accepted agent is not read again, a refusal must not be kept
    const guard = requireAgent({ network: 'testnet', rpcUrl: system.rpcUrl, registry: system.deployment.contracts.registry, cacheTtlMs: 600_000 });
    app.post('/orders', express.text({ type: '*/*' }), guard, (req, res) => {
      res.json({ agentId: String(req.agent?.agentId) });
    });
    const cached = createServer(app);
    await new Promise<void>((resolve) => cached.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(cached.address() as AddressInfo).port}/orders`;
    try {
      const agent = newAccount();
      const post = () => signingFetch({ type: 'secp256k1', account: agent })(url, { method: 'POST', body: '{}' });
      expect((await post()).status).toBe(403);
      const linked = await registerLinked(system, { agent });
      const res = await post();
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ agentId: String(linked.agentId) });
    } finally {
      cached.closeAllConnections();
      await new Promise<void>((resolve) => cached.close(() => resolve()));
    }
  });

  it('401 without headers, 403 for a tampered body or an unknown agent, 409 for a replay', async () => {
    const linked = await registerLinked(system);
    const signer: RequestSigner = { type: 'secp256k1', account: linked.agent };
    expect((await fetch(`${base}/orders`, { method: 'POST', body: '{}' })).status).toBe(401);

    const headers = await signRequest(signer, { method: 'POST', url: '/orders', body: '{"item":"tea"}' });
    const tampered = await fetch(`${base}/orders`, { method: 'POST', headers, body: '{"item":"gold"}' });
    expect(tampered.status).toBe(403);
    const first = await fetch(`${base}/orders`, { method: 'POST', headers, body: '{"item":"tea"}' });
    expect(first.status).toBe(200);
    const replay = await fetch(`${base}/orders`, { method: 'POST', headers, body: '{"item":"tea"}' });
    expect(replay.status).toBe(409);
    expect(await replay.json()).toEqual({ error: 'Replay detected' });

    const stranger = await order({ type: 'secp256k1', account: newAccount() });
    expect(stranger.status).toBe(403);
    expect(await stranger.json()).toEqual({ error: 'Agent not verified on-chain' });
  });

  it('403 once the agent is deregistered', async () => {
    const linked = await registerLinked(system);
    const signer: RequestSigner = { type: 'secp256k1', account: linked.agent };
    expect((await order(signer)).status).toBe(200);
    await deregisterByProof(system, { human: linked.human, agent: linked.agent.address });
    expect((await order(signer)).status).toBe(403);
  });

  it('says how to mount it when a JSON parser consumed the signed body', async () => {
    const linked = await registerLinked(system);
    const res = await signingFetch({ type: 'secp256k1', account: linked.agent })(`${base}/parsed-first`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toMatch(/express\.text/);
  });
});
