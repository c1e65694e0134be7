// POST /api/demo/chat on real local chains: the built-in agent answers through the A2A intents and names a signed
// caller; unsigned callers are anonymous; one signature header alone is 401, a replay 409; turns are kept per
// session, without tokens, within a byte budget and for a while; CHAT_AGENT_URL forwards to an external agent service
// (a real local one), and an unreachable one is 503.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { AGENT_HEADERS, signedHeaders } from '../../src/core/signed-request.js';
import { REDACTED_TOKEN } from '../../src/core/token-redaction.js';
import type { ChatTurn } from '../../src/demo/chat.js';
import { createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/services/index.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const PATH = '/api/demo/chat?network=testnet';

describe('POST /api/demo/chat', () => {
  let networks: TestNetworks;
  let chains: ChainGateway;
  let t: TestApp;
  let agent: RegisteredAgent;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    chains = new ChainGateway({ mainnet: networks.mainnet.gateway, testnet: networks.testnet.gateway });
    t = testApp(chains);
    agent = await registerLinked(networks.testnet);
  });

  const chat = async (body: object, signed = true) => {
    const text = JSON.stringify(body);
    const headers = signed ? await signedHeaders({ type: 'secp256k1', account: agent.agent }, { method: 'POST', url: PATH, body: text }) : {};
    return { headers, res: await request(t.app).post(PATH).set(headers).set('content-type', 'application/json').send(text) };
  };

  it('answers an anonymous caller through the intents', async () => {
    const { res } = await chat({ query: 'help', session_id: 'anon' }, false);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent: 'anonymous', session_id: 'anon', turns: 2, reply: expect.stringMatching(/^I can: /) });
  });

  it('names a signed caller and keeps the turns of its session', async () => {
    const first = await chat({ query: `verify agent ${agent.agentId}`, session_id: 's1' });
    expect(first.res.status).toBe(200);
    expect(first.res.body).toMatchObject({ agent: agent.agent.address, turns: 2, data: { agentId: Number(agent.agentId), isVerified: true } });
    expect(first.res.body.reply).toMatch(new RegExp(`^Hello agent #${agent.agentId} .* is backed by a human`));
    expect((await chat({ query: 'help', session_id: 's1' })).res.body.turns).toBe(4);
  });

  it('401 with one signature header alone, 409 for a replay, 403 for a tampered body, 400 for a body that is not JSON', async () => {
    const only = await request(t.app).post(PATH).set(AGENT_HEADERS.timestamp, String(Date.now())).send({ query: 'help' });
    expect(only.status).toBe(401);
    const { headers } = await chat({ query: 'help', session_id: 'r' });
    expect(
      (
        await request(t.app)
          .post(PATH)
          .set(headers)
          .set('content-type', 'application/json')
          .send(JSON.stringify({ query: 'help', session_id: 'r' }))
      ).status,
    ).toBe(409);
    expect((await request(t.app).post(PATH).set(headers).set('content-type', 'application/json').send('{"query":"other"}')).status).toBe(403);
    expect((await request(t.app).post(PATH).set('content-type', 'application/json').send('{not json')).status).toBe(400);
  });

  it('a status question keeps no token: the session token is redacted before the turn is kept', async () => {
    const opened = await request(t.app)
      .post('/api/agent/register')
      .set('X-Forwarded-For', '203.0.113.60')
      .send({ mode: 'wallet-free', network: 'testnet' });
    expect(opened.status).toBe(200);
    const token = opened.body.sessionToken as string;
    const res = await request(t.app)
      .post(PATH)
      .send({ query: `status token ${token}`, session_id: 'with-token' });
    expect(res.status).toBe(200);
    expect(res.body.reply).toBe('Session stage: qr-ready');
    const turns = (await t.store.get<ChatTurn[]>('demo:chat:testnet:anonymous:with-token')) ?? [];
    expect(turns.map((turn) => turn.text)).toEqual([`status token ${REDACTED_TOKEN}`, 'Session stage: qr-ready']);
    // a history an earlier version kept with a token in it loses it at its next turn
    await t.store.set('demo:chat:testnet:anonymous:older', [
      { role: 'user', text: `status token ${token}`, at: 1 },
      { role: 'agent', text: 'Session stage: qr-ready', at: 1 },
    ]);
    expect((await request(t.app).post(PATH).send({ query: 'help', session_id: 'older' })).status).toBe(200);
    expect((await t.store.get<ChatTurn[]>('demo:chat:testnet:anonymous:older'))?.[0]?.text).toBe(`status token ${REDACTED_TOKEN}`);
    // nowhere in the store: neither the token nor its ciphertext
    for (const key of await t.store.keys('')) {
      const value = JSON.stringify(await t.store.get(key));
      expect(value, key).not.toContain(token);
      expect(value, key).not.toContain(token.split('.')[3]);
    }
  });

  it("keeps a session's newest turns within its byte budget, for its lifetime", async () => {
    let now = Date.now();
    const bounded = testApp(chains, { clock: () => now, chatHistory: { maxBytes: 2_000, ttlMs: 60_000 } });
    const ask = (query: string) => request(bounded.app).post(PATH).send({ query, session_id: 'long' });
    const kept = async () => (await bounded.store.get<ChatTurn[]>('demo:chat:testnet:anonymous:long')) ?? [];
    // each exchange about 930 bytes (an 805-byte question, the help answer): two fit in 2,000 bytes, not three
    for (let i = 0; i < 4; i++) expect((await ask(`help ${String(i).repeat(800)}`)).status).toBe(200);
    const turns = await kept();
    expect(turns).toHaveLength(4);
    expect(turns[0]?.text).toBe(`help ${'2'.repeat(800)}`);
    expect(turns.reduce((bytes, turn) => bytes + Buffer.byteLength(turn.text), 0)).toBeLessThanOrEqual(2_000);
    expect((await ask(`help ${'4'.repeat(800)}`)).body.turns).toBe(4);
    // a short exchange fits beside the two big ones
    expect((await ask('help')).body.turns).toBe(6);
    now += 60_000;
    expect(await kept()).toEqual([]);
    expect((await ask('help')).body.turns).toBe(2);
    bounded.services.watcher.stopAll();
  });

  describe('with CHAT_AGENT_URL', () => {
    let upstream: Server;
    let seen: Record<string, unknown> | undefined;
    beforeAll(async () => {
      upstream = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () => {
          seen = { path: req.url, ...JSON.parse(body) };
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ reply: 'from the external agent' }));
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

    const appWith = (chatAgentUrl: string) => {
      const services = createServices({
        chains,
        store: new MemoryStore(),
        sessionSecret: randomBytes(32),
        publicUrl: 'http://127.0.0.1',
        deepLinkScheme: 'selfapp',
        appName: 'test',
        chatAgentUrl,
      });
      return createApp({ chains, services, logger: createLogger('silent'), version: '0' });
    };

    it('forwards the question and who asks, and answers with its reply', async () => {
      const app = appWith(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
      const res = await request(app).post(PATH).send({ query: 'hello', session_id: 'x' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ reply: 'from the external agent', agent: 'anonymous' });
      expect(seen).toEqual({ path: '/agent', query: 'hello', agent_address: 'anonymous', network: 'testnet', session_id: 'x' });
    });

    it('503 when the external agent service does not answer', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const res = await request(appWith(`http://127.0.0.1:${port}`))
        .post(PATH)
        .send({ query: 'hello' });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatch(/^Chat agent service unavailable/);
    });
  });
});
