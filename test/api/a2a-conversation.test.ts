// Every message is answered with a Task, so there is always a task to get, cancel, continue or follow: a message
// whose intent or a field is missing (or refused by the service) leaves it input-required, saying what to send,
// and a follow-up on the same taskId (and contextId) completes it; history and historyLength on tasks/get (a task
// that waits keeps the conversation, a finished one its answer alone); unicode
// and explicit nulls in optional fields; cancel of such a task; a finished or session task takes no message. Raw
// v0.3 JSON-RPC (no header) and v1.0 (A2A-Version: 1.0, and the SDK's client) alike, over real chains.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Part, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, dataPart, legacyDataOf, rpc, rpcStream, textPart, userMessage, v1Rpc } from '../support/a2a.js';
import { newAccount, type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;

type LegacyPart = { kind: 'text'; text: string } | { kind: 'data'; data: Record<string, unknown> };
interface LegacyTask {
  kind: 'task';
  id: string;
  contextId: string;
  status: { state: string; message?: { role: string; parts: LegacyPart[] } };
  artifacts?: { name?: string; parts: LegacyPart[] }[];
  history?: { role: string; messageId: string; parts: LegacyPart[] }[];
  metadata?: Record<string, unknown>;
}

/** A v0.3 message/send (no version header), continuing `ids` when given: the raw JSON-RPC body. */
const legacySend = async (app: Express, parts: LegacyPart[], ids: { taskId?: string; contextId?: string } = {}) =>
  (await rpc(app, 'message/send', { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts, ...ids } })).body;

describe('A2A conversations: every message answered with a task', () => {
  let networks: TestNetworks;
  let t: TestApp;
  let app: Express;
  let server: Server;
  let client: Client;
  let agent: RegisteredAgent;
  let base: string;

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

  it('v0.3: no intent, then the intent, then the agent: input-required twice on one task, then completed with the answer', async () => {
    const first = (await legacySend(app, [{ kind: 'text', text: 'Hello from a client that did not say what it wants' }])).result as LegacyTask;
    expect(first).toMatchObject({ kind: 'task', status: { state: 'input-required', message: { role: 'agent' } } });
    expect(legacyDataOf(first)).toMatchObject({ missing: ['intent'], intents: expect.arrayContaining(['lookup', 'register']) });
    expect(first.status.message?.parts[0]).toMatchObject({ kind: 'text', text: expect.stringMatching(/^Missing intent/) });
    expect(first.metadata).toEqual({ registryInput: { fields: {}, missing: ['intent'] } });

    const ids = { taskId: first.id, contextId: first.contextId };
    const second = (await legacySend(app, [{ kind: 'data', data: { intent: 'lookup', network: 'testnet' } }], ids)).result as LegacyTask;
    expect(second).toMatchObject({ id: first.id, contextId: first.contextId, status: { state: 'input-required' } });
    expect(legacyDataOf(second)).toMatchObject({ missing: ['agentId'], intent: 'lookup' });
    expect(second.metadata).toEqual({ registryInput: { intent: 'lookup', fields: { network: 'testnet' }, missing: ['agentId'] } });

    // the earlier turns gave the intent and the network; this one the agent, as a bare number
    const third = (await legacySend(app, [{ kind: 'text', text: String(agent.agentId) }], { taskId: first.id })).result as LegacyTask;
    const rest = await request(app).get(`/api/agent/info/${TESTNET}/${agent.agentId}`);
    expect(third).toMatchObject({ id: first.id, contextId: first.contextId, status: { state: 'completed' } });
    expect(third.artifacts).toHaveLength(1);
    expect(third.artifacts?.[0]).toMatchObject({ name: 'lookup-answer' });
    expect(legacyDataOf(third)).toEqual(rest.body);

    // while it waited, the task held the whole conversation: each user turn and the agent's question after it; once
    // answered it keeps the answer alone (the client has the messages; one may carry a session token)
    expect(second.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
    expect(second.history?.[0]?.parts).toEqual([{ kind: 'text', text: 'Hello from a client that did not say what it wants' }]);
    const got = (await rpc(app, 'tasks/get', { id: first.id })).body.result as LegacyTask;
    expect(got.status.state).toBe('completed');
    expect(got.artifacts).toEqual(third.artifacts);
    expect(got.history ?? []).toEqual([]);
    // a finished task takes no further message
    const late = await legacySend(app, [{ kind: 'text', text: 'help' }], ids);
    expect(late.error).toMatchObject({ code: -32004 });
  });

  it('a conversation ends when a follow-up only says so: completed without an answer; a new message is a new task', async () => {
    const first = (await legacySend(app, [{ kind: 'data', data: { intent: 'lookup' } }])).result as LegacyTask;
    expect(first.status.state).toBe('input-required');
    const closed = (await legacySend(app, [{ kind: 'text', text: 'Never mind.' }], { taskId: first.id })).result as LegacyTask;
    expect(closed).toMatchObject({ id: first.id, status: { state: 'completed' } });
    expect(closed.artifacts ?? []).toEqual([]);
    expect(closed.status.message?.parts).toContainEqual({ kind: 'data', data: { closed: true } });
    // said first, it asks nothing: the agent asks back
    const alone = (await legacySend(app, [{ kind: 'text', text: 'done' }])).result as LegacyTask;
    expect(alone.status.state).toBe('input-required');
  });

  it('tasks/get honours historyLength: the last n messages, none for 0, all without it', async () => {
    const first = (await legacySend(app, [{ kind: 'text', text: 'first turn' }])).result as LegacyTask;
    for (const text of ['second turn', 'third turn']) await legacySend(app, [{ kind: 'text', text }], { taskId: first.id });
    const get = async (params: object) => ((await rpc(app, 'tasks/get', { id: first.id, ...params })).body.result as LegacyTask).history ?? [];
    const all = await get({});
    expect(all.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent', 'user', 'agent']);
    expect(await get({ historyLength: 2 })).toEqual(all.slice(-2));
    expect(await get({ historyLength: 1 })).toEqual(all.slice(-1));
    expect(await get({ historyLength: 0 })).toEqual([]);
    expect(await get({ historyLength: 1000 })).toEqual(all);
    // v1.0 too, and on the send's own answer
    const v1 = await v1Rpc(app, 'GetTask', { id: first.id, historyLength: 3 });
    expect(v1.body.result.history).toHaveLength(3);
    const sent = await rpc(app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'fourth turn' }], taskId: first.id },
      configuration: { historyLength: 1 },
    });
    expect(sent.body.result.history).toHaveLength(1);
    expect(sent.body.result.history[0]).toMatchObject({ role: 'agent' });
  });

  it('unicode and control characters are answered and kept as sent', async () => {
    const text = 'Unicode: 你好, здравствуйте, مرحبا, こんにちは 🧑‍🚀\nControl chars: \t\b\f\r\n';
    const sent = (await legacySend(app, [{ kind: 'text', text }])).result as LegacyTask;
    expect(sent.status.state).toBe('input-required');
    const got = (await rpc(app, 'tasks/get', { id: sent.id })).body.result as LegacyTask;
    expect(got.history?.[0]?.parts).toEqual([{ kind: 'text', text }]);
    // and a request written in another script around the keywords still reads
    const lookup = (await legacySend(app, [{ kind: 'text', text: `请 lookup agent ${agent.agentId} on testnet — merci` }])).result as LegacyTask;
    expect(lookup.status.state).toBe('completed');
    expect(legacyDataOf(lookup)).toMatchObject({ agentId: Number(agent.agentId), chainId: TESTNET });
  });

  it('explicit nulls in optional fields read as absent: a new task', async () => {
    const res = await rpc(app, 'message/send', {
      message: {
        kind: 'message',
        messageId: crypto.randomUUID(),
        role: 'user',
        parts: [{ kind: 'data', data: { intent: 'help' } }],
        taskId: null,
        contextId: null,
        metadata: null,
        referenceTaskIds: null,
        extensions: null,
      },
      configuration: null,
      metadata: null,
    });
    expect(res.body.error, JSON.stringify(res.body)).toBeUndefined();
    expect(res.body.result).toMatchObject({ kind: 'task', id: expect.any(String), contextId: expect.any(String), status: { state: 'completed' } });
    // a null inside the request's own fields is no value either
    const lookup = (await legacySend(app, [{ kind: 'data', data: { intent: 'lookup', agentId: null, network: 'testnet' } }])).result as LegacyTask;
    expect(legacyDataOf(lookup)).toMatchObject({ missing: ['agentId'] });
    expect(lookup.metadata).toEqual({ registryInput: { intent: 'lookup', fields: { network: 'testnet' }, missing: ['agentId'] } });
  });

  it('v0.3: an input-required task is canceled; a second cancel is TaskNotCancelableError (v0.3 §8.2), a v1.0 one answers the canceled task', async () => {
    const task = (await legacySend(app, [{ kind: 'text', text: 'Task for cancel test' }])).result as LegacyTask;
    const cancel = await rpc(app, 'tasks/cancel', { id: task.id });
    expect(cancel.body.result).toMatchObject({ id: task.id, status: { state: 'canceled' } });
    const again = await rpc(app, 'tasks/cancel', { id: task.id });
    expect(again.body.error).toMatchObject({ code: -32002, message: expect.stringContaining('already canceled') });
    const v1 = await v1Rpc(app, 'CancelTask', { id: task.id });
    expect(v1.body.result).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } });
    // nor does a canceled task take a message
    expect((await legacySend(app, [{ kind: 'text', text: 'help' }], { taskId: task.id })).error).toMatchObject({ code: -32004 });
  });

  it('register in turns: the mode asked for, then the value the service refused, then the open session task; it takes no message', async () => {
    const first = (await legacySend(app, [{ kind: 'text', text: 'Register an agent on testnet' }])).result as LegacyTask;
    expect(first.status.state).toBe('input-required');
    expect(legacyDataOf(first)).toMatchObject({ intent: 'register', missing: ['mode'] });
    // "linked" names the mode; the service then refuses the session without the human's wallet (its 400, as REST says it)
    const second = (await legacySend(app, [{ kind: 'text', text: 'a linked one please' }], { taskId: first.id })).result as LegacyTask;
    expect(second.status.state).toBe('input-required');
    expect(legacyDataOf(second)).toMatchObject({ intent: 'register', status: 400, missing: [], error: expect.stringContaining('humanAddress') });
    const human = newAccount().address;
    const third = (await legacySend(app, [{ kind: 'data', data: { humanAddress: human } }], { taskId: first.id })).result as LegacyTask;
    expect(third).toMatchObject({ id: first.id, status: { state: 'auth-required' } });
    const artifact = third.artifacts?.[0]?.parts.find((p) => p.kind === 'data');
    expect(artifact?.kind === 'data' && artifact.data).toMatchObject({ stage: 'qr-ready', mode: 'linked', network: 'testnet' });
    expect(t.services.watcher.size).toBe(1);
    // the session task follows the human by itself
    const extra = await legacySend(app, [{ kind: 'text', text: 'are you done?' }], { taskId: first.id });
    expect(extra.error).toMatchObject({ code: -32004, message: expect.stringContaining('completes by itself') });
    expect((await rpc(app, 'tasks/cancel', { id: first.id })).body.result.status.state).toBe('canceled');
    expect(t.services.watcher.size).toBe(0);
  });

  it('v0.3 message/stream of a message without intent: one event, the input-required task, and the stream ends; resubscribe shows it and waits', async () => {
    const res = await request(app)
      .post('/api/a2a')
      .set('Accept', 'text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 's',
        method: 'message/stream',
        params: {
          message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'Test message for resubscribe' }] },
        },
      });
    const events = res.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as { result: LegacyTask });
    expect(events).toHaveLength(1);
    expect(events[0]!.result).toMatchObject({ kind: 'task', status: { state: 'input-required' } });
    // the task is not final: its stream waits for the next turn (a2a-subscribe.test.ts follows one to the end)
    const again = await rpcStream(base, 'tasks/resubscribe', { id: events[0]!.result.id });
    expect(await again.next()).toMatchObject({ id: events[0]!.result.id, status: expect.objectContaining({ state: 'input-required' }) });
    expect((await rpc(app, 'tasks/cancel', { id: events[0]!.result.id })).body.result.status.state).toBe('canceled');
    expect(await again.rest()).toEqual([expect.objectContaining({ kind: 'status-update', final: true })]);
  });

  it('v1.0 through the SDK client: the same turns on one task, the same answers', async () => {
    const send = async (parts: Part[], task?: Task): Promise<Task> => {
      const message = { ...userMessage(parts), taskId: task?.id ?? '', contextId: task?.contextId ?? '' };
      const result = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
      expect('id' in result && 'status' in result, 'a task answer').toBe(true);
      return result as Task;
    };
    const first = await send([textPart('good morning')]);
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(answerOf(first)).toMatchObject({ missing: ['intent'] });
    const second = await send([textPart('is it backed by a human?')], first);
    expect(second).toMatchObject({ id: first.id, contextId: first.contextId });
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(answerOf(second)).toMatchObject({ intent: 'verify', missing: ['agentId'] });
    const third = await send([dataPart({ agentId: Number(agent.agentId), chainId: TESTNET })], first);
    expect(third.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const rest = await request(app).get(`/api/agent/verify/${TESTNET}/${agent.agentId}`);
    expect(answerOf(third)).toEqual(rest.body);
    expect(second.history).toHaveLength(4);
    const got = await client.getTask({ tenant: '', id: first.id, historyLength: 2 });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.artifacts).toEqual(third.artifacts);
    expect(got.history).toEqual([]);
    // the raw v1.0 wire: a task result, and a v1.0 cancel of an input-required task
    const raw = await v1Rpc(app, 'SendMessage', { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hmm' }] } });
    expect(raw.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const canceled = await v1Rpc(app, 'CancelTask', { id: raw.body.result.task.id });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('v1.0 SendStreamingMessage of a query: the completed task as the one event', async () => {
    const events = [];
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: userMessage([dataPart({ intent: 'freshness', agentId: Number(agent.agentId), network: 'testnet' })]),
      configuration: undefined,
      metadata: undefined,
    })) {
      events.push(event.payload);
    }
    expect(events.map((p) => p?.$case)).toEqual(['task']);
    const task = events[0]?.value as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toMatchObject({ agentId: Number(agent.agentId), isProofFresh: true });
  });
});
