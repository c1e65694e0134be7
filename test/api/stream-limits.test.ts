// Long-lived streams on the in-process app and a real chain: the scan pages of one session share one watch of the
// session watcher, a stream ends by itself at its longest lifetime, and the limits count and free their tickets.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamLimits } from '../../src/services/stream-limits.js';
import { newAccount } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { deployTestNetworks } from '../support/registration-flow.js';

/** An event stream read until `enough` says so (then closed) or it ends; whether the server ended it. */
async function follow(
  url: string,
  enough: (text: string) => boolean,
): Promise<{ status: number; text: string; endedByServer: boolean; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
  let text = '';
  if (!res.body) return { status: res.status, text: await res.text(), endedByServer: true, close: () => {} };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { status: res.status, text, endedByServer: true, close: () => {} };
    text += value;
    if (enough(text)) return { status: res.status, text, endedByServer: false, close: () => controller.abort() };
  }
}

describe('stream limits', () => {
  let t: TestApp;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    const net = await deployTestNetworks();
    t = testApp(net.chains, { sessionWatch: { pollIntervalMs: 100 }, streamLimits: { maxLifetimeMs: 1_500 } });
    server = createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const eventsOf = async (): Promise<string> => {
    const opened = await request(t.app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress: newAccount().address });
    expect(opened.status).toBe(200);
    return `${origin}${new URL(opened.body.scanPageUrl as string).pathname}/events`;
  };

  it('the pages of one session share one watch, which ends when the last page leaves', async () => {
    const url = await eventsOf();
    const before = t.services.watcher.size;
    const pages = await Promise.all(Array.from({ length: 4 }, () => follow(url, (text) => text.includes('event: state'))));
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200, 200]);
    expect(t.services.watcher.size).toBe(before + 1);
    expect(t.services.streams.open).toBe(4);
    for (const page of pages) page.close();
    await expect.poll(() => t.services.watcher.size).toBe(before);
    await expect.poll(() => t.services.streams.open).toBe(0);
  });

  it('a stream ends by itself at its longest lifetime, and its ticket is freed', async () => {
    const url = await eventsOf();
    const page = await follow(url, () => false);
    expect(page.status).toBe(200);
    expect(page.endedByServer).toBe(true);
    expect(page.text).toContain('"stage":"qr-ready"');
    await expect.poll(() => t.services.streams.open).toBe(0);
  });

  it('counts per client, per subject and in all, refuses with 429 naming the limit, and frees on release', () => {
    const limits = new StreamLimits({ perClient: 2, perSubject: 2, total: 3 });
    const a = limits.admit('a', 'task:1');
    limits.admit('a', 'task:2');
    expect(() => limits.admit('a', 'task:3')).toThrow(/at most 2 per client/);
    limits.admit('b', 'task:1');
    expect(() => limits.admit('c', 'task:1')).toThrow(/at most 2 follow one task or session/);
    expect(() => limits.admit('c')).toThrow(/the service holds 3, its most/);
    a.release();
    a.release(); // idempotent
    expect(limits.open).toBe(2);
    expect(() => limits.admit('c', 'task:1')).not.toThrow();
    let refusal: unknown;
    try {
      limits.admit('d');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ status: 429, retryAfterSeconds: 10 });
  });
});
