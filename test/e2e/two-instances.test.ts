// Two instances of the service as an operator scales it out: `node dist/main.js` twice on one Redis, with the same
// SESSION_SECRET and AA proxy secret, each its own DATA_DIR and port. Instance A runs the embedded chains; instance B
// is attached to them through RPC URLs and the contract addresses A wrote to its DATA_DIR
// (chains/<network>/deployment.json and rpc-url, the files the identity-app CLI reads too). What one instance
// starts, the other continues: sessions, the one-time export, signed-request replay claims, rate limits, A2A tasks
// (a subscriber on one hears the turns of a conversation the other answers), and a report that reaches B wakes the
// stream A holds open.
import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signerFromExport, signRequest } from '../../src/client/index.js';
import { REGISTER_TESTNET, rpcStream } from '../support/a2a.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { callbackTarget } from '../support/registration-flow.js';
import { callService, type Json, waitForSession } from '../support/service-http.js';
import { freePort, spawnService, tsxBin } from '../support/service-process.js';

const run = promisify(execFile);

interface Instance {
  base: string;
  child: ChildProcess;
  exited: Promise<void>;
  /** What it printed, for a failure's message. */
  output: () => string;
}

/** Starts `node dist/main.js` with `env` on a free port; resolves once GET /api/health answers 200. */
async function startInstance(env: Record<string, string>): Promise<Instance> {
  const instance = spawnService({ ...process.env, ...env, LOG_LEVEL: 'warn' }, await freePort());
  const { base, child } = instance;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) break;
    const res = await fetch(`${base}/api/health`).catch(() => undefined);
    if (res?.status === 200) return instance;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopInstance(instance);
  throw new Error(`the instance on ${base} did not become healthy:\n${instance.output()}`);
}

/** SIGINT by its pid, SIGKILL if it has not ended within 10 s. */
async function stopInstance(instance: Instance | undefined): Promise<void> {
  if (!instance || instance.child.exitCode !== null || instance.child.signalCode !== null) return;
  instance.child.kill('SIGINT');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 10_000);
  await instance.exited;
  clearTimeout(timer);
}

/** The environment that attaches an instance to the chains instance A runs, read from A's DATA_DIR. */
function attachedTo(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const network of ['mainnet', 'testnet'] as const) {
    const dir = join(dataDir, 'chains', network);
    const prefix = network.toUpperCase();
    const deployment = JSON.parse(readFileSync(join(dir, 'deployment.json'), 'utf8')) as {
      contracts: Record<string, string | null>;
      registryDeployBlock: string;
    };
    const { registry, proofProvider, hub, demoVerifier, demoVerifierEd25519, multicall } = deployment.contracts;
    Object.assign(env, {
      [`${prefix}_RPC_URL`]: readFileSync(join(dir, 'rpc-url'), 'utf8').trim(),
      [`${prefix}_REGISTRY_ADDRESS`]: registry,
      [`${prefix}_PROOF_PROVIDER_ADDRESS`]: proofProvider,
      [`${prefix}_HUB_ADDRESS`]: hub,
      [`${prefix}_DEMO_VERIFIER_ADDRESS`]: demoVerifier,
      [`${prefix}_MULTICALL_ADDRESS`]: multicall,
      [`${prefix}_REGISTRY_DEPLOY_BLOCK`]: deployment.registryDeployBlock,
      ...(demoVerifierEd25519 ? { [`${prefix}_DEMO_VERIFIER_ED25519_ADDRESS`]: demoVerifierEd25519 } : {}),
    });
  }
  return env;
}

/** A JSON call from the client `forwardedFor` (the instances trust a loopback proxy's X-Forwarded-For). */
async function call(base: string, path: string, forwardedFor: string, init: { body?: object; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${base}${path}`, {
    method: init.body ? 'POST' : 'GET',
    headers: { 'x-forwarded-for': forwardedFor, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
}

/** The identity-app CLI, playing the human's phone for a deep link on A's chains. */
async function identityApp(dataDir: string, command: 'approve' | 'reject', deepLink: string): Promise<Json> {
  // approve: a human of their own (one agent per human), by a document number no other run uses
  const args = command === 'approve' ? ['--data-dir', dataDir, '--document-number', `TWO${randomBytes(4).toString('hex').toUpperCase()}`] : [];
  const { stdout } = await run(tsxBin, ['src/identity-app/cli.ts', command, deepLink, ...args]);
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Json;
}

type StreamEvent = {
  kind: string;
  status?: { state: string };
  artifacts?: { parts: { kind: string; data?: Json }[] }[];
  final?: boolean;
  id?: string;
};

/** A testnet register intent as a v0.3 message. */
const registerMessage = () => ({ kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] });

/** An A2A v0.3 message/stream of a testnet register intent: its events as they arrive. */
const registerStream = (base: string, forwardedFor: string): AsyncGenerator<StreamEvent> =>
  a2aStream(base, forwardedFor, 'message/stream', { message: registerMessage() });

/** The events of an A2A v0.3 streaming call as they arrive. */
async function* a2aStream(base: string, forwardedFor: string, method: string, params: object): AsyncGenerator<StreamEvent> {
  const stream = await rpcStream(base, method, params, { forwardedFor });
  for (let result = await stream.next(); result !== undefined; result = await stream.next()) yield result as StreamEvent;
}

const artifactOf = (event: StreamEvent): Json => event.artifacts?.[0]?.parts.find((part) => part.kind === 'data')?.data ?? {};

const taskState = async (base: string, taskId: string): Promise<string | undefined> => {
  const res = await call(base, '/api/a2a', '127.0.0.9', { body: { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: taskId } } });
  return (res.body['result'] as { status?: { state: string } } | undefined)?.status?.state;
};

describe.skipIf(!redisAvailable)(redisAvailable ? 'two instances on one Redis' : `two instances on one Redis (skipped: ${REDIS_MISSING})`, () => {
  const dirA = mkdtempSync(join(tmpdir(), 'two-instances-a-'));
  const dirB = mkdtempSync(join(tmpdir(), 'two-instances-b-'));
  let redis: RedisServer | undefined;
  let a: Instance | undefined;
  let b: Instance | undefined;
  /** What the first scenario registers and exports, for the signed requests. */
  let exported: Json | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    const shared = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: 'two-instances:',
      SESSION_SECRET: randomBytes(32).toString('hex'),
      AA_PROXY_TOKEN_SECRET: randomBytes(32).toString('hex'),
    };
    a = await startInstance({ ...shared, DATA_DIR: dirA });
    b = await startInstance({ ...shared, DATA_DIR: dirB, ...attachedTo(dirA) });
  }, 180_000);

  afterAll(async () => {
    await stopInstance(b);
    await stopInstance(a);
    await redis?.stop();
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  }, 60_000);

  it('serves the same chains from both: B names the contracts A deployed', async () => {
    const [fromA, fromB] = await Promise.all([callService(a!.base, '/api/health'), callService(b!.base, '/api/health')]);
    expect(fromA.status).toBe(200);
    expect(fromB.status).toBe(200);
    const registry = JSON.parse(readFileSync(join(dirA, 'chains', 'testnet', 'deployment.json'), 'utf8')).contracts.registry as string;
    const session = await call(b!.base, '/api/agent/register', '10.0.0.1', { body: { mode: 'wallet-free', network: 'testnet' } });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(decodeURIComponent(String(session.body['deepLink'])).toLowerCase()).toContain(registry.toLowerCase());
  });

  it('sign with one key kept in the Redis: both serve the same JWKS, neither DATA_DIR holds a key file, and their cards verify against either', async () => {
    const [fromA, fromB] = await Promise.all([callService(a!.base, '/.well-known/jwks.json'), callService(b!.base, '/.well-known/jwks.json')]);
    expect(fromA.status).toBe(200);
    expect(fromB.body).toEqual(fromA.body);
    expect(fromA.body['keys']).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })]);
    expect(existsSync(join(dirA, 'signing-key.json')) || existsSync(join(dirB, 'signing-key.json'))).toBe(false);
    // what either signs verifies against the other's JWKS
    const keys = fromB.body['keys'] as (JWK & { kid: string })[];
    const verify = verifyAgentCardSignature(async (kid) => keys.find((key) => key.kid === kid) ?? {});
    for (const base of [a!.base, b!.base])
      await expect(verify((await callService(base, '/.well-known/agent-card.json')).body as never)).resolves.toBeUndefined();
  });

  it('a session opened on A is followed and exported on B, and the key is handed out once across both', async () => {
    const opened = await call(a!.base, '/api/agent/register', '10.0.0.2', { body: { mode: 'wallet-free', network: 'testnet' } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    const token = String(opened.body['sessionToken']);
    const onB = await callService(b!.base, `/api/agent/register/status?token=${encodeURIComponent(token)}`);
    expect(onB.body).toMatchObject({ stage: 'qr-ready', network: 'testnet' });

    expect(await identityApp(dirA, 'approve', String(opened.body['deepLink']))).toMatchObject({ status: 'submitted', callback: 200 });
    const completed = await waitForSession(b!.base, 'register', token);
    expect(completed).toMatchObject({ stage: 'completed', network: 'testnet' });
    expect(completed['agentId']).toBeGreaterThan(0);

    const exports = [
      await callService(b!.base, `/api/agent/register/export?token=${encodeURIComponent(token)}`),
      await callService(a!.base, `/api/agent/register/export?token=${encodeURIComponent(token)}`),
      await callService(b!.base, `/api/agent/register/export?token=${encodeURIComponent(token)}`),
    ];
    expect(exports.map((answer) => answer.status)).toEqual([200, 409, 409]);
    expect(exports[0]?.body).toMatchObject({ agentId: completed['agentId'], network: 'testnet' });
    exported = exports[0]?.body;
  }, 60_000);

  it('a signed request answered on A is a replay on B (409)', async () => {
    expect(exported).toBeDefined();
    const signer = signerFromExport(exported as { privateKey: `0x${string}`; keyType: 'secp256k1' | 'ed25519' });
    const path = '/api/demo/verify?network=testnet';
    const body = JSON.stringify({ hello: 'two instances' });
    const headers = await signRequest(signer, { method: 'POST', url: path, body });
    const send = (base: string) => fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
    const first = await send(a!.base);
    expect(first.status, await first.clone().text()).toBe(200);
    expect(String(((await first.json()) as Json)['agentId'])).toBe(String(exported?.['agentId']));
    const replayed = await send(b!.base);
    expect(replayed.status).toBe(409);
    expect((await send(a!.base)).status).toBe(409);
  });

  it('counts the session-creation limit (10 a minute per client) on A and B together', async () => {
    const open = (base: string) => call(base, '/api/agent/register', '10.0.0.3', { body: { mode: 'wallet-free', network: 'testnet' } });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await open(i % 2 === 0 ? a!.base : b!.base)).status);
    expect(statuses).toEqual(Array(10).fill(200));
    const [overOnA, overOnB] = [await open(a!.base), await open(b!.base)];
    expect([overOnA.status, overOnB.status]).toEqual([429, 429]);
    // another client is not affected
    expect((await call(b!.base, '/api/agent/register', '10.0.0.4', { body: { mode: 'wallet-free', network: 'testnet' } })).status).toBe(200);
  });

  it("an A2A register task opened on A is read on B, and A's stream completes when the identity app approves", async () => {
    let taskId = '';
    const states: string[] = [];
    let approval: Promise<Json> | undefined;
    for await (const event of registerStream(a!.base, '10.0.0.5')) {
      if (event.kind === 'task') {
        taskId = String(event.id);
        const artifact = artifactOf(event);
        expect(artifact).toMatchObject({ stage: 'qr-ready' });
        approval = (async () => {
          // the task is in the shared store: B reads it while the human has not acted yet
          await expect.poll(() => taskState(b!.base, taskId), { timeout: 5_000 }).toBe('auth-required');
          return identityApp(dirA, 'approve', String(artifact['deepLink']));
        })();
      } else if (event.kind === 'status-update' && event.status) {
        states.push(event.status.state);
      }
    }
    expect(await approval).toMatchObject({ status: 'submitted', callback: 200 });
    expect(states.at(-1)).toBe('completed');
    expect(await taskState(b!.base, taskId)).toBe('completed');
  }, 60_000);

  it('a resubscription on B follows a task A runs to completed', async () => {
    const sent = await call(a!.base, '/api/a2a', '10.0.0.7', {
      body: { jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: registerMessage() } },
    });
    const task = sent.body['result'] as StreamEvent;
    expect(task.status?.state).toBe('auth-required');
    const states: string[] = [];
    let approval: Promise<Json> | undefined;
    // B holds no stream of this task: the SDK alone would answer the task and end
    for await (const event of a2aStream(b!.base, '10.0.0.7', 'tasks/resubscribe', { id: task.id })) {
      if (event.kind === 'task') {
        states.push(String(event.status?.state));
        approval = identityApp(dirA, 'approve', String(artifactOf(task)['deepLink']));
      } else if (event.kind === 'status-update' && event.status) {
        states.push(event.status.state);
      }
    }
    expect(await approval).toMatchObject({ status: 'submitted', callback: 200 });
    expect(states[0]).toBe('auth-required');
    expect(states.at(-1)).toBe('completed');
  }, 60_000);

  it('a subscriber on B to a conversation waiting for input gets the turn A answers, to completed', async () => {
    const message = (text: string, taskId?: string) => ({
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...(taskId ? { taskId } : {}) },
    });
    const sent = await call(a!.base, '/api/a2a', '10.0.0.8', { body: { jsonrpc: '2.0', id: 1, method: 'message/send', params: message('hello') } });
    const task = sent.body['result'] as StreamEvent;
    expect(task.status?.state).toBe('input-required');
    const events: StreamEvent[] = [];
    for await (const event of a2aStream(b!.base, '10.0.0.9', 'tasks/resubscribe', { id: task.id })) {
      events.push(event);
      if (event.kind === 'task')
        await call(a!.base, '/api/a2a', '10.0.0.8', { body: { jsonrpc: '2.0', id: 2, method: 'message/send', params: message('help', task.id) } });
    }
    expect(events.map((event) => event.kind)).toEqual(['task', 'artifact-update', 'status-update']);
    expect(events.at(-1)).toMatchObject({ final: true, status: { state: 'completed' } });
  });

  it('a report that reaches B wakes the stream A holds open (as behind a load balancer)', async () => {
    let reportedAt = 0;
    let endedAt = 0;
    let final = '';
    for await (const event of registerStream(a!.base, '10.0.0.6')) {
      if (event.kind === 'task') {
        const deepLink = String(artifactOf(event)['deepLink']);
        // the human declines; the app's report lands on B, where A's watch does not run
        void (async () => {
          await new Promise((resolve) => setTimeout(resolve, 200));
          reportedAt = performance.now();
          const res = await fetch(`${b!.base}${callbackTarget(deepLink)}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ status: 'error', error: 'The human declined in the app' }),
          });
          expect(res.status).toBe(200);
        })();
      } else if (event.kind === 'status-update' && event.status && event.final) {
        final = event.status.state;
        endedAt = performance.now();
      }
    }
    expect(final).toBe('failed');
    console.log(`A's A2A stream ended ${(endedAt - reportedAt).toFixed(1)} ms after the identity app's report was sent to B`);
  }, 30_000);
});
