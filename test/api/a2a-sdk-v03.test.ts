// The A2A endpoint through the SDK's own client speaking A2A v0.3 (its compat transport, chosen by the client
// factory from the service's card narrowed to its 0.3 interface), next to the SDK's v1.0 client, against a real
// listening server over real chains: every intent answers the same data in both versions (and the same as REST), `status` reads the
// tokens of every session kind, and register / deregister tasks complete, fail, are read back and canceled over the
// v0.3 wire. test/api/a2a.test.ts covers the v1.0 client and raw v0.3 JSON-RPC; this file covers the v0.3 client.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REJECT_REASON, reject } from '../../src/identity-app/app.js';
import type { Services } from '../../src/services/index.js';
import { answerOf, dataOf, dataPart, userMessage } from '../support/a2a.js';
import { expectSubmitted, type RegisteredAgent, registerLinked } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { type ApiAgent, registerAgent, tampered } from '../support/session-flows.js';

const TESTNET = 11142220;

type Data = Record<string, unknown>;

const sendRequest = (data: object) => ({ tenant: '', message: userMessage([dataPart(data)]), configuration: undefined, metadata: undefined });

const without = (data: Data, keys: readonly string[]): Data => Object.fromEntries(Object.entries(data).filter(([key]) => !keys.includes(key)));

/** Every session answer issues a new token and counts the time down: the rest must match exactly. */
const PER_CALL = ['sessionToken', 'timeRemainingMs'] as const;
/** What differs between two sessions of the same request (each has its own token, link and expiry). */
const PER_SESSION = [...PER_CALL, 'deepLink', 'qrData', 'scanUrl', 'scanPageUrl', 'expiresAt'] as const;

// ----- the wire -----

interface WireCall {
  method: string;
  version: string | null;
}

/** A fetch that records each JSON-RPC call's method and A2A-Version header, then sends it for real. */
function recordingFetch() {
  const calls: WireCall[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: unknown }) : {};
    calls.push({ method: String(body.method), version: new Headers(init?.headers).get('A2A-Version') });
    return fetch(input, init);
  };
  /** The calls since the last take. */
  const take = (): WireCall[] => calls.splice(0);
  return { fetchImpl, take };
}
type Wire = ReturnType<typeof recordingFetch>;

const legacyCompat = { enabled: true };

/** A factory that can speak v0.3: the transport picks the compat wire for an interface of protocolVersion 0.3. */
const v03Factory = (fetchImpl: typeof fetch): ClientFactory =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat, fetchImpl })],
      // translates a v0.3-only card (url + protocolVersion, no supportedInterfaces) into a 0.3 interface
      cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
    }),
  );

const cardPath = '/.well-known/agent-card.json';

/**
 * The service's v1.0 card with only its 0.3 interface. The factory prefers a 1.0 interface whenever the card
 * lists one (legacyCompat or not), and the card served without a version header embeds the v1.0 interfaces too,
 * so this is how an SDK caller asks for the v0.3 wire of this service.
 */
async function v03OnlyCard(app: Express): Promise<AgentCard> {
  const card = (await request(app).get(cardPath).set('A2A-Version', '1.0')).body as AgentCard;
  return { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3') };
}

// ----- the service -----

interface Service {
  app: Express;
  services: Services;
  base: string;
  /** The SDK's default client (v1.0), recording its wire. */
  v1: Client;
  v1Wire: Wire;
  /** The SDK's client on the v0.3 compat transport, recording its wire. */
  v03: Client;
  v03Wire: Wire;
  close(): Promise<void>;
}

/**
 * A real listening service with both clients. Each describe starts its own: the per-address session-creation
 * limit (10 a minute, REST and A2A alike) lives in the app's store, and every caller here is 127.0.0.1.
 */
async function startService(networks: TestNetworks): Promise<Service> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { app, services } = testApp(networks.chains, { publicUrl: base });
  server.on('request', app);
  const v1Wire = recordingFetch();
  const v1 = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: v1Wire.fetchImpl })] }),
  ).createFromUrl(base);
  const v03Wire = recordingFetch();
  const v03 = await v03Factory(v03Wire.fetchImpl).createFromAgentCard(await v03OnlyCard(app));
  const close = async () => {
    services.watcher.stopAll();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { app, services, base, v1, v1Wire, v03, v03Wire, close };
}

/**
 * A query's answer: a task that ended at once, completed with the answer as its artifact, or failed with the REST
 * error in its status message.
 */
async function ask(client: Client, data: object): Promise<Data> {
  const result = await client.sendMessage(sendRequest(data));
  expect('id' in result && 'status' in result, `a task answer to ${JSON.stringify(data)}`).toBe(true);
  const task = result as Task;
  expect([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED]).toContain(task.status?.state);
  return answerOf(task);
}

/** A blocking send of a session intent: the task as it waits for the human (auth-required). */
async function openTask(client: Client, data: object): Promise<Task> {
  const result = await client.sendMessage(sendRequest(data));
  expect('id' in result && 'status' in result, `a task answer to ${JSON.stringify(data)}`).toBe(true);
  const task = result as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
  return task;
}

interface TaskRun {
  task: Task;
  updates: { state: TaskState | undefined; data: Data }[];
  final: { state: TaskState | undefined; data: Data };
}

/**
 * Streams a session intent to its end. `human` gets the task's artifact (deep link, token) as soon as the task
 * arrives and plays the identity app; the stream must then end by itself (the task follows its session).
 */
async function runTask(client: Client, data: object, human: (artifact: Data) => Promise<unknown>): Promise<TaskRun> {
  const controller = new AbortController();
  let task: Task | undefined;
  let acting: Promise<unknown> | undefined;
  let failure: { error: unknown } | undefined;
  const updates: TaskRun['updates'] = [];
  try {
    for await (const event of client.sendMessageStream(sendRequest(data), { signal: controller.signal })) {
      const payload = event.payload;
      if (payload?.$case === 'task') {
        task = payload.value;
        // a failing human would leave the task waiting until its session expires: end the stream instead
        acting = human(dataOf(task.artifacts[0]?.parts)).catch((error: unknown) => {
          failure = { error };
          controller.abort();
        });
      } else if (payload?.$case === 'statusUpdate') {
        updates.push({ state: payload.value.status?.state, data: dataOf(payload.value.status?.message?.parts) });
      }
    }
  } catch (error) {
    if (!failure) throw error; // otherwise the abort's error: the human's is the one to report
  }
  await acting;
  if (failure) throw failure.error;
  expect(task, 'the stream starts with the task').toBeDefined();
  const final = updates.at(-1);
  expect(final, 'the stream ends with a status update').toBeDefined();
  return { task: task!, updates, final: final! };
}

const restStatus = async (app: Express, flow: string, token: string): Promise<Data> => {
  const res = await request(app).get(`/api/agent/${flow}/status`).query({ token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Data;
};

describe('A2A through the SDK client on the v0.3 wire', () => {
  let networks: TestNetworks;

  beforeAll(async () => {
    networks = await deployTestNetworks();
  });

  describe('the v0.3 client and every intent in both versions', () => {
    let s: Service;
    let agent: RegisteredAgent;

    beforeAll(async () => {
      agent = await registerLinked(networks.testnet);
      s = await startService(networks);
    });
    afterAll(async () => s?.close());

    it('the SDK factory picks the v0.3 transport for a card whose JSONRPC interface is 0.3 only', async () => {
      expect(s.v03.protocolVersion).toBe('0.3');
      expect(s.v1.protocolVersion).toBe('1.0');
      const wire = recordingFetch();
      // the v1.0 card lists a 1.0 and a 0.3 interface at one URL: with both, the factory takes 1.0
      const v1Card = (await request(s.app).get(cardPath).set('A2A-Version', '1.0')).body as AgentCard;
      expect((await v03Factory(wire.fetchImpl).createFromAgentCard(v1Card)).protocolVersion).toBe('1.0');
      expect((await v03OnlyCard(s.app)).supportedInterfaces).toEqual([
        expect.objectContaining({ url: `${s.base}/api/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }),
      ]);
      // The card without a header is v0.3-shaped (url, protocolVersion 0.3) but embeds the v1.0 interfaces, so
      // the SDK reads it as a v1.0 card; its v0.3 fields alone are what a v0.3-only caller goes by, and the
      // resolver turns them into a 0.3 interface at the same URL.
      const noHeader = (await request(s.app).get(cardPath)).body as Data;
      expect(noHeader).toMatchObject({ url: `${s.base}/api/a2a`, protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
      expect((await v03Factory(wire.fetchImpl).createFromAgentCard(noHeader as unknown as AgentCard)).protocolVersion).toBe('1.0');
      const { supportedInterfaces: _v1, ...v03Fields } = noHeader;
      const fromV03Fields = await v03Factory(wire.fetchImpl).createFromAgentCard(v03Fields as unknown as AgentCard);
      expect(fromV03Fields.protocolVersion).toBe('0.3');
      expect(await ask(fromV03Fields, { intent: 'help' })).toEqual(await ask(s.v03, { intent: 'help' }));
      expect(wire.take()).toEqual([{ method: 'message/send', version: '0.3' }]);
    });

    it('the wires: v0.3 method names and version 0.3 from the v0.3 client, SendMessage with 1.0 from the v1.0 client', async () => {
      s.v03Wire.take();
      s.v1Wire.take();
      const legacy = await ask(s.v03, { intent: 'verify', agentId: Number(agent.agentId), network: 'testnet' });
      const current = await ask(s.v1, { intent: 'verify', agentId: Number(agent.agentId), network: 'testnet' });
      expect(legacy).toEqual(current);
      expect(legacy).toMatchObject({ isVerified: true, agentId: Number(agent.agentId), chainId: TESTNET });
      expect(s.v03Wire.take()).toEqual([{ method: 'message/send', version: '0.3' }]);
      expect(s.v1Wire.take()).toEqual([{ method: 'SendMessage', version: '1.0' }]);
    });

    it('help: the same seven intents with examples in both versions', async () => {
      const legacy = await ask(s.v03, { intent: 'help' });
      expect(legacy).toEqual(await ask(s.v1, { intent: 'help' }));
      const intents = legacy['intents'] as { intent: string; examples: string[] }[];
      expect(intents.map((i) => i.intent).sort()).toEqual(['deregister', 'freshness', 'help', 'lookup', 'register', 'status', 'verify']);
      for (const intent of intents) expect(intent.examples.length, intent.intent).toBeGreaterThan(0);
    });

    it('lookup, verify and freshness: in both versions exactly the REST response', async () => {
      const id = Number(agent.agentId);
      const cases: [string, object][] = [
        [`/api/agent/info/${TESTNET}/${id}`, { intent: 'lookup', agentId: id, chainId: TESTNET }],
        [`/api/agent/verify/${TESTNET}/${id}`, { intent: 'verify', agentId: String(id), network: 'testnet' }],
      ];
      for (const [path, data] of cases) {
        const rest = await request(s.app).get(path);
        expect(rest.status, path).toBe(200);
        expect(await ask(s.v03, data), path).toEqual(rest.body);
        expect(await ask(s.v1, data), path).toEqual(rest.body);
      }
      // freshness has no REST twin: the registry's own expiry is the reference
      const onChain = await networks.testnet.gateway.registry.readAgent(agent.agentId);
      const freshness = await ask(s.v03, { intent: 'freshness', agentId: id, network: 'testnet' });
      const current = await ask(s.v1, { intent: 'freshness', agentId: id, network: 'testnet' });
      // secondsRemaining counts down: the two reads may fall in different seconds
      expect(without(freshness, ['secondsRemaining'])).toEqual(without(current, ['secondsRemaining']));
      expect(freshness).toEqual({
        agentId: id,
        chainId: TESTNET,
        hasProof: true,
        isProofFresh: true,
        proofExpiresAt: Number(onChain!.proofExpiresAt),
        secondsRemaining: expect.any(Number),
      });
      expect(freshness['proofExpiresAt']).toBeGreaterThan(Date.now() / 1000);
      expect(Math.abs(Number(freshness['secondsRemaining']) - (Number(onChain!.proofExpiresAt) - Date.now() / 1000))).toBeLessThan(5);
    });

    it('an unknown agent: a failed task with the REST 404 as data in both versions', async () => {
      const rest = await request(s.app).get(`/api/agent/info/${TESTNET}/987654`);
      expect(rest.status).toBe(404);
      const expected = { error: rest.body.error, status: 404, intent: 'lookup' };
      expect(await ask(s.v03, { intent: 'lookup', agentId: 987654, network: 'testnet' })).toEqual(expected);
      expect(await ask(s.v1, { intent: 'lookup', agentId: 987654, network: 'testnet' })).toEqual(expected);
    });

    it('status of a registration token: the REST status in both versions', async () => {
      const session = await request(s.app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
      expect(session.status).toBe(200);
      const token = session.body.sessionToken as string;
      const rest = await restStatus(s.app, 'register', token);
      expect(rest).toMatchObject({ stage: 'qr-ready', mode: 'wallet-free', network: 'testnet' });
      for (const client of [s.v03, s.v1]) {
        const answer = await ask(client, { intent: 'status', sessionToken: token });
        expect(without(answer, PER_CALL), client.protocolVersion).toEqual(without(rest, PER_CALL));
        expect(answer['sessionToken']).toEqual(expect.any(String));
      }
    });

    it('register: the same task and session fields in both versions as POST /api/agent/register; both cancel', async () => {
      const body = { mode: 'wallet-free', network: 'testnet' };
      const rest = await request(s.app).post('/api/agent/register').send(body);
      expect(rest.status).toBe(200);
      const { qrImageBase64: _png, ...restFields } = rest.body as Data;
      // each wallet-free session generates its own agent key
      const comparable = (data: Data) => without(data, [...PER_SESSION, 'agentAddress']);
      s.v03Wire.take();
      for (const client of [s.v03, s.v1]) {
        const task = await openTask(client, { intent: 'register', ...body });
        const artifact = dataOf(task.artifacts[0]?.parts);
        expect(Object.keys(artifact).sort(), client.protocolVersion).toEqual(Object.keys(restFields).sort());
        expect(comparable(artifact), client.protocolVersion).toEqual(comparable(restFields));
        expect(String(artifact['deepLink'])).toMatch(/^selfapp:/);
        // the auth-required update carries the session too
        expect(dataOf(task.status?.message?.parts)).toEqual(artifact);
        const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
        expect(canceled.status?.state, client.protocolVersion).toBe(TaskState.TASK_STATE_CANCELED);
      }
      expect(s.v03Wire.take().map((c) => c.method)).toEqual(['message/send', 'tasks/cancel']);
    });

    it('deregister: the same task and session fields in both versions as POST /api/agent/deregister; both cancel', async () => {
      const registered = await registerAgent(s.app, networks, 'linked');
      const body = { agentAddress: registered.agentAddress, network: 'testnet' };
      const rest = await request(s.app).post('/api/agent/deregister').send(body);
      expect(rest.status).toBe(200);
      const { qrImageBase64: _png, ...restFields } = rest.body as Data;
      expect(restFields).toMatchObject({ stage: 'qr-ready', agentId: registered.agentId, agentAddress: registered.agentAddress });
      for (const client of [s.v03, s.v1]) {
        const task = await openTask(client, { intent: 'deregister', ...body });
        const artifact = dataOf(task.artifacts[0]?.parts);
        expect(Object.keys(artifact).sort(), client.protocolVersion).toEqual(Object.keys(restFields).sort());
        expect(without(artifact, PER_SESSION), client.protocolVersion).toEqual(without(restFields, PER_SESSION));
        expect((await client.cancelTask({ tenant: '', id: task.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
      // only sessions were opened: the agent is still there
      expect((await request(s.app).get(`/api/agent/info/${TESTNET}/${registered.agentId}`)).status).toBe(200);
    });
  });

  describe('status of every session kind', () => {
    let s: Service;
    let agent: ApiAgent;
    const sessions: Record<'deregister' | 'refresh' | 'identify', string> = { deregister: '', refresh: '', identify: '' };
    const deepLinks: Record<keyof typeof sessions, string> = { deregister: '', refresh: '', identify: '' };

    beforeAll(async () => {
      s = await startService(networks);
      agent = await registerAgent(s.app, networks, 'linked');
      const bodies = {
        deregister: { network: 'testnet', agentAddress: agent.agentAddress },
        refresh: { network: 'testnet', agentId: agent.agentId },
        identify: { network: 'testnet' },
      };
      for (const flow of ['deregister', 'refresh', 'identify'] as const) {
        const res = await request(s.app).post(`/api/agent/${flow}`).send(bodies[flow]);
        expect(res.status, `${flow}: ${JSON.stringify(res.body)}`).toBe(200);
        sessions[flow] = res.body.sessionToken as string;
        deepLinks[flow] = res.body.deepLink as string;
      }
    });
    afterAll(async () => s?.close());

    /** The A2A status answer of `token` in both versions equals GET /api/agent/<flow>/status but for the per-call fields. */
    async function statusMatchesRest(flow: keyof typeof sessions, expected: Data): Promise<void> {
      const rest = await restStatus(s.app, flow, sessions[flow]);
      expect(rest, flow).toMatchObject(expected);
      for (const client of [s.v03, s.v1]) {
        const answer = await ask(client, { intent: 'status', sessionToken: sessions[flow] });
        expect(without(answer, PER_CALL), `${flow} over ${client.protocolVersion}`).toEqual(without(rest, PER_CALL));
      }
    }

    it('deregistration, refresh and identify tokens while they wait for the human', async () => {
      await statusMatchesRest('deregister', { stage: 'qr-ready', agentId: agent.agentId, agentAddress: agent.agentAddress, network: 'testnet' });
      await statusMatchesRest('refresh', { stage: 'qr-ready', agentId: agent.agentId, network: 'testnet' });
      await statusMatchesRest('identify', { stage: 'qr-ready', network: 'testnet' });
    });

    it('the same tokens once the human proved: refreshed, identified, then deregistered', async () => {
      // in this order: refresh and identify statuses read the agent, which deregistering burns
      const expected: [keyof typeof sessions, Data][] = [
        ['refresh', { stage: 'completed', agentId: agent.agentId, isProofFresh: true }],
        ['identify', { stage: 'completed', agentCount: 1, agentIds: [agent.agentId] }],
        ['deregister', { stage: 'completed', agentId: agent.agentId }],
      ];
      for (const [flow, fields] of expected) {
        const { proof, callback } = await approveDeepLink(s.app, networks, deepLinks[flow], { document: agent.document });
        expectSubmitted(proof);
        expect(callback?.body, flow).toEqual({ received: true, stage: 'completed' });
        await statusMatchesRest(flow, { ...fields, txHash: proof.txHash });
      }
    });

    it('an invalid token: a failed task with the REST 401 as an error data part in both versions, not a protocol error', async () => {
      for (const token of [tampered(sessions.identify), 'not-a-session-token']) {
        const rest = await request(s.app).get('/api/agent/identify/status').query({ token });
        expect(rest.status, token).toBe(401);
        for (const client of [s.v03, s.v1]) {
          expect(await ask(client, { intent: 'status', sessionToken: token }), client.protocolVersion).toEqual({
            error: rest.body.error,
            status: 401,
            intent: 'status',
          });
        }
      }
    });
  });

  describe('session tasks over the v0.3 client', () => {
    let s: Service;

    beforeAll(async () => {
      s = await startService(networks);
    });
    afterAll(async () => s?.close());

    it('deregister: a streamed task that completes by itself when the human proves again; tasks/get reads it back', async () => {
      const registered = await registerAgent(s.app, networks, 'linked');
      s.v03Wire.take();
      const run = await runTask(s.v03, { intent: 'deregister', agentAddress: registered.agentAddress, network: 'testnet' }, async (artifact) => {
        expect(artifact).toMatchObject({ stage: 'qr-ready', agentId: registered.agentId, agentAddress: registered.agentAddress });
        const { proof } = await approveDeepLink(s.app, networks, String(artifact['deepLink']), { document: registered.document });
        expectSubmitted(proof);
      });
      expect(run.updates[0]?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      expect(run.final.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(run.final.data).toMatchObject({
        stage: 'completed',
        agentId: registered.agentId,
        agentAddress: registered.agentAddress,
        network: 'testnet',
      });
      expect((await request(s.app).get(`/api/agent/info/${TESTNET}/${registered.agentId}`)).status).toBe(404);

      const stored = await s.v03.getTask({ tenant: '', id: run.task.id, historyLength: undefined });
      expect(stored.id).toBe(run.task.id);
      expect(stored.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(dataOf(stored.status?.message?.parts)).toEqual(run.final.data);
      expect(dataOf(stored.artifacts[0]?.parts)).toEqual(dataOf(run.task.artifacts[0]?.parts));
      const wire = s.v03Wire.take();
      expect(wire.map((c) => c.method)).toEqual(['message/stream', 'tasks/get']);
      expect(wire.every((c) => c.version === '0.3')).toBe(true);
    });

    it('register: the identity app rejects, the task fails with the reason', async () => {
      const reason = 'The human declined on the phone';
      for (const [client, sent] of [
        [s.v03, reason],
        [s.v1, undefined],
      ] as const) {
        let token = '';
        const run = await runTask(client, { intent: 'register', mode: 'wallet-free', network: 'testnet' }, async (artifact) => {
          token = String(artifact['sessionToken']);
          // the mock app's reject path: only an error callback, nothing on chain
          const rejected = await reject({ deepLink: String(artifact['deepLink']), ...(sent ? { reason: sent } : {}) });
          expect(rejected.callback).toMatchObject({ ok: true, status: 200 });
        });
        const expected = sent ?? DEFAULT_REJECT_REASON;
        expect(run.final.state, client.protocolVersion).toBe(TaskState.TASK_STATE_FAILED);
        expect(run.final.data).toMatchObject({ stage: 'failed', error: expected, network: 'testnet' });
        expect(await restStatus(s.app, 'register', token)).toMatchObject({ stage: 'failed', error: expected });
        expect((await client.getTask({ tenant: '', id: run.task.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_FAILED);
      }
      expect(s.v03Wire.take().map((c) => c.method)).toEqual(['message/stream', 'tasks/get']);
    });

    it('deregister: another human proves, the task fails with NotAgentOwner and the agent stays', async () => {
      const registered = await registerAgent(s.app, networks, 'linked');
      const run = await runTask(s.v03, { intent: 'deregister', agentAddress: registered.agentAddress, network: 'testnet' }, async (artifact) => {
        const { proof, callback } = await approveDeepLink(s.app, networks, String(artifact['deepLink']), { document: newDocument() });
        expect(proof.status).toBe('reverted');
        expect(callback?.body).toEqual({ received: true, stage: 'failed' });
      });
      expect(run.final.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(run.final.data).toMatchObject({ stage: 'failed', agentId: registered.agentId });
      expect(String(run.final.data['error'])).toMatch(/NotAgentOwner/);
      const info = await request(s.app).get(`/api/agent/info/${TESTNET}/${registered.agentId}`);
      expect(info.status).toBe(200);
      expect(await networks.testnet.gateway.registry.ownerOf(BigInt(registered.agentId))).toBe(registered.owner);
    });

    it('tasks/cancel cancels an open register task; it stays canceled when the human approves later', async () => {
      const watcher = s.services.watcher;
      s.v03Wire.take();
      const task = await openTask(s.v03, { intent: 'register', mode: 'wallet-free', network: 'testnet' });
      expect(watcher.size).toBe(1);
      const canceled = await s.v03.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      expect(canceled.id).toBe(task.id);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(watcher.size, 'the canceled task is no longer followed').toBe(0);

      // The session itself lives on (REST could still finish it). The human approves; syncing the registry logs
      // wakes every task that follows the network, which a task still followed would answer by completing.
      const { proof } = await approveDeepLink(s.app, networks, String(dataOf(task.artifacts[0]?.parts)['deepLink']));
      expectSubmitted(proof);
      await s.services.queries.syncNow();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const got = await s.v03.getTask({ tenant: '', id: task.id, historyLength: undefined });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(s.v03Wire.take()).toEqual(['message/send', 'tasks/cancel', 'tasks/get'].map((method) => ({ method, version: '0.3' })));
    });
  });
});
