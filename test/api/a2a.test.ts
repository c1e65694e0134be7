// The A2A endpoint over real chains, through the SDK's own client against a listening server (A2A v1.0), and
// raw v0.3 JSON-RPC without a version header: every message answered with a task (help, lookup, verify, freshness
// and status completed with their answer as an artifact, incomplete requests input-required), a register task that
// completes by itself when the identity app approves, and the card against the v0.3 schema.
// test/api/a2a-conversation.test.ts covers the turns of an input-required task.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Part, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { Ajv } from 'ajv';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedHeaders } from '../../src/core/signed-request.js';
import type { Services } from '../../src/services/index.js';
import { SESSION_CREATION } from '../../src/services/rate-limits.js';
import {
  answerOf,
  dataOf,
  dataPart,
  legacyDataOf,
  legacySend,
  openRegisterTask,
  rpc,
  sendRegister,
  textPart,
  userMessage,
  waitForTaskState,
} from '../support/a2a.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { A2A_SCHEMA, a2aCardValidator } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { registerAgent } from '../support/session-flows.js';
import { hasSharedFile, readSharedJson, unlessShared } from '../support/shared.js';

const TESTNET = 11142220;

describe('A2A endpoint', () => {
  let networks: TestNetworks;
  let t: TestApp;
  let app: Express;
  let server: Server;
  let base: string;
  let client: Client;
  let agent: RegisteredAgent;

  /** Every message is answered with a task. */
  const send = async (parts: Part[]): Promise<Task> => {
    const result = await client.sendMessage({ tenant: '', message: userMessage(parts), configuration: undefined, metadata: undefined });
    expect('id' in result && 'status' in result, 'a task answer').toBe(true);
    return result as Task;
  };
  /** A query's answer: a completed task, its artifact's data. */
  const ask = async (parts: Part[]): Promise<Record<string, unknown>> => {
    const task = await send(parts);
    expect(task.status?.state, JSON.stringify(task.status)).toBe(TaskState.TASK_STATE_COMPLETED);
    return answerOf(task);
  };

  beforeAll(async () => {
    networks = await deployTestNetworks();
    agent = await registerLinked(networks.testnet);
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = testApp(networks.chains, { publicUrl: base });
    app = t.app;
    server.on('request', app);
    client = await new ClientFactory().createFromUrl(base);
  });

  afterAll(async () => {
    t.services.watcher.stopAll();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('help lists the intents with examples: a completed task, the answer its artifact', async () => {
    const task = await send([textPart('help')]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]).toMatchObject({ name: 'help-answer' });
    expect(task.artifacts[0]!.parts.map((p) => p.content?.$case)).toEqual(['text', 'data']);
    expect(task.history.map((m) => m.messageId)).toHaveLength(1);
    const intents = answerOf(task)['intents'] as { intent: string; examples: string[] }[];
    expect(intents.map((i) => i.intent).sort()).toEqual(['deregister', 'freshness', 'help', 'lookup', 'register', 'status', 'verify']);
    for (const intent of intents) expect(intent.examples.length).toBeGreaterThan(0);
  });

  it('lookup answers the same fields as GET /api/agent/info', async () => {
    const rest = await request(app).get(`/api/agent/info/${TESTNET}/${agent.agentId}`);
    expect(rest.status).toBe(200);
    expect(await ask([dataPart({ intent: 'lookup', agentId: Number(agent.agentId), network: 'testnet' })])).toEqual(rest.body);
    // plain English, same answer
    expect(await ask([textPart(`look up agent ${agent.agentId} on testnet`)])).toEqual(rest.body);
  });

  it('verify answers the same fields as GET /api/agent/verify', async () => {
    const rest = await request(app).get(`/api/agent/verify/${TESTNET}/${agent.agentId}`);
    expect(await ask([textPart(`verify agent ${agent.agentId} on testnet`)])).toEqual(rest.body);
    expect(rest.body).toMatchObject({ isVerified: true, agentId: Number(agent.agentId), chainId: TESTNET });
  });

  it('freshness answers isProofFresh and proofExpiresAt', async () => {
    const data = await ask([textPart(`{"intent": "freshness", "agentId": ${agent.agentId}, "chainId": ${TESTNET}}`)]);
    expect(data).toMatchObject({ agentId: Number(agent.agentId), chainId: TESTNET, hasProof: true, isProofFresh: true });
    expect(data['proofExpiresAt']).toBeGreaterThan(Date.now() / 1000);
  });

  it('an unknown agent: a failed task whose status message carries the REST error, not a protocol error', async () => {
    const task = await send([dataPart({ intent: 'lookup', agentId: 987654, chainId: TESTNET })]);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.artifacts).toEqual([]);
    expect(answerOf(task)).toMatchObject({ status: 404, intent: 'lookup', error: expect.stringContaining('987654') });
  });

  it('verify checks a signed agent request carried in a data part, once', async () => {
    const body = '{"order":1}';
    const headers = await signedHeaders({ type: 'secp256k1', account: agent.agent }, { method: 'POST', url: '/orders', body });
    const check = async () =>
      answerOf(await send([dataPart({ intent: 'verify', network: 'testnet', signedRequest: { headers, method: 'POST', url: '/orders', body } })]));
    expect(await check()).toMatchObject({ valid: true, agentId: String(agent.agentId), agentAddress: agent.agent.address, keyType: 'secp256k1' });
    expect(await check()).toMatchObject({ status: 409, error: 'Replay detected' });
    const tampered = await send([
      dataPart({ intent: 'verify', network: 'testnet', signedRequest: { headers, method: 'POST', url: '/orders', body: '{}' } }),
    ]);
    expect(tampered.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(answerOf(tampered)).toMatchObject({ status: 403 });
  });

  it('an incomplete request: an input-required task that says what is missing', async () => {
    const noId = await send([dataPart({ intent: 'verify', network: 'testnet' })]);
    expect(noId.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(answerOf(noId)).toMatchObject({ missing: ['agentId'], intent: 'verify' });
    expect(String(answerOf(noId)['error'])).toMatch(/agentId/);
    expect(answerOf(await send([textPart('good morning')]))).toMatchObject({ missing: ['intent'] });
    expect(answerOf(await send([dataPart({ intent: 'status' })]))).toMatchObject({ missing: ['sessionToken'] });
  });

  it('a raw v0.3 message/send (no A2A-Version header) with a data part', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .send(legacySend({ intent: 'verify', agentId: Number(agent.agentId), chainId: TESTNET }, 'm-1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { kind: 'task', status: { state: 'completed' } } });
    expect(legacyDataOf(res.body.result)).toMatchObject({ isVerified: true, agentId: Number(agent.agentId), chainId: TESTNET });
  });

  it('a protocol error is a JSON-RPC error object with HTTP 200', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: 'no-such-task' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32001 } });
  });

  it.each([
    [
      'v0.3 message/send without parts',
      {},
      'message/send',
      { message: { kind: 'message', messageId: 'p-1', role: 'user', parts: [] } },
      /at least one part/,
    ],
    [
      'v1.0 SendMessage without parts',
      { 'A2A-Version': '1.0' },
      'SendMessage',
      { message: { messageId: 'p-2', role: 'ROLE_USER', parts: [] } },
      /at least one part/,
    ],
    [
      'a message from the agent role',
      {},
      'message/send',
      { message: { kind: 'message', messageId: 'p-3', role: 'agent', parts: [{ kind: 'text', text: 'help' }] } },
      /role must be user/,
    ],
    [
      'a negative historyLength on send',
      {},
      'message/send',
      { message: { kind: 'message', messageId: 'p-4', role: 'user', parts: [{ kind: 'text', text: 'help' }] }, configuration: { historyLength: -2 } },
      /historyLength/,
    ],
    ['a negative historyLength on tasks/get', {}, 'tasks/get', { id: 'any', historyLength: -1 }, /historyLength/],
    ['a page size over 100', { 'A2A-Version': '1.0' }, 'ListTasks', { pageSize: 500 }, /pageSize must be 1 to 100/],
  ])('%s is a JSON-RPC invalid-params error saying what to fix', async (_name, headers, method, params, message) => {
    const res = await request(app).post('/api/a2a').set(headers).send({ jsonrpc: '2.0', id: 'bad', method, params });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 'bad', error: { code: -32602 } });
    expect(res.body.error.message).toMatch(message);
  });

  it('serves the card at both well-known paths and on GET /api/a2a, v1.0 with the header', async () => {
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json', '/api/a2a']) {
      const res = await request(app).get(path).set('A2A-Version', '1.0');
      expect(res.status, path).toBe(200);
      expect(res.body.supportedInterfaces).toEqual(
        [
          { url: `${base}/api/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: `${base}/api/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        ].map((i) => expect.objectContaining(i)),
      );
      expect(res.body.skills).toHaveLength(7);
    }
  });

  it.skipIf(!hasSharedFile(A2A_SCHEMA))(
    unlessShared(A2A_SCHEMA, 'the card without a version header validates against the A2A v0.3.0 AgentCard'),
    async () => {
      const validate = a2aCardValidator();
      for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json', '/api/a2a']) {
        const res = await request(app).get(path);
        expect(res.status).toBe(200);
        expect(validate(res.body) ? [] : validate.errors, path).toEqual([]);
        expect(res.body).toMatchObject({ url: `${base}/api/a2a`, protocolVersion: '0.3', capabilities: { streaming: true } });
      }
    },
  );

  it('register: a task with the deep link that completes by itself when the identity app approves', async () => {
    const events: { state?: TaskState; data: Record<string, unknown> }[] = [];
    let task: Task | undefined;
    const stream = client.sendMessageStream({
      tenant: '',
      message: userMessage([dataPart({ intent: 'register', mode: 'wallet-free', network: 'testnet' })]),
      configuration: undefined,
      metadata: undefined,
    });
    let approved: Promise<unknown> | undefined;
    let minedAt = 0;
    let completedAt = 0;
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === 'task') {
        task = payload.value;
        const artifact = dataOf(task.artifacts[0]?.parts);
        expect(artifact).toMatchObject({ stage: 'qr-ready' });
        expect(String(artifact['deepLink'])).toMatch(/^selfapp:/);
        expect(typeof artifact['qrData']).toBe('string');
        expect(typeof artifact['sessionToken']).toBe('string');
        // no callback: the task must see the registration on chain by itself
        approved = approveDeepLink(app, networks, String(artifact['deepLink']), { callback: false }).then(() => (minedAt = Date.now()));
      } else if (payload?.$case === 'statusUpdate') {
        events.push({ state: payload.value.status?.state, data: dataOf(payload.value.status?.message?.parts) });
        if (payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) completedAt = Date.now();
      }
    }
    await approved;
    expect(task).toBeDefined();
    const last = events.at(-1);
    expect(last?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last?.data).toMatchObject({ stage: 'completed', network: 'testnet' });
    expect(last?.data['agentId']).toBeGreaterThan(0);
    // the registering block was mined before minedAt: the completed update came by itself soon after it (the
    // latency is measured by npm run bench:completion; a loaded test machine adds seconds)
    expect(completedAt - minedAt).toBeLessThanOrEqual(5_000);
    const stored = await client.getTask({ tenant: '', id: task!.id, historyLength: undefined });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // status of the session token, as GET /api/agent/register/status answers it
    const token = String(dataOf(task!.artifacts[0]?.parts)['sessionToken']);
    const status = await ask([dataPart({ intent: 'status', sessionToken: token })]);
    expect(status).toMatchObject({ stage: 'completed', agentId: last?.data['agentId'], network: 'testnet' });

    // tasks/get after a restart: a new app over the same store (v0.3, no version header)
    const restarted = testApp(networks.chains, { publicUrl: base, store: t.store, sessionSecret: t.sessionSecret });
    const res = await request(restarted.app)
      .post('/api/a2a')
      .send({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: task!.id } });
    expect(res.body).toMatchObject({ id: 3, result: { kind: 'task', id: task!.id, status: { state: 'completed' } } });
    restarted.services.watcher.stopAll();
  });

  it('deregister: a task that completes by itself when the human proves again', async () => {
    const registered = await registerAgent(app, networks, 'linked');
    const stream = client.sendMessageStream({
      tenant: '',
      message: userMessage([dataPart({ intent: 'deregister', agentAddress: registered.agentAddress, network: 'testnet' })]),
      configuration: undefined,
      metadata: undefined,
    });
    let approved: Promise<unknown> | undefined;
    let final: { state?: TaskState; data: Record<string, unknown> } | undefined;
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === 'task') {
        const artifact = dataOf(payload.value.artifacts[0]?.parts);
        expect(artifact).toMatchObject({ stage: 'qr-ready', agentId: registered.agentId });
        approved = approveDeepLink(app, networks, String(artifact['deepLink']), { document: registered.document });
      } else if (payload?.$case === 'statusUpdate') {
        final = { state: payload.value.status?.state, data: dataOf(payload.value.status?.message?.parts) };
      }
    }
    await approved;
    expect(final?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(final?.data).toMatchObject({ stage: 'completed', agentId: registered.agentId });
    expect((await request(app).get(`/api/agent/info/${TESTNET}/${registered.agentId}`)).status).toBe(404);
  });

  it('v0.3 message/stream answers server-sent events: the completed task of a query, then the end', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .set('Accept', 'text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 4,
        method: 'message/stream',
        params: { message: { kind: 'message', messageId: 'm-4', role: 'user', parts: [{ kind: 'text', text: 'help' }] } },
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    const events = res.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as { id: number; result: { kind: string } });
    expect(events).toEqual([
      expect.objectContaining({ id: 4, result: expect.objectContaining({ kind: 'task', status: expect.objectContaining({ state: 'completed' }) }) }),
    ]);
  });

  it.skipIf(!hasSharedFile(A2A_SCHEMA))(unlessShared(A2A_SCHEMA, 'v0.3 answers validate against the A2A v0.3.0 Task definition'), async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(readSharedJson<object>(A2A_SCHEMA), 'a2a');
    const validate = ajv.getSchema('a2a#/definitions/Task')!;
    for (const [i, text] of [`lookup agent ${agent.agentId} on testnet`, 'lookup agent 987654 on testnet', 'good morning'].entries()) {
      const res = await request(app)
        .post('/api/a2a')
        .send({
          jsonrpc: '2.0',
          id: 5,
          method: 'message/send',
          params: { message: { kind: 'message', messageId: `m-5-${i}`, role: 'user', parts: [{ kind: 'text', text }] } },
        });
      expect(res.body.result.status.state, text).toBe(['completed', 'failed', 'input-required'][i]);
      expect(validate(res.body.result) ? [] : validate.errors, text).toEqual([]);
    }
  });

  it('register through a blocking v0.3 message/send: the auth-required task at once, completed later on tasks/get', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .send({
        jsonrpc: '2.0',
        id: 6,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm-6',
            role: 'user',
            parts: [{ kind: 'data', data: { intent: 'register', mode: 'wallet-free', chainId: TESTNET } }],
          },
        },
      });
    expect(res.body).toMatchObject({ id: 6, result: { kind: 'task', status: { state: 'auth-required' } } });
    const task = res.body.result as { id: string; artifacts: { parts: { kind: string; data: Record<string, unknown> }[] }[] };
    if (hasSharedFile(A2A_SCHEMA)) {
      const ajv = new Ajv({ strict: false, allErrors: true });
      ajv.addSchema(readSharedJson<object>(A2A_SCHEMA), 'a2a');
      const validate = ajv.getSchema('a2a#/definitions/Task')!;
      expect(validate(res.body.result) ? [] : validate.errors).toEqual([]);
    }
    const artifact = task.artifacts[0]!.parts.find((p) => p.kind === 'data')!.data;
    await approveDeepLink(app, networks, String(artifact['deepLink']));
    expect(await waitForTaskState(app, task.id, 'completed')).toBe('completed');
  });

  it('v0.3 tasks/cancel cancels an open register task', async () => {
    const send = await request(app)
      .post('/api/a2a')
      .send({
        jsonrpc: '2.0',
        id: 9,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm-9',
            role: 'user',
            parts: [{ kind: 'text', text: '{"intent": "register", "mode": "wallet-free", "network": "testnet"}' }],
          },
        },
      });
    const taskId = send.body.result.id as string;
    const cancel = await request(app)
      .post('/api/a2a')
      .send({ jsonrpc: '2.0', id: 10, method: 'tasks/cancel', params: { id: taskId } });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ id: 10, result: { kind: 'task', id: taskId, status: { state: 'canceled' } } });
    const got = await request(app)
      .post('/api/a2a')
      .send({ jsonrpc: '2.0', id: 11, method: 'tasks/get', params: { id: taskId } });
    expect(got.body.result.status.state).toBe('canceled');
  });

  it('every query intent in v0.3 (no header) answers as in v1.0 (SDK client), and v1.0 SendMessage works raw with the header', async () => {
    const requests: object[] = [
      { intent: 'help' },
      { intent: 'lookup', agentId: Number(agent.agentId), chainId: TESTNET },
      { intent: 'verify', agentId: Number(agent.agentId), network: 'testnet' },
      { intent: 'freshness', agentId: Number(agent.agentId), network: 'testnet' },
    ];
    for (const [i, data] of requests.entries()) {
      const legacy = await request(app)
        .post('/api/a2a')
        .send({
          jsonrpc: '2.0',
          id: i,
          method: 'message/send',
          params: { message: { kind: 'message', messageId: `q-${i}`, role: 'user', parts: [{ kind: 'data', data }] } },
        });
      expect(legacy.body.result.status.state, JSON.stringify(data)).toBe('completed');
      // freshness counts seconds to the proof's expiry: the two answers may fall on either side of a second
      const [legacyData, current] = [legacyDataOf(legacy.body.result), await ask([dataPart(data)])] as Record<string, unknown>[];
      const remaining = [legacyData?.secondsRemaining, current?.secondsRemaining];
      if (typeof remaining[0] === 'number' && typeof remaining[1] === 'number') {
        expect(Math.abs(remaining[0] - remaining[1])).toBeLessThanOrEqual(1);
        (legacyData as Record<string, unknown>).secondsRemaining = remaining[1];
      }
      expect(legacyData, JSON.stringify(data)).toEqual(current);
    }
    const raw = await request(app)
      .post('/api/a2a')
      .set('A2A-Version', '1.0')
      .send({
        jsonrpc: '2.0',
        id: 'v1',
        method: 'SendMessage',
        params: {
          message: {
            messageId: 'v1-1',
            role: 'ROLE_USER',
            parts: [{ data: { intent: 'verify', agentId: Number(agent.agentId), chainId: TESTNET } }],
          },
        },
      });
    expect(raw.status).toBe(200);
    expect(raw.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(raw.body.result.task.artifacts[0].parts.find((p: { data?: object }) => p.data).data).toMatchObject({ isVerified: true, chainId: TESTNET });
  });

  it("ListTasks shows a client its own tasks (artifacts only on request), never another address's", async () => {
    const created = (await client.sendMessage({
      tenant: '',
      message: userMessage([dataPart({ intent: 'register', mode: 'wallet-free', network: 'testnet' })]),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    const listed = await client.listTasks({
      tenant: '',
      contextId: created.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((task) => task.id)).toEqual([created.id]);
    expect(listed.tasks[0]!.artifacts).toEqual([]);
    const withArtifacts = await client.listTasks({
      tenant: '',
      contextId: created.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(dataOf(withArtifacts.tasks[0]!.artifacts[0]?.parts)).toMatchObject({ sessionToken: expect.any(String) });
    // the same request from another client address (a proxy on loopback says who the client is)
    const other = await request(app)
      .post('/api/a2a')
      .set('A2A-Version', '1.0')
      .set('X-Forwarded-For', '203.0.113.50')
      .send({ jsonrpc: '2.0', id: 'list', method: 'ListTasks', params: { includeArtifacts: true } });
    expect(other.body.result, JSON.stringify(other.body)).toBeDefined();
    expect((other.body.result.tasks as { id: string }[]).map((task) => task.id)).not.toContain(created.id);
    await client.cancelTask({ tenant: '', id: created.id, metadata: undefined });
  });

  it('ListTasks tells IPv6 neighbours apart (the owner is the whole address, not the rate-limit /56)', async () => {
    const v1 = (forwardedFor: string, method: string, params: object) =>
      request(app)
        .post('/api/a2a')
        .set('A2A-Version', '1.0')
        .set('X-Forwarded-For', forwardedFor)
        .send({ jsonrpc: '2.0', id: method, method, params });
    const sent = await v1('2001:db8:1:ab00::1', 'SendMessage', {
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: { intent: 'register', mode: 'wallet-free', network: 'testnet' } }],
      },
    });
    const taskId = sent.body.result.task.id as string;
    const own = await v1('2001:db8:1:ab00::1', 'ListTasks', {});
    const listed = (own.body.result.tasks as { id: string; metadata?: object }[]).find((task) => task.id === taskId);
    expect(listed).toBeDefined();
    expect(listed?.metadata ?? {}).toEqual({}); // the executor's bookkeeping (with the first session token) stays inside
    const neighbour = await v1('2001:db8:1:abff::99', 'ListTasks', { includeArtifacts: true });
    expect((neighbour.body.result.tasks as { id: string }[]).map((task) => task.id)).not.toContain(taskId);
    await v1('2001:db8:1:ab00::1', 'CancelTask', { id: taskId });
  });

  it('SubscribeToTask follows an open register task to completed', async () => {
    const created = (await client.sendMessage({
      tenant: '',
      message: userMessage([dataPart({ intent: 'register', mode: 'wallet-free', network: 'testnet' })]),
      configuration: undefined,
      metadata: undefined,
    })) as Task;
    expect(created.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    const states: (TaskState | undefined)[] = [];
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: created.id })) {
        if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state);
        if (event.payload?.$case === 'task') states.push(event.payload.value.status?.state);
      }
    })();
    await approveDeepLink(app, networks, String(dataOf(created.artifacts[0]?.parts)['deepLink']), { callback: false });
    await following;
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('an open register task completes after a restart of the service (task store on the store port)', async () => {
    const before = testApp(networks.chains, { publicUrl: base });
    const { taskId, artifact } = await openRegisterTask(before.app);
    before.services.watcher.stopAll(); // the old process is gone
    const after = testApp(networks.chains, { publicUrl: base, store: before.store, sessionSecret: before.sessionSecret });
    try {
      await approveDeepLink(after.app, networks, String(artifact['deepLink']));
      expect(await waitForTaskState(after.app, taskId, 'completed')).toBe('completed');
    } finally {
      after.services.watcher.stopAll();
    }
  });

  it('a resumed task canceled after a restart stays canceled when the human finishes anyway', async () => {
    const before = testApp(networks.chains, { publicUrl: base });
    const { taskId, artifact } = await openRegisterTask(before.app);
    before.services.watcher.stopAll();
    const after = testApp(networks.chains, { publicUrl: base, store: before.store, sessionSecret: before.sessionSecret });
    try {
      const cancel = await rpc(after.app, 'tasks/cancel', { id: taskId });
      expect(cancel.body.result.status.state).toBe('canceled');
      await approveDeepLink(after.app, networks, String(artifact['deepLink']), { callback: false });
      // the session completes (the chain says so) ...
      let stage = '';
      for (let i = 0; i < 50 && stage !== 'completed'; i++) {
        stage = (
          await request(after.app)
            .get('/api/agent/register/status')
            .query({ token: String(artifact['sessionToken']) })
        ).body.stage;
        if (stage !== 'completed') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(stage).toBe('completed');
      // ... and the resumed loop, which woke on the registry's logs, left the canceled task alone
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(after.services.watcher.size).toBe(0);
      expect((await rpc(after.app, 'tasks/get', { id: taskId })).body.result.status.state).toBe('canceled');
    } finally {
      after.services.watcher.stopAll();
    }
  });
});

describe('A2A session creations count against the per-address limit', () => {
  let networks: TestNetworks;
  let app: Express;
  let services: Services;
  beforeAll(async () => {
    networks = await deployTestNetworks();
    ({ app, services } = testApp(networks.chains));
  });
  afterAll(() => services.watcher.stopAll());

  it('answers the 11th register from one address within a minute with a failed task carrying the 429', async () => {
    for (let i = 1; i <= SESSION_CREATION.limit; i++) expect((await sendRegister(app, '203.0.113.7')).body.result.status.state).toBe('auth-required');
    const refused = await sendRegister(app, '203.0.113.7');
    expect(refused.status).toBe(200);
    expect(refused.body.result).toMatchObject({ kind: 'task', status: { state: 'failed' } });
    expect(legacyDataOf(refused.body.result)).toMatchObject({
      status: 429,
      intent: 'register',
      error: expect.stringContaining('Too many session creations'),
    });
  });
});

describe('A2A open session tasks are capped', () => {
  let networks: TestNetworks;
  let capped: TestApp;
  let racingApp: TestApp;
  let app: Express;
  let racing: Express;
  beforeAll(async () => {
    networks = await deployTestNetworks();
    capped = testApp(networks.chains, { sessionWatch: { maxWatches: 2 } });
    racingApp = testApp(networks.chains, { sessionWatch: { maxWatches: 1 } });
    app = capped.app;
    racing = racingApp.app;
  });
  afterAll(() => {
    capped.services.watcher.stopAll();
    racingApp.services.watcher.stopAll();
  });

  it('refuses a register beyond the cap with a failed task carrying the 503, and accepts again once a task ends', async () => {
    const first = await openRegisterTask(app);
    await openRegisterTask(app);
    const refused = await sendRegister(app);
    expect(refused.body.result.status.state).toBe('failed');
    expect(legacyDataOf(refused.body.result)).toMatchObject({ status: 503, intent: 'register', error: expect.stringContaining('2 open sessions') });
    await rpc(app, 'tasks/cancel', { id: first.taskId });
    expect((await sendRegister(app)).body.result.status.state).toBe('auth-required');
  });

  it('four registers at once from four addresses: one open task, three failed with the 503', async () => {
    const answers = await Promise.all([1, 2, 3, 4].map((i) => sendRegister(racing, `198.51.100.${i}`)));
    expect(answers.filter((res) => res.body.result.status.state === 'auth-required')).toHaveLength(1);
    const failed = answers.filter((r) => r.body.result.status.state === 'failed');
    expect(failed).toHaveLength(3);
    for (const res of failed) expect(legacyDataOf(res.body.result)).toMatchObject({ status: 503 });
    expect(racingApp.services.watcher.size).toBe(1);
  });
});
