// Messages to the service's agent, over real HTTP and a real chain: A2A messages (v0.3 and v1.0, alone, streamed, in
// a batch) and chat queries share one per-client budget; beyond it A2A answers a JSON-RPC error (-32602, data status
// 429, Retry-After on a lone request) and chat 429 with Retry-After; a message over its size is refused (-32602 with
// status 413, or 413); a body over the paths' limit is 413. A refused message leaves nothing in the store, reads
// (tasks/get) are not counted, and another client is served all along.
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { rpc } from '../support/a2a.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';

const LIMITS = { perMinute: 5, maxMessageBytes: 1_000, maxBodyBytes: 4_096 };
const help = (text = 'help') => ({ message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } });
const v1Help = () => ({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'help' }] } });
const CHAT = '/api/demo/chat?network=testnet';

describe('messages to the agent: one per-client budget, bounded sizes', () => {
  let app: Express;
  let store: KeyValueStore;
  let client = 0;
  /** A client address of its own for each test: the budget is per address. */
  const nextClient = () => `198.51.100.${++client}`;
  const tasks = async () => (await store.keys('a2a:task:')).length;

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    ({ app, store } = testApp(new ChainGateway({ mainnet: system.gateway, testnet: system.gateway }), { agentMessages: LIMITS }));
  });

  const refusedForRate = expect.objectContaining({
    code: -32602,
    message: expect.stringMatching(/^Too many messages to the agent: at most 5 per 60 s from one address; try again in \d+ s$/),
    data: { status: 429, retryAfterSeconds: expect.any(Number) },
  });

  it('A2A: beyond the budget a message is a -32602 error (status 429, Retry-After), stores nothing; reads and other clients go on', async () => {
    const from = nextClient();
    for (let i = 0; i < LIMITS.perMinute; i++) {
      const res = await rpc(app, 'message/send', help(), from);
      expect(res.body.result, JSON.stringify(res.body)).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    }
    const kept = await tasks();
    const refused = await rpc(app, 'message/send', help(), from);
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ jsonrpc: '2.0', id: 1, error: refusedForRate });
    expect(Number(refused.headers['retry-after'])).toBe(refused.body.error.data.retryAfterSeconds);
    expect(await tasks()).toBe(kept);

    // v1.0 and streams count in the same budget; a stream is refused before it starts (JSON, not SSE)
    const v1 = await request(app).post('/api/a2a').set('A2A-Version', '1.0').set('X-Forwarded-For', from).send({
      jsonrpc: '2.0',
      id: 'v1',
      method: 'SendMessage',
      params: v1Help(),
    });
    expect(v1.body).toEqual({ jsonrpc: '2.0', id: 'v1', error: refusedForRate });
    const stream = await request(app)
      .post('/api/a2a')
      .set('X-Forwarded-For', from)
      .set('Accept', 'text/event-stream')
      .send({ jsonrpc: '2.0', id: 's', method: 'message/stream', params: help() });
    expect(stream.headers['content-type']).toMatch(/^application\/json/);
    expect(stream.body).toEqual({ jsonrpc: '2.0', id: 's', error: refusedForRate });

    // reading is not writing: tasks/get is answered; another client sends as before
    const own = (await rpc(app, 'message/send', help(), nextClient())).body.result;
    expect(own).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect((await rpc(app, 'tasks/get', { id: own.id }, from)).body.result).toMatchObject({ id: own.id });
  });

  it('A2A: each message of a batch counts; those beyond the budget are refused in their place', async () => {
    const from = nextClient();
    const batch = Array.from({ length: LIMITS.perMinute + 2 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'message/send', params: help() }));
    const res = await request(app).post('/api/a2a').set('X-Forwarded-For', from).send(batch);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(LIMITS.perMinute + 2);
    expect(res.body.slice(0, LIMITS.perMinute).every((answer: { result?: unknown }) => answer.result !== undefined)).toBe(true);
    expect(res.body.slice(LIMITS.perMinute)).toEqual([
      { jsonrpc: '2.0', id: LIMITS.perMinute, error: refusedForRate },
      { jsonrpc: '2.0', id: LIMITS.perMinute + 1, error: refusedForRate },
    ]);
  });

  it('A2A: a message over its size is -32602 with status 413 and stores nothing; a body over the limit is 413 unread', async () => {
    const from = nextClient();
    const before = await tasks();
    const big = await rpc(app, 'message/send', help('x'.repeat(LIMITS.maxMessageBytes)), from);
    expect(big.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: expect.stringMatching(/^The message is too large: \d+ bytes, at most 1000; send a shorter one$/),
        data: { status: 413 },
      },
    });
    expect(await tasks()).toBe(before);
    const body = await request(app)
      .post('/api/a2a')
      .set('X-Forwarded-For', from)
      .send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: 'x', pad: 'x'.repeat(LIMITS.maxBodyBytes) } });
    expect(body.status).toBe(413);
    expect(body.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the body is too large (at most 4kb)' } });
    // a message just within both is answered
    const fits = await rpc(app, 'message/send', help(`help ${'x'.repeat(LIMITS.maxMessageBytes - 150)}`), from);
    expect(fits.body.result).toMatchObject({ kind: 'task' });
  });

  it("A2A: the agent's words in a task stay short even when a refusal quotes a long value", async () => {
    const intent = 'y'.repeat(850);
    const res = await rpc(
      app,
      'message/send',
      { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { intent } }] } },
      nextClient(),
    );
    const task = res.body.result;
    expect(task.status.state).toBe('input-required');
    const [text, data] = task.status.message.parts as [{ text: string }, { data: { error: string } }];
    expect(text.text).toMatch(/^Unknown intent "y{850}": use one of .*…$/);
    expect(text.text).toHaveLength(1_000);
    expect(data.data.error).toBe(text.text);
  });

  it('chat shares the budget with A2A: 429 with Retry-After and {error} once A2A messages spent it', async () => {
    const from = nextClient();
    for (let i = 0; i < LIMITS.perMinute - 1; i++) expect((await rpc(app, 'message/send', help(), from)).body.result).toBeDefined();
    const ok = await request(app).post(CHAT).set('X-Forwarded-For', from).send({ query: 'help', session_id: 'budget' });
    expect(ok.status).toBe(200);
    const refused = await request(app).post(CHAT).set('X-Forwarded-For', from).send({ query: 'help', session_id: 'budget' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: expect.stringMatching(/^Too many messages to the agent: at most 5 per 60 s from one address; try again in \d+ s$/),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // and the other way round
    expect((await rpc(app, 'message/send', help(), from)).body.error).toEqual(refusedForRate);
    expect((await request(app).post(CHAT).set('X-Forwarded-For', nextClient()).send({ query: 'help' })).status).toBe(200);
  });

  it('chat: 413 for a body over the limit and for a query over the message size, nothing kept', async () => {
    const before = (await store.keys('demo:chat:')).length;
    const body = await request(app)
      .post(CHAT)
      .set('X-Forwarded-For', nextClient())
      .set('content-type', 'application/json')
      .send(JSON.stringify({ query: 'help', session_id: 'x', pad: 'x'.repeat(LIMITS.maxBodyBytes) }));
    expect(body.status).toBe(413);
    expect(body.body).toEqual({ error: 'Request body is too large (at most 4kb)' });
    const query = await request(app)
      .post(CHAT)
      .set('X-Forwarded-For', nextClient())
      .send({ query: `help ${'ü'.repeat(LIMITS.maxMessageBytes / 2)}`, session_id: 'y' });
    expect(query.status).toBe(413);
    expect(query.body).toEqual({ error: `The query is too large: ${5 + LIMITS.maxMessageBytes} bytes, at most 1000; send a shorter one` });
    expect((await store.keys('demo:chat:')).length).toBe(before);
  });
});
