// Open A2A streams get an SSE comment at a fixed interval (a short one here), so a proxy's idle timeout does not cut
// a register task's stream while the human scans: over a real listening server, the comments arrive while the task
// waits, between and after its events, the stream still ends when the task does (completed by the human, or
// canceled), the SDK's client reads through them, and answers that are not streams get none.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEPALIVE_COMMENT, keepStreamsAlive } from '../../src/a2a/stream-keepalive.js';
import { dataOf, dataPart, REGISTER_TESTNET, userMessage } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { approveDeepLink, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const INTERVAL_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listen(app: express.Express): Promise<{ base: string; server: Server }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const close = async (server: Server) => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
};

/** An SSE response read as it arrives: the raw text so far, its data events, and whether it ended. */
class StreamReader {
  text = '';
  ended = false;
  readonly done: Promise<void>;

  constructor(res: Response) {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.text += decoder.decode(value, { stream: true });
      }
      this.ended = true;
    })();
  }

  get comments(): number {
    return this.text.split(KEEPALIVE_COMMENT).length - 1;
  }

  /** The data events so far, parsed (JSON-RPC answers; in the first tests, plain objects). */
  get events(): { n?: number; result: { kind: string; status?: { state: string } } }[] {
    return this.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
  }

  /** Waits until `ready` holds (the stream's text has arrived), failing after `ms`. */
  async until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got: ${JSON.stringify(this.text)}`);
      await sleep(10);
    }
  }
}

describe('keepStreamsAlive', () => {
  it('comments an event stream every interval until it ends, then stops; a slow JSON answer gets none', async () => {
    let closedAt = 0;
    const app = express();
    app.get(
      '/stream',
      keepStreamsAlive((_req, res) => {
        res.setHeader('Content-Type', 'text/event-stream');
        res.flushHeaders();
        setTimeout(() => res.write('data: {"n":1}\n\n'), INTERVAL_MS * 3.5);
        setTimeout(() => {
          res.end('data: {"n":2}\n\n');
          closedAt = Date.now();
        }, INTERVAL_MS * 7.5);
      }, INTERVAL_MS),
    );
    app.get(
      '/json',
      keepStreamsAlive((_req, res) => {
        setTimeout(() => res.json({ ok: true }), INTERVAL_MS * 4);
      }, INTERVAL_MS),
    );
    const { base, server } = await listen(app);
    try {
      const stream = new StreamReader(await fetch(`${base}/stream`));
      await stream.done;
      expect(closedAt).toBeGreaterThan(0);
      // comments before and after the first event (a busy machine may merge intervals: no count), the events intact
      expect(stream.text.indexOf(KEEPALIVE_COMMENT)).toBeLessThan(stream.text.indexOf('data: {"n":1}'));
      expect(stream.text.lastIndexOf(KEEPALIVE_COMMENT)).toBeGreaterThan(stream.text.indexOf('data: {"n":1}'));
      expect(stream.events).toEqual([{ n: 1 }, { n: 2 }]);
      expect(stream.text.endsWith('data: {"n":2}\n\n')).toBe(true);

      const json = await fetch(`${base}/json`);
      expect(await json.text()).toBe('{"ok":true}');
    } finally {
      await close(server);
    }
  });

  it('stops when the client goes away before the stream ends', async () => {
    let writesAfterClose = 0;
    let closed = false;
    const app = express();
    app.get(
      '/stream',
      keepStreamsAlive((_req, res) => {
        res.setHeader('Content-Type', 'text/event-stream');
        res.flushHeaders();
        const write = res.write.bind(res);
        res.write = ((...args: Parameters<typeof res.write>) => {
          if (closed) writesAfterClose++;
          return write(...args);
        }) as typeof res.write;
        res.on('close', () => {
          closed = true;
        });
      }, INTERVAL_MS),
    );
    const { base, server } = await listen(app);
    try {
      const controller = new AbortController();
      const res = await fetch(`${base}/stream`, { signal: controller.signal });
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe(KEEPALIVE_COMMENT);
      controller.abort();
      for (let i = 0; i < 100 && !closed; i++) await sleep(10);
      expect(closed).toBe(true);
      await sleep(INTERVAL_MS * 4);
      expect(writesAfterClose).toBe(0);
    } finally {
      await close(server);
    }
  });
});

describe('A2A streams carry keep-alive comments while the task waits', () => {
  let networks: TestNetworks;
  let t: TestApp;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = testApp(networks.chains, { publicUrl: base, streamKeepAliveMs: INTERVAL_MS });
    server.on('request', t.app);
  });

  afterAll(async () => {
    t.services.watcher.stopAll();
    await close(server);
  });

  const post = (body: object, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
    });

  it('v0.3 message/stream of a register task: comments while the human has not scanned, then completed and the end', async () => {
    const stream = new StreamReader(
      await post({
        method: 'message/stream',
        params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: REGISTER_TESTNET }] } },
      }),
    );
    await stream.until(() => stream.events.some((e) => e.result.status?.state === 'auth-required'), 'the auth-required update');
    const task = stream.events[0]!.result as { kind: string; id: string; artifacts: { parts: { kind: string; data?: Record<string, unknown> }[] }[] };
    expect(task.kind).toBe('task');
    // the task waits for the human: only comments arrive meanwhile
    const before = stream.comments;
    const events = stream.events.length;
    await stream.until(() => stream.comments >= before + 3, 'three comments while the task waits');
    expect(stream.events).toHaveLength(events);
    expect(stream.ended).toBe(false);

    const deepLink = String(task.artifacts[0]!.parts.find((p) => p.kind === 'data')!.data!['deepLink']);
    await approveDeepLink(t.app, networks, deepLink, { callback: false });
    await stream.done;
    expect(stream.events.at(-1)?.result.status?.state).toBe('completed');
    expect(stream.text.endsWith('\n\n')).toBe(true);
  });

  it('v1.0 SubscribeToTask of an open register task: comments, then canceled and the end', async () => {
    const sent = await fetch(`${base}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ data: REGISTER_TESTNET }] } },
      }),
    });
    const taskId = ((await sent.json()) as { result: { task: { id: string } } }).result.task.id;
    const stream = new StreamReader(await post({ method: 'SubscribeToTask', params: { id: taskId } }, { 'A2A-Version': '1.0' }));
    await stream.until(() => stream.events.length >= 1 && stream.comments >= 2, 'the task and two comments');
    expect(stream.ended).toBe(false);
    const canceled = await fetch(`${base}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'CancelTask', params: { id: taskId } }),
    });
    expect(((await canceled.json()) as { result: { status: { state: string } } }).result.status.state).toBe('TASK_STATE_CANCELED');
    await stream.done;
    expect(JSON.stringify(stream.events.at(-1))).toContain('TASK_STATE_CANCELED');
  });

  it("the SDK's v1.0 client reads a commented stream as usual", async () => {
    const client = await new ClientFactory().createFromUrl(base);
    let task: Task | undefined;
    let last: TaskState | undefined;
    let approved: Promise<unknown> | undefined;
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: userMessage([dataPart(REGISTER_TESTNET)]),
      configuration: undefined,
      metadata: undefined,
    })) {
      if (event.payload?.$case === 'task') {
        task = event.payload.value;
        const deepLink = String(dataOf(task.artifacts[0]?.parts)['deepLink']);
        // several intervals of silence before the human scans
        approved = sleep(INTERVAL_MS * 5).then(() => approveDeepLink(t.app, networks, deepLink, { callback: false }));
      } else if (event.payload?.$case === 'statusUpdate') {
        last = event.payload.value.status?.state;
      }
    }
    await approved;
    expect(task).toBeDefined();
    expect(last).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
