// A new message the executor answers in the same turn (a query completed or failed, or input required) is answered by
// RegistryRequestHandler itself (its answerer, RegistryAgentExecutor.answerAtOnce, one save) instead of the SDK's
// event bus, queue and result manager. It must leave exactly what the SDK's path leaves: the same returned task and
// the same stored task, for every kind of answer and historyLength. Two handlers over the same services and sqlite
// store tell: one given the executor as its answerer, one given none (the SDK runs every message). Then the same over
// HTTP, v0.3 and v1.0, send and get.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, type Part, Role, type SendMessageConfiguration, type Task, TaskState } from '@a2a-js/sdk';
import { DefaultExecutionEventBusManager, DefaultPushNotificationSender, InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceAgentCard } from '../../src/a2a/agent-card.js';
import { ClientAddress } from '../../src/a2a/client-address.js';
import { RegistryAgentExecutor } from '../../src/a2a/executor.js';
import { RegistryRequestHandler, type TurnAnswerer } from '../../src/a2a/request-handler.js';
import { KeyValueTaskStore } from '../../src/a2a/task-store.js';
import { SealedValues } from '../../src/store/sealed-values.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { answerOf, dataPart, legacyDataOf, legacySend, textPart, userMessage } from '../support/a2a.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const TESTNET = 11142220;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The task with the values each run makes anew replaced by names: its id, its context id (unless the caller gave it),
 * its artifacts' ids, the ids of the messages the agent made, and the status time. Everything else must match.
 */
function normalized(task: Task): unknown {
  const names = new Map<string, string>([
    [task.id, '<task>'],
    [task.contextId, '<context>'],
  ]);
  for (const [i, artifact] of task.artifacts.entries()) names.set(artifact.artifactId, `<artifact ${i}>`);
  const agentMessages = [task.status?.message, ...task.history].filter((m): m is Message => m?.role === Role.ROLE_AGENT);
  for (const message of agentMessages) if (!names.has(message.messageId)) names.set(message.messageId, `<agent message ${names.size}>`);
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return names.get(value) ?? value;
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    return value;
  };
  const named = walk(task) as Task;
  expect(Date.parse(named.status?.timestamp ?? ''), 'a status time').toBeGreaterThan(0);
  return { ...named, status: { ...named.status, timestamp: '<time>' } };
}

describe('A2A messages answered at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-direct-'));
  let networks: TestNetworks;
  let agent: RegisteredAgent;
  let store: SqliteStore;
  let t: TestApp;
  let app: Express;
  let tasks: KeyValueTaskStore;
  /** The handler that answers at once. */
  let direct: RegistryRequestHandler;
  /** The same handler, the SDK's path: no answerer. */
  let sdk: RegistryRequestHandler;

  // held still while one message goes down both paths (freshness counts its secondsRemaining from this clock)
  let heldAt: number | undefined;
  const bothPaths = async (message: Message, configuration?: Partial<SendMessageConfiguration>) => {
    heldAt = Date.now();
    try {
      return [await send(direct, message, configuration), await send(sdk, message, configuration)] as const;
    } finally {
      heldAt = undefined;
    }
  };
  const caller = () => new ServerCallContext({ user: new ClientAddress('203.0.113.40') });
  const send = async (handler: RegistryRequestHandler, message: Message, configuration?: Partial<SendMessageConfiguration>) => {
    const config = configuration && { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false, ...configuration };
    // each handler its own copy: neither may see what the other did to the message
    const result = await handler.sendMessage({ tenant: '', message: structuredClone(message), configuration: config, metadata: undefined }, caller());
    expect('status' in result, 'a task answer').toBe(true);
    return result as Task;
  };

  beforeAll(async () => {
    networks = await deployTestNetworks();
    agent = await registerLinked(networks.testnet);
    store = new SqliteStore(join(dir, 'data.sqlite'));
    t = testApp(networks.chains, { store, clock: () => heldAt ?? Date.now() });
    app = t.app;
    // as agent.ts builds it, over the same services and store
    const card = serviceAgentCard({ publicUrl: 'http://127.0.0.1:3000', version: '0.0.0-test' });
    tasks = new KeyValueTaskStore(store, new SealedValues(t.sessionSecret, 'a2a-task'));
    const executor = new RegistryAgentExecutor(t.services);
    const pushConfigs = new InMemoryPushNotificationStore();
    const handler = (answerer?: TurnAnswerer) =>
      new RegistryRequestHandler({
        card,
        tasks,
        executor,
        ...(answerer ? { answerer } : {}),
        buses: new DefaultExecutionEventBusManager(),
        pushConfigs,
        push: new DefaultPushNotificationSender(pushConfigs),
        options: { keepBusAliveStates: [] },
      });
    direct = handler(executor);
    sdk = handler();
  });

  afterAll(async () => {
    t?.services.watcher.stopAll();
    t?.a2a.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const messages: [string, () => Part[], TaskState][] = [
    [
      'verify of a registered agent',
      () => [dataPart({ intent: 'verify', agentId: Number(agent.agentId), network: 'testnet' })],
      TaskState.TASK_STATE_COMPLETED,
    ],
    [
      'verify of an agent that does not exist',
      () => [dataPart({ intent: 'verify', agentId: 987654, network: 'testnet' })],
      TaskState.TASK_STATE_COMPLETED,
    ],
    [
      'lookup of a registered agent',
      () => [dataPart({ intent: 'lookup', agentId: Number(agent.agentId), chainId: TESTNET })],
      TaskState.TASK_STATE_COMPLETED,
    ],
    [
      'lookup of an agent that does not exist',
      () => [dataPart({ intent: 'lookup', agentId: 987654, chainId: TESTNET })],
      TaskState.TASK_STATE_FAILED,
    ],
    [
      'freshness in plain text',
      () => [textPart(`{"intent": "freshness", "agentId": ${agent.agentId}, "chainId": ${TESTNET}}`)],
      TaskState.TASK_STATE_COMPLETED,
    ],
    ['help as a data part', () => [dataPart({ intent: 'help' })], TaskState.TASK_STATE_COMPLETED],
    ['plain text "help"', () => [textPart('help')], TaskState.TASK_STATE_COMPLETED],
    ['verify without agentId', () => [dataPart({ intent: 'verify', network: 'testnet' })], TaskState.TASK_STATE_INPUT_REQUIRED],
    [
      'verify on a chain the service does not serve',
      () => [dataPart({ intent: 'verify', agentId: 1, chainId: 1 })],
      TaskState.TASK_STATE_INPUT_REQUIRED,
    ],
    ['status of a token that is none', () => [dataPart({ intent: 'status', sessionToken: 'not-a-token' })], TaskState.TASK_STATE_FAILED],
    ['no intent at all', () => [textPart('good morning')], TaskState.TASK_STATE_INPUT_REQUIRED],
  ];
  const configurations: [string, Partial<SendMessageConfiguration> | undefined][] = [
    ['no configuration', undefined],
    ['historyLength 0', { historyLength: 0 }],
    ['historyLength 1', { historyLength: 1 }],
    ['historyLength 5', { historyLength: 5 }],
    ['returnImmediately', { returnImmediately: true }],
  ];
  const cases = messages.flatMap(([name, parts, state]) =>
    configurations.map(([config, configuration]) => [name, config, parts, state, configuration] as const),
  );

  it.each(cases)('%s, %s: the same task returned and stored as on the SDK path', async (_name, _config, parts, state, configuration) => {
    const message = userMessage(parts());
    const [answered, viaSdk] = await bothPaths(message, configuration);
    expect(answered.status?.state, JSON.stringify(answerOf(answered))).toBe(state);
    // the two paths did run: the answer at once has a time-ordered id, the SDK a random one
    expect(answered.id).toMatch(UUID_V7);
    expect(answered.contextId).toMatch(UUID_V7);
    expect(viaSdk.id).not.toMatch(UUID_V7);

    expect(normalized(answered)).toStrictEqual(normalized(viaSdk));
    const stored = await tasks.load(answered.id);
    const storedViaSdk = await tasks.load(viaSdk.id);
    expect(stored && normalized(stored)).toStrictEqual(storedViaSdk && normalized(storedViaSdk));
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      // a conversation waiting for its next turn is stored whole, whatever the send asked to see: the user's message,
      // then the agent's question
      expect(stored?.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
      expect(stored?.history[0]).toMatchObject({ messageId: message.messageId, taskId: answered.id, contextId: answered.contextId });
      if (configuration?.historyLength === undefined) expect(answered).toStrictEqual(stored);
    } else {
      // a finished query keeps its answer (status, artifacts) and nothing of the messages that asked it
      expect(stored).toStrictEqual({ ...answered, history: [], metadata: {} });
    }
  });

  it('keeps the contextId a message names, on both paths', async () => {
    for (const [name, parts] of messages) {
      const message = { ...userMessage(parts()), contextId: `conversation-${crypto.randomUUID()}` };
      const [answered, viaSdk] = await bothPaths(message);
      expect(answered.id, name).toMatch(UUID_V7);
      expect(answered.contextId, name).toBe(message.contextId);
      expect(viaSdk.contextId, name).toBe(message.contextId);
      expect((await tasks.load(answered.id))?.contextId, name).toBe(message.contextId);
      expect(answered.status?.message?.contextId ?? message.contextId, name).toBe(message.contextId);
      expect(normalized(answered), name).toStrictEqual(normalized(viaSdk));
    }
  });

  it('leaves the caller no extension active, as the SDK does for a card that names none', async () => {
    const message = userMessage([textPart('help')]);
    const contexts = [direct, sdk].map(
      () => new ServerCallContext({ user: new ClientAddress('203.0.113.41'), requestedExtensions: ['urn:example:ext'] }),
    );
    await direct.sendMessage({ tenant: '', message: structuredClone(message), configuration: undefined, metadata: undefined }, contexts[0]!);
    await sdk.sendMessage({ tenant: '', message: structuredClone(message), configuration: undefined, metadata: undefined }, contexts[1]!);
    expect(contexts[0]!.requestedExtensions).toEqual([]);
    expect(contexts[1]!.requestedExtensions).toEqual([]);
  });

  it('over HTTP, v0.3 message/send of a verify: a completed task, and tasks/get returns its answer', async () => {
    const sent = await request(app)
      .post('/api/a2a')
      .send(legacySend({ intent: 'verify', agentId: Number(agent.agentId), chainId: TESTNET }));
    expect(sent.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { kind: 'task', status: { state: 'completed' } } });
    expect(legacyDataOf(sent.body.result)).toMatchObject({ isVerified: true, agentId: Number(agent.agentId), chainId: TESTNET });
    expect(sent.body.result.id).toMatch(UUID_V7);
    const got = await request(app)
      .post('/api/a2a')
      .send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: sent.body.result.id } });
    // the answer as it was sent, without the messages that asked it (a finished query keeps only its answer)
    const { id, contextId, status, artifacts } = sent.body.result;
    expect(got.body).toMatchObject({ jsonrpc: '2.0', id: 2, result: { kind: 'task', id, contextId, status, artifacts } });
    expect(got.body.result.history ?? []).toEqual([]);
  });

  it('over HTTP, v1.0 SendMessage of a verify: a completed task, and GetTask returns its answer', async () => {
    const v1 = (id: number, method: string, params: object) =>
      request(app).post('/api/a2a').set('A2A-Version', '1.0').send({ jsonrpc: '2.0', id, method, params });
    const sent = await v1(1, 'SendMessage', {
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: { intent: 'verify', agentId: Number(agent.agentId), network: 'testnet' } }],
      },
    });
    const task = sent.body.result?.task;
    expect(task, JSON.stringify(sent.body)).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' } });
    expect(task.id).toMatch(UUID_V7);
    expect(task.artifacts[0].parts.find((p: { data?: unknown }) => p.data).data).toMatchObject({
      isVerified: true,
      agentId: Number(agent.agentId),
      chainId: TESTNET,
    });
    const got = await v1(2, 'GetTask', { id: task.id });
    const { id, contextId, status, artifacts } = task;
    expect(got.body).toMatchObject({ jsonrpc: '2.0', id: 2, result: { id, contextId, status, artifacts } });
    expect(got.body.result.history ?? []).toEqual([]);
  });
});
