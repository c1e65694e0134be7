// Attacks on the service's connections, reproduced at the scale that worked before the stream limits, against a
// started service (`node dist/main.js`, its embedded chains). Clients are told apart by X-Forwarded-For, which the
// service trusts from loopback, as the attacks did.
// - 1,000 A2A resubscriptions on one register task took every connection: now at most 4 streams follow one task
//   (8 per client), the rest are refused with 429, and health answers throughout.
// - Streams no longer count against the accept cap: more open streams than MAX_CONNECTIONS, and other requests are
//   still served.
// - 500 scan-page event streams on one session took every slot of the session watcher, so another client's page
//   got 503 and its A2A register task failed: now they are refused past 4, the pages of a session share one watch,
//   and the victim's page and task work.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTER_TESTNET } from '../support/a2a.js';
import { freePort, serviceCommand } from '../support/service-process.js';

const MAX_CONNECTIONS = 40;

/** An answer whose headers arrived: a stream stays open until close(). */
interface Opened {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body so far (a stream's first events). */
  body(): string;
  ended: Promise<void>;
  close(): void;
}

let base: string;
let child: ChildProcess;
const dataDir = mkdtempSync(join(tmpdir(), 'abuse-streams-'));
const open: Opened[] = [];

/** A request on a connection of its own, resolved once the answer's headers arrive. */
function send(method: 'GET' | 'POST', path: string, body?: object, client?: string): Promise<Opened> {
  const url = new URL(path, base);
  const text = body ? JSON.stringify(body) : undefined;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        agent: false,
        headers: {
          ...(text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
          ...(client ? { 'x-forwarded-for': client } : {}),
        },
      },
      (res) => {
        let received = '';
        res.on('data', (chunk: Buffer) => {
          received += chunk.toString();
        });
        const ended = new Promise<void>((done) => {
          res.once('end', () => done());
          res.once('close', () => done());
        });
        const opened: Opened = { status: res.statusCode ?? 0, headers: res.headers, body: () => received, ended, close: () => req.destroy() };
        open.push(opened);
        resolve(opened);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const health = async (): Promise<number> => (await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(10_000) })).status;

const registerTask = async (client: string): Promise<{ taskId: string; scanPageUrl: string }> => {
  const res = await fetch(`${base}/api/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] } },
    }),
  });
  const answer = (await res.json()) as {
    result: { id: string; status: { state: string }; artifacts: { parts: { kind: string; data?: Record<string, unknown> }[] }[] };
  };
  expect(answer.result.status.state).toBe('auth-required');
  const data = answer.result.artifacts[0]?.parts.find((p) => p.kind === 'data')?.data ?? {};
  return { taskId: answer.result.id, scanPageUrl: data['scanPageUrl'] as string };
};

const taskState = async (taskId: string): Promise<string> => {
  const res = await fetch(`${base}/api/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: taskId } }),
  });
  return ((await res.json()) as { result: { status: { state: string } } }).result.status.state;
};

const resubscribe = (taskId: string, client?: string) =>
  send('POST', '/api/a2a', { jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id: taskId } }, client);

/** `count` requests, `parallel` at a time (under the connection cap: each waits for a connection), as fast as they go. */
async function flood(count: number, parallel: number, one: (index: number) => Promise<Opened>): Promise<Opened[]> {
  const all: Opened[] = [];
  for (let start = 0; start < count; start += parallel) {
    all.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - start) }, (_, i) => one(start + i)))));
  }
  return all;
}

function statuses(answers: Opened[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const closeAll = async (): Promise<void> => {
  for (const stream of open.splice(0)) stream.close();
  // the service sees the closes and frees the tickets
  await new Promise((resolve) => setTimeout(resolve, 300));
};

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(serviceCommand[0], serviceCommand[1], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', MAX_CONNECTIONS: String(MAX_CONNECTIONS) },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    if ((await fetch(`${base}/api/health`).catch(() => undefined))?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not become healthy');
}, 60_000);

afterAll(async () => {
  await closeAll();
  child.kill('SIGINT');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('one client cannot take the connections', () => {
  it('1,000 resubscriptions on one task: 4 streams follow it, the rest are 429 with Retry-After, and health answers', async () => {
    const { taskId } = await registerTask('198.51.100.1');
    const answers = await flood(1_000, 20, () => resubscribe(taskId, '198.51.100.1'));
    expect(statuses(answers)).toEqual({ 200: 4, 429: 996 });
    const refused = answers.find((a) => a.status === 429) as Opened;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await refused.ended;
    expect(JSON.parse(refused.body())).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: expect.stringMatching(/Too many open streams/) },
    });
    // other clients on the same task: refused too (per task), and everyone else is served
    expect(statuses(await flood(20, 20, (i) => resubscribe(taskId, `198.51.100.${10 + i}`)))).toEqual({ 429: 20 });
    expect(await health()).toBe(200);
    await closeAll();
  }, 120_000);

  it('one client opens at most 8 streams, however many tasks it follows', async () => {
    const tasks = await Promise.all(Array.from({ length: 3 }, (_, i) => registerTask(`203.0.113.${i + 1}`)));
    const answers = await flood(12, 12, (i) => resubscribe((tasks[i % 3] as { taskId: string }).taskId, '203.0.113.50'));
    expect(statuses(answers)).toEqual({ 200: 8, 429: 4 });
    await closeAll();
  }, 60_000);

  it('more streams than MAX_CONNECTIONS stay open, and other requests are still served', async () => {
    // 12 tasks followed by 4 clients each: 48 streams, over the cap of 40 connections
    const tasks = await Promise.all(Array.from({ length: 12 }, (_, i) => registerTask(`192.0.2.${i + 1}`)));
    const streams = await flood(48, 12, (i) => resubscribe((tasks[i % 12] as { taskId: string }).taskId, `192.0.2.${100 + i}`));
    expect(statuses(streams)).toEqual({ 200: 48 });
    expect(open.length).toBeGreaterThan(MAX_CONNECTIONS);
    const others = await Promise.all(Array.from({ length: 10 }, () => health()));
    expect(others).toEqual(Array(10).fill(200));
    await closeAll();
  }, 120_000);
});

describe("one session's pages cannot take the session watcher", () => {
  it('500 event streams on one session: 4 open, the rest 429; the victim’s page streams and its A2A task keeps waiting for the human', async () => {
    const attacker = await registerTask('198.51.100.200');
    const eventsPath = `${new URL(attacker.scanPageUrl).pathname}/events`;
    const answers = await flood(500, 20, (i) => send('GET', eventsPath, undefined, `198.51.100.${(i % 50) + 1}`));
    expect(statuses(answers)).toEqual({ 200: 4, 429: 496 });

    const victim = await registerTask('203.0.113.200');
    const page = await send('GET', `${new URL(victim.scanPageUrl).pathname}/events`, undefined, '203.0.113.200');
    expect(page.status).toBe(200);
    for (let i = 0; i < 100 && !page.body().includes('event: state'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(page.body()).toContain('"stage":"qr-ready"');
    expect(await taskState(victim.taskId)).toBe('auth-required');
    expect(await health()).toBe(200);
    await closeAll();
  }, 120_000);
});
