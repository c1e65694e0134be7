// The response cache's own rules, with an express app of a few routes over real HTTP: what is stored (a complete
// 200 its handler marked, per value of the headers it Varies on), what is never stored (an answer whose key changed
// while it was being made, errors, streamed answers, Vary: *), and what empties it (a key's change, the answer's
// validity end, the least recently used past the bound); while its service cannot hear of changes, it answers nothing.
import type { Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { keepResponse, ResponseCache } from '../../src/http/response-cache.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import type { Reuse } from '../../src/services/answer-reuse.js';
import { exchange, listen } from '../support/response-cache.js';

interface Served {
  base: string;
  cache: ResponseCache;
  /** Requests express handled, by path. */
  handled: Map<string, number>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * /keep/:name answers its name, kept with `reuse()`; /slow waits for `gate` after marking; /vary varies on X-V;
 * /streamed writes in pieces without a length; /missing is a 404 marked cacheable; /plain is not marked.
 */
async function serve(options: { maxEntries?: number; reuse?: () => Reuse; clock?: () => number; gate?: () => Promise<void> } = {}): Promise<Served> {
  const handled = new Map<string, number>();
  const reuse = options.reuse ?? (() => ({ keys: ['k'], validUntilMs: Number.POSITIVE_INFINITY, live: () => true }));
  const app = express();
  app.use((req, _res, next) => {
    handled.set(req.path, (handled.get(req.path) ?? 0) + 1);
    next();
  });
  app.get('/keep/:name', (req, res) => {
    keepResponse(res, reuse());
    res.json({ name: req.params.name });
  });
  app.get('/slow', async (_req, res) => {
    keepResponse(res, reuse());
    await options.gate?.();
    res.json({ slow: true });
  });
  app.get('/vary', (req, res) => {
    keepResponse(res, reuse());
    res.append('Vary', 'X-V').json({ v: req.header('X-V') ?? null });
  });
  app.get('/vary-all', (_req, res) => {
    keepResponse(res, reuse());
    res.append('Vary', '*').json({});
  });
  app.get('/streamed', (_req, res) => {
    keepResponse(res, reuse());
    res.write('a');
    res.end('b');
  });
  app.get('/missing', (_req, res) => {
    keepResponse(res, reuse());
    res.status(404).json({ error: 'no' });
  });
  app.get('/plain', (_req, res) => {
    res.json({ plain: true });
  });
  const cache = new ResponseCache({
    maxEntries: options.maxEntries ?? 100,
    metrics: new Metrics(),
    logger: createLogger('silent'),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const { server, base } = await listen(cache.front(app));
  servers.push(server);
  return { base, cache, handled };
}

/** GETs `path` `times` times; how many reached express. */
async function reached(served: Served, path: string, times = 2, headers: Record<string, string> = {}): Promise<number> {
  const route = path.split('?')[0] as string;
  const before = served.handled.get(route) ?? 0;
  for (let i = 0; i < times; i++) await exchange(served.base, path, { headers });
  return (served.handled.get(route) ?? 0) - before;
}

/** A server whose /slow waits in its handler: `slow(during)` asks for it, runs `during` meanwhile, and says whether the answer was stored. */
async function gatedSlow(): Promise<{ served: Served; slow(during?: () => void): Promise<boolean> }> {
  let arrived!: () => void;
  let release!: () => void;
  const served = await serve({
    gate: () =>
      new Promise<void>((resolve) => {
        release = resolve;
        arrived();
      }),
  });
  const slow = async (during: () => void = () => {}): Promise<boolean> => {
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const answer = exchange(served.base, '/slow');
    await inside;
    during();
    release();
    expect((await answer).status).toBe(200);
    return served.cache.has('/slow');
  };
  return { served, slow };
}

describe('the response cache', () => {
  it('stores a marked 200 on its first GET and answers its repeats, GET and HEAD alike', async () => {
    const served = await serve();
    expect(await reached(served, '/keep/a', 3)).toBe(1);
    const head = await exchange(served.base, '/keep/a', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(served.handled.get('/keep/a')).toBe(1);
  });

  it('a HEAD alone fills nothing (it has no body to keep)', async () => {
    const served = await serve();
    await exchange(served.base, '/keep/h', { method: 'HEAD' });
    expect(served.cache.has('/keep/h')).toBe(false);
  });

  it('never stores an unmarked answer, an error, a streamed answer or one that Varies on *', async () => {
    const served = await serve();
    for (const path of ['/plain', '/missing', '/streamed', '/vary-all']) {
      expect(await reached(served, path), path).toBe(2);
      expect(served.cache.has(path), path).toBe(false);
    }
  });

  it('does not store an answer whose key changed while it was being made (it may predate the change)', async () => {
    const { served, slow } = await gatedSlow();
    expect(await slow(() => served.cache.drop('k'))).toBe(false);
    expect(await slow(() => served.cache.drop('another key'))).toBe(true);
    served.cache.drop('k');
    expect(served.cache.has('/slow')).toBe(false);
    expect(await slow()).toBe(true);
  });

  it("forgets a backfill's flood of changes at once: the answers under way then are not stored, later ones are", async () => {
    const { served, slow } = await gatedSlow();
    // none of them is the answer's key
    const flood = (changes: number) => () => {
      for (let i = 0; i < changes; i++) served.cache.drop(`testnet/agent/${i}`);
    };
    expect(await slow(flood(9_999))).toBe(true);
    served.cache.drop('k');
    expect(await slow(flood(10_001))).toBe(false);
    // with nothing under way, changes are not remembered, and the next answer is stored
    flood(20_000)();
    expect(await slow()).toBe(true);
  });

  it('once it has forgotten a flood, an answer that arrives later still has its changes remembered', async () => {
    const waiting: (() => void)[] = [];
    let arrived = () => {};
    const served = await serve({
      gate: () =>
        new Promise<void>((resolve) => {
          waiting.push(resolve);
          arrived();
        }),
    });
    /** Asks for `target` and resolves once its handler waits at the gate (with the answer to come). */
    const ask = async (target: string) => {
      const inside = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const answer = exchange(served.base, target);
      await inside;
      return { answer };
    };
    const early = await ask('/slow?early');
    for (let i = 0; i < 10_001; i++) served.cache.drop(`testnet/agent/${i}`);
    // only the early answer was under way: the flood's later changes need not be remembered for it
    for (let i = 0; i < 10_001; i++) served.cache.drop(`testnet/human/${i}`);
    const late = await ask('/slow?late');
    served.cache.drop('k');
    for (const release of waiting) release();
    expect([(await early.answer).status, (await late.answer).status]).toEqual([200, 200]);
    expect([served.cache.has('/slow?early'), served.cache.has('/slow?late')]).toEqual([false, false]);
  });

  it('a change drops the targets depending on its key, and no other', async () => {
    let key = 'one';
    const served = await serve({ reuse: () => ({ keys: ['network', key], validUntilMs: Number.POSITIVE_INFINITY, live: () => true }) });
    await exchange(served.base, '/keep/a');
    key = 'two';
    await exchange(served.base, '/keep/b');
    served.cache.drop('one');
    expect([served.cache.has('/keep/a'), served.cache.has('/keep/b')]).toEqual([false, true]);
    served.cache.drop('network');
    expect(served.cache.size).toBe(0);
  });

  it('an answer goes at its validity end (by the clock it was given)', async () => {
    let now = 1_000;
    const served = await serve({ clock: () => now, reuse: () => ({ keys: [], validUntilMs: 2_000, live: () => true }) });
    expect(await reached(served, '/keep/a')).toBe(1);
    now = 2_000;
    expect(await reached(served, '/keep/a', 1)).toBe(1);
    expect(served.cache.has('/keep/a')).toBe(false);
  });

  it('answers nothing while its service cannot hear of changes, and answers again once it can', async () => {
    let live = true;
    const served = await serve({ reuse: () => ({ keys: [], validUntilMs: Number.POSITIVE_INFINITY, live: () => live }) });
    expect(await reached(served, '/keep/a')).toBe(1);
    live = false;
    expect(await reached(served, '/keep/a')).toBe(2);
    live = true;
    expect(await reached(served, '/keep/a')).toBe(0);
  });

  it('holds at most maxEntries targets, the least recently used going first', async () => {
    const served = await serve({ maxEntries: 2 });
    await exchange(served.base, '/keep/a');
    await exchange(served.base, '/keep/b');
    await exchange(served.base, '/keep/a');
    await exchange(served.base, '/keep/c');
    expect(['/keep/a', '/keep/b', '/keep/c'].map((path) => served.cache.has(path))).toEqual([true, false, true]);
  });

  it('keeps one answer per value of the headers it Varies on; an absent header is not an empty one', async () => {
    const served = await serve();
    expect(await reached(served, '/vary', 2, { 'X-V': '1' })).toBe(1);
    expect(await reached(served, '/vary', 2, { 'X-V': '2' })).toBe(1);
    expect(await reached(served, '/vary', 2)).toBe(1);
    expect(await reached(served, '/vary', 2, { 'X-V': '' })).toBe(1);
    expect(JSON.parse((await exchange(served.base, '/vary', { headers: { 'X-V': '2' } })).body.toString())).toEqual({ v: '2' });
  });

  it('with no room (maxEntries 0) the front is the app itself', async () => {
    const app = express();
    const cache = new ResponseCache({ maxEntries: 0, metrics: new Metrics(), logger: createLogger('silent') });
    expect(cache.front(app)).toBe(app);
  });
});
