// A2A push notifications end to end: a real webhook receiver on this machine (the app allows private
// networks, as a developer would), register tasks over v1.0 (SDK client, config inline in SendMessage) and v0.3
// (raw tasks/pushNotificationConfig/*), configs given with a query or a conversation (told of the task answered at
// once, then of later turns), the body shape of each version, credentials as headers, configs that survive a
// restart sealed at rest and notify from the resumed task, retries, limits; and the default policy refusing
// internal and clear-text destinations with JSON-RPC errors.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONFIGS_PER_TASK } from '../../src/a2a/push-config-store.js';
import type { Services } from '../../src/services/index.js';
import { PUSH_CONFIG_WRITES } from '../../src/services/rate-limits.js';
import { dataPart, openRegisterTask, REGISTER_TESTNET, rpc, userMessage, v1Rpc } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A webhook receiver: records every POST; `failNext` answers that many with 503 first. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  failNext = 0;
  #server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      if (this.failNext > 0) {
        this.failNext--;
        res.statusCode = 503;
        return res.end();
      }
      this.deliveries.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text) as Record<string, unknown> });
      res.end();
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** The deliveries to `path`, once `done` holds for them (at most 10 s). */
  async waitFor(path: string, done: (deliveries: Delivery[]) => boolean): Promise<Delivery[]> {
    for (let i = 0; i < 200; i++) {
      const to = this.deliveries.filter((d) => d.path === path);
      if (done(to)) return to;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no matching delivery to ${path}: ${JSON.stringify(this.deliveries.filter((d) => d.path === path).map((d) => d.body))}`);
  }
}

describe('A2A push notifications to a webhook on this machine', () => {
  let networks: TestNetworks;
  let t: TestApp;
  let server: Server;
  let client: Client;
  const receiver = new Receiver();
  const apps: TestApp[] = [];

  beforeAll(async () => {
    networks = await deployTestNetworks();
    await receiver.start();
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = testApp(networks.chains, { publicUrl: base, pushPolicy: { allowPrivateNetworks: true }, push: { pushRetryDelaysMs: [50, 50] } });
    apps.push(t);
    server.on('request', t.app);
    client = await new ClientFactory().createFromUrl(base);
  });

  afterAll(async () => {
    for (const one of apps) one.services.watcher.stopAll();
    await Promise.all(apps.map((one) => one.a2a.idle()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await receiver.stop();
  });

  it('the card advertises push notifications', async () => {
    const card = await request(t.app).get('/.well-known/agent-card.json');
    expect(card.body.capabilities).toMatchObject({ pushNotifications: true, streaming: true });
  });

  it('v1.0: a config in SendMessage gets every update as a StreamResponse, with the Authorization header, up to completed', async () => {
    const path = '/v1-hook';
    const result = await client.sendMessage({
      tenant: '',
      message: userMessage([dataPart(REGISTER_TESTNET)]),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url: `${receiver.url}${path}`,
          token: '',
          authentication: { scheme: 'Bearer', credentials: 'hook-secret-1' },
        },
        historyLength: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    });
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    const deepLink = String((task.artifacts[0]!.parts[0]!.content as { value: Record<string, unknown> }).value['deepLink']);
    await approveDeepLink(t.app, networks, String(deepLink), { callback: false });

    const completed = (d: Delivery) =>
      (d.body['statusUpdate'] as { status?: { state?: string } } | undefined)?.status?.state === 'TASK_STATE_COMPLETED';
    const deliveries = await receiver.waitFor(path, (all) => all.some(completed));
    for (const d of deliveries) {
      expect(d.headers['authorization']).toBe('Bearer hook-secret-1');
      expect(d.headers['content-type']).toBe('application/a2a+json');
      expect(d.headers['user-agent']).toMatch(/^agent-identity-registry\//);
    }
    // the task first, then its updates, in order, ending with completed
    expect(Object.keys(deliveries[0]!.body)).toEqual(['task']);
    expect(deliveries.findIndex(completed)).toBe(deliveries.length - 1);
    const final = deliveries.at(-1)!.body['statusUpdate'] as { taskId: string; status: { message: { parts: { data?: Record<string, unknown> }[] } } };
    expect(final.taskId).toBe(task.id);
    expect(final.status.message.parts.find((p) => p.data)?.data).toMatchObject({
      stage: 'completed',
      network: 'testnet',
      agentId: expect.any(Number),
    });
  });

  it('v0.3: set, get and list a config, then the webhook gets v0.3 Task bodies with the token header', async () => {
    const path = '/v03-hook';
    const {
      taskId,
      artifact: { deepLink },
    } = await openRegisterTask(t.app);
    const set = await rpc(t.app, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { id: 'hook-1', url: `${receiver.url}${path}`, token: 'v03-token' },
    });
    expect(set.body.result, JSON.stringify(set.body)).toMatchObject({
      taskId,
      pushNotificationConfig: { id: 'hook-1', url: `${receiver.url}${path}` },
    });
    const got = await rpc(t.app, 'tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'hook-1' });
    expect(got.body.result).toMatchObject({ taskId, pushNotificationConfig: { id: 'hook-1' } });
    const list = await rpc(t.app, 'tasks/pushNotificationConfig/list', { id: taskId });
    expect(list.body.result).toHaveLength(1);

    await approveDeepLink(t.app, networks, String(deepLink), { callback: false });
    const deliveries = await receiver.waitFor(path, (all) => all.some((d) => (d.body['status'] as { state?: string })?.state === 'completed'));
    const last = deliveries.at(-1)!;
    expect(last.headers['x-a2a-notification-token']).toBe('v03-token');
    expect(last.body).toMatchObject({ kind: 'task', id: taskId, status: { state: 'completed' } });
  });

  it('v0.3: a config set without an id is got back with the task id alone (the TaskIdParams form), on an input-required task too', async () => {
    // an input-required task (a message without intent) takes a webhook: its follow-ups will notify it
    const sent = await rpc(t.app, 'message/send', {
      message: {
        kind: 'message',
        messageId: crypto.randomUUID(),
        role: 'user',
        parts: [{ kind: 'text', text: 'Task for push notification config test' }],
      },
    });
    const taskId = sent.body.result.id as string;
    expect(sent.body.result.status.state).toBe('input-required');
    const set = await rpc(t.app, 'tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: `${receiver.url}/no-id` } });
    expect(set.body.result, JSON.stringify(set.body)).toMatchObject({ taskId, pushNotificationConfig: { url: `${receiver.url}/no-id` } });
    const got = await rpc(t.app, 'tasks/pushNotificationConfig/get', { id: taskId });
    expect(got.body.result, JSON.stringify(got.body)).toMatchObject({ taskId, pushNotificationConfig: { url: `${receiver.url}/no-id` } });
    // an id that names no config is still not found
    const unknown = await rpc(t.app, 'tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'default' });
    expect(unknown.body.error).toMatchObject({ code: -32001 });
    // a second config: without an id the request no longer names one
    await rpc(t.app, 'tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { id: 'second', url: `${receiver.url}/second` } });
    expect((await rpc(t.app, 'tasks/pushNotificationConfig/get', { id: taskId })).body.error).toMatchObject({ code: -32001 });
    // the follow-up that completes the task notifies the webhooks
    await rpc(t.app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'help' }], taskId },
    });
    const deliveries = await receiver.waitFor('/no-id', (all) => all.length > 0);
    expect(deliveries.at(-1)!.body).toMatchObject({ kind: 'task', id: taskId, status: { state: 'completed' } });
  });

  it('v1.0: a config given with a query is kept for its task and told of the answer', async () => {
    const path = '/query-hook';
    const sent = await v1Rpc(t.app, 'SendMessage', {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: { intent: 'help' } }] },
      configuration: {
        taskPushNotificationConfig: { url: `${receiver.url}${path}`, authentication: { scheme: 'Bearer', credentials: 'query-secret' } },
      },
    });
    const task = sent.body.result?.task;
    expect(task, JSON.stringify(sent.body)).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    const [delivery] = await receiver.waitFor(path, (all) => all.length > 0);
    expect(delivery!.headers['authorization']).toBe('Bearer query-secret');
    expect(delivery!.body).toEqual({
      task: expect.objectContaining({ id: task.id, status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }) }),
    });
    expect((delivery!.body['task'] as { artifacts: unknown[] }).artifacts).toEqual(task.artifacts);
    const listed = await v1Rpc(t.app, 'ListTaskPushNotificationConfigs', { taskId: task.id });
    expect(listed.body.result.configs).toEqual([expect.objectContaining({ taskId: task.id, url: `${receiver.url}${path}` })]);
  });

  it('v0.3: a config given with a message that asks back is told of the question, then of the turn that completes it', async () => {
    const path = '/conversation-hook';
    const sent = await rpc(t.app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'good evening' }] },
      configuration: { pushNotificationConfig: { url: `${receiver.url}${path}`, token: 'conversation-token' } },
    });
    const taskId = sent.body.result?.id as string;
    expect(sent.body.result, JSON.stringify(sent.body)).toMatchObject({ status: { state: 'input-required' } });
    const [asked] = await receiver.waitFor(path, (all) => all.length > 0);
    expect(asked!.headers['x-a2a-notification-token']).toBe('conversation-token');
    expect(asked!.body).toMatchObject({ kind: 'task', id: taskId, status: { state: 'input-required' } });

    await rpc(t.app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'help' }], taskId },
    });
    const deliveries = await receiver.waitFor(path, (all) => all.some((d) => (d.body['status'] as { state?: string })?.state === 'completed'));
    expect(deliveries.at(-1)!.body).toMatchObject({ kind: 'task', id: taskId, status: { state: 'completed' } });
  });

  it('retries a webhook that answers 503', async () => {
    const path = '/flaky-hook';
    const { taskId } = await openRegisterTask(t.app);
    receiver.failNext = 1;
    await rpc(t.app, 'tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: `${receiver.url}${path}` } });
    // an update the webhook hears of: cancelling the task
    const cancel = await rpc(t.app, 'tasks/cancel', { id: taskId });
    expect(cancel.body.result.status.state).toBe('canceled');
    const deliveries = await receiver.waitFor(path, (all) => all.length > 0);
    expect(deliveries[0]!.body).toMatchObject({ id: taskId, status: { state: 'canceled' } });
    expect(receiver.failNext).toBe(0);
  });

  it(`keeps at most ${MAX_CONFIGS_PER_TASK} configs per task, and deletes them`, async () => {
    const { taskId } = await openRegisterTask(t.app);
    for (let i = 0; i < MAX_CONFIGS_PER_TASK; i++) {
      const res = await rpc(t.app, 'tasks/pushNotificationConfig/set', {
        taskId,
        pushNotificationConfig: { id: `c${i}`, url: `${receiver.url}/c${i}` },
      });
      expect(res.body.result, JSON.stringify(res.body)).toBeDefined();
    }
    const over = await rpc(t.app, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { id: 'one-more', url: `${receiver.url}/x` },
    });
    expect(over.status).toBe(200);
    expect(over.body.error).toMatchObject({ code: -32602, message: expect.stringContaining(`at most ${MAX_CONFIGS_PER_TASK}`) });
    // replacing an existing id is not a new config
    const replaced = await rpc(t.app, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { id: 'c0', url: `${receiver.url}/c0-new` },
    });
    expect(replaced.body.result.pushNotificationConfig.url).toBe(`${receiver.url}/c0-new`);
    const deleted = await rpc(t.app, 'tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: 'c3' });
    expect(deleted.body.error).toBeUndefined();
    const list = await rpc(t.app, 'tasks/pushNotificationConfig/list', { id: taskId });
    expect((list.body.result as { pushNotificationConfig: { id: string } }[]).map((c) => c.pushNotificationConfig.id).sort()).toEqual([
      'c0',
      'c1',
      'c2',
      'c4',
      'c5',
      'c6',
      'c7',
      'c8',
      'c9',
    ]);
    await rpc(t.app, 'tasks/cancel', { id: taskId });
  });

  it('configs survive a restart sealed at rest, and the resumed task notifies the webhook when it completes', async () => {
    const path = '/restart-hook';
    const before = testApp(networks.chains, { publicUrl: 'http://127.0.0.1:1', pushPolicy: { allowPrivateNetworks: true } });
    apps.push(before);
    const {
      taskId,
      artifact: { deepLink },
    } = await openRegisterTask(before.app);
    await rpc(before.app, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { url: `${receiver.url}${path}?key=in-query`, authentication: { schemes: ['Bearer'], credentials: 'restart-secret' } },
    });
    const atRest = JSON.stringify(await before.store.get(`a2a:push:${taskId}`));
    expect(atRest).toBeDefined();
    expect(atRest).not.toContain('restart-secret');
    expect(atRest).not.toContain(path);
    before.services.watcher.stopAll(); // the old process is gone

    const after = testApp(networks.chains, {
      publicUrl: 'http://127.0.0.1:1',
      store: before.store,
      sessionSecret: before.sessionSecret,
      pushPolicy: { allowPrivateNetworks: true },
    });
    apps.push(after);
    const list = await rpc(after.app, 'tasks/pushNotificationConfig/list', { id: taskId });
    expect(list.body.result[0].pushNotificationConfig).toMatchObject({ url: `${receiver.url}${path}?key=in-query` });
    await approveDeepLink(after.app, networks, String(deepLink), { callback: false });
    const deliveries = await receiver.waitFor(`${path}?key=in-query`, (all) =>
      all.some((d) => (d.body['status'] as { state?: string })?.state === 'completed'),
    );
    expect(deliveries.at(-1)!.headers['authorization']).toBe('Bearer restart-secret');
    expect(deliveries.at(-1)!.body).toMatchObject({ kind: 'task', id: taskId });
  });
});

describe('A2A push notifications under the default policy', () => {
  let networks: TestNetworks;
  let app: Express;
  let services: Services;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    ({ app, services } = testApp(networks.chains));
  });
  afterAll(() => services.watcher.stopAll());

  it.each([
    ['http://hooks.example.com/a2a', /must use https, not http/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is not a public address/],
    ['https://localhost/hook', /not a public address/],
    ['https://169.254.169.254/latest/meta-data', /not a public address/],
    ['https://[::ffff:10.0.0.1]/hook', /not a public address/],
    ['https://user:pass@hooks.example.com/a2a', /must not carry credentials/],
    ['', /needs url/],
  ])('refuses %s with a JSON-RPC invalid-params error', async (url, message) => {
    const { taskId } = await openRegisterTask(app);
    const res = await rpc(app, 'tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url } });
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: -32602 });
    expect(res.body.error.message).toMatch(message);
    await rpc(app, 'tasks/cancel', { id: taskId });
  });

  it('refuses header-breaking credentials', async () => {
    const { taskId } = await openRegisterTask(app);
    const res = await rpc(app, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { url: 'https://93.184.215.14/hook', token: 'a\r\nX-Injected: 1' },
    });
    expect(res.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('token') });
    await rpc(app, 'tasks/cancel', { id: taskId });
  });

  it('refuses a private URL given inline with message/send before any task starts', async () => {
    const open = services.watcher.size;
    const res = await rpc(app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] },
      configuration: { blocking: false, pushNotificationConfig: { url: 'https://10.0.0.8/hook' } },
    });
    expect(res.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/10\.0\.0\.8 is not a public address/) });
    expect(services.watcher.size).toBe(open);
  });

  it('refuses a private URL given inline with a query, whose answer is then not given', async () => {
    const res = await rpc(app, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'help' }] },
      configuration: { pushNotificationConfig: { url: 'https://10.0.0.9/hook' } },
    });
    expect(res.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/10\.0\.0\.9 is not a public address/) });
    expect(res.body.result).toBeUndefined();
  });

  it(`limits config writes to ${PUSH_CONFIG_WRITES.limit} a minute per address`, async () => {
    const from = (method: string, params: object) => rpc(app, method, params, '203.0.113.77');
    const { taskId } = await openRegisterTask(app, '203.0.113.77');
    const set = () => from('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { id: 'same', url: 'https://93.184.215.14/hook' } });
    for (let i = 0; i < PUSH_CONFIG_WRITES.limit; i++) expect((await set()).body.error).toBeUndefined();
    expect((await set()).body.error).toMatchObject({ code: -32602, message: expect.stringContaining('Too many push notification configs') });
    await from('tasks/cancel', { id: taskId });
  });

  it('a config for an unknown task is a task-not-found error', async () => {
    const res = await rpc(app, 'tasks/pushNotificationConfig/set', {
      taskId: 'no-such-task',
      pushNotificationConfig: { url: 'https://93.184.215.14/hook' },
    });
    expect(res.body.error).toMatchObject({ code: -32001 });
  });
});
