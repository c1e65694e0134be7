// The cached per-agent answers as HTTP serves them: prepared JSON bytes with a strong ETag and the route table's
// Cache-Control, a conditional GET (If-None-Match: the tag, a list, W/, *) answered 304 without a body, the same
// bytes and tag when the cache is bypassed, a new tag once the agent changed; and the A2A intents answering from
// the same prepared answers (no RPC, the same fields).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerIntent } from '../../src/a2a/answers.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deregisterByProof, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;
const AGENT_ROUTES = ['/api/agent/info', '/api/agent/verify', '/api/cards', '/api/reputation', '/api/verify-status'];

let networks: TestNetworks;
let q: QueryTestApp;
let agent: RegisteredAgent;

beforeAll(async () => {
  networks = await deployTestNetworks();
  // the followers poll only when told to (syncNow): what is cached, and the RPC count, depend on the test alone
  q = await queryTestApp(networks, { eventPollIntervalMs: 3_600_000 });
  agent = await registerLinked(networks.testnet);
  await q.services.queries.syncNow();
});

afterAll(async () => {
  await q?.stop();
});

describe('conditional GETs of the per-agent answers', () => {
  it.each(AGENT_ROUTES)('%s: 200 with a strong ETag, then 304 without a body for it, with the same headers', async (route) => {
    const path = `${route}/${TESTNET}/${agent.agentId}`;
    const first = await request(q.app).get(path);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers['cache-control']).toBe('public, max-age=1');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(Number(first.headers['content-length'])).toBe(Buffer.byteLength(first.text));

    const again = await request(q.app).get(path).set('If-None-Match', etag);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['cache-control']).toBe('public, max-age=1');
  });

  it('matches as a GET compares (weakly): W/ on the tag, a list naming it, and *', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    const etag = (await request(q.app).get(path)).headers.etag as string;
    for (const header of [`W/${etag}`, `"other", ${etag}`, `W/"other",W/${etag}`, '*', ` ${etag} `]) {
      expect((await request(q.app).get(path).set('If-None-Match', header)).status, header).toBe(304);
    }
    for (const header of ['"other"', etag.slice(1, -1), `${etag.slice(0, -2)}x"`, 'W/', '']) {
      const res = await request(q.app).get(path).set('If-None-Match', header);
      expect(res.status, header).toBe(200);
      expect(res.body.isVerified).toBe(true);
    }
  });

  it('HEAD: the headers of the GET, and 304 for a matching tag', async () => {
    const path = `/api/agent/info/${TESTNET}/${agent.agentId}`;
    const get = await request(q.app).get(path);
    const head = await request(q.app).head(path);
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(
      (
        await request(q.app)
          .head(path)
          .set('If-None-Match', get.headers.etag as string)
      ).status,
    ).toBe(304);
  });

  it('an error is not answered 304, whatever the tag, and is not cacheable', async () => {
    const res = await request(q.app).get(`/api/agent/info/${TESTNET}/987654321`).set('If-None-Match', '*');
    expect(res.status).toBe(404);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('a changed agent gets a new tag: the old one is answered with the new body', async () => {
    const other = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const path = `/api/agent/verify/${TESTNET}/${other.agentId}`;
    const before = await request(q.app).get(path);
    expect(
      (
        await request(q.app)
          .get(path)
          .set('If-None-Match', before.headers.etag as string)
      ).status,
    ).toBe(304);

    await deregisterByProof(networks.testnet, { human: other.human, agent: other.agent.address });
    await q.services.queries.syncNow();
    const after = await request(q.app)
      .get(path)
      .set('If-None-Match', before.headers.etag as string);
    expect(after.status).toBe(200);
    expect(after.body.isVerified).toBe(false);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });
});

describe('the A2A intents share the prepared answers', () => {
  /** What the A2A agent answers to a query intent (the executor and the chat agent call this). */
  const ask = async (intent: 'verify' | 'lookup'): Promise<object> =>
    (await answerIntent(q.services, { intent, network: 'testnet', agentId: agent.agentId, fields: {} }))[1];

  it('verify and lookup answer what the REST routes answer, from the cache, without building the answer again', async () => {
    const verifyPath = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    const infoPath = `/api/agent/info/${TESTNET}/${agent.agentId}`;
    const rest = { verify: (await request(q.app).get(verifyPath)).body, info: (await request(q.app).get(infoPath)).body };
    q.resetRpc();
    expect(await ask('verify')).toEqual(rest.verify);
    expect(await ask('lookup')).toEqual(rest.info);
    expect(q.rpc.testnet).toBe(0);
    // one answer object per cached view, whoever asks
    const { queries } = q.services;
    expect(await queries.verify('testnet', agent.agentId)).toBe(await queries.verify('testnet', agent.agentId));
    expect(await queries.info('testnet', agent.agentId)).toBe(await queries.info('testnet', agent.agentId));
  });

  it('once the cache is bypassed (followers stopped), the same bytes and tag, read from the chain each time', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    const cached = await request(q.app).get(path);
    await q.stop();
    q.resetRpc();
    const uncached = await request(q.app).get(path);
    expect(q.rpc.testnet).toBe(1);
    expect(uncached.text).toBe(cached.text);
    expect(uncached.headers.etag).toBe(cached.headers.etag);
    expect(
      (
        await request(q.app)
          .get(path)
          .set('If-None-Match', cached.headers.etag as string)
      ).status,
    ).toBe(304);
  });
});
