// The corners where the dispatcher, the fast res.json and the log destination could part from express 5, stock
// express or what flushLogger promises: each case is asked of both and must get the same answer.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { type DispatchedRoute, dispatcher } from '../../src/http/dispatch.js';
import { fastJson } from '../../src/http/json-response.js';
import { expressPath } from '../../src/http/route.js';
import { createLogger, flushLogger, TurnBatchedDestination } from '../../src/logger.js';

describe('dispatcher against express 5 router', () => {
  const TABLE: DispatchedRoute[] = [
    { method: 'get', path: '/null', chain: [(_req, _res, next) => next(null), (_req, res) => void res.json({ route: 'after next(null)' })] },
    {
      method: 'get',
      path: '/falsy-rejection',
      chain: [
        async () => {
          throw false;
        },
      ],
    },
    { method: 'post', path: '/post-only/{id}', chain: [(_req, res) => void res.json({ route: 'post' })] },
    {
      method: 'get',
      path: '/thenable',
      chain: [
        (() => ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a native Promise is the point
          then: (_resolve: unknown, reject: (error: Error) => void) => reject(new Error('thenable rejected')),
        })) as unknown as RequestHandler,
      ],
    },
  ];
  const notFound: RequestHandler = (_req, res) => void res.status(404).json({ error: 'no route' });
  const onError: ErrorRequestHandler = (err: Error & { status?: number }, _req, res, _next) =>
    void res.status(err.status ?? 500).json({ error: err.message });
  const build = (routing: RequestHandler): Express => {
    const app = express();
    app.use(routing);
    app.use(notFound);
    app.use(onError);
    return app;
  };
  const router = express.Router();
  for (const route of TABLE) router[route.method](expressPath(route.path), ...route.chain);
  const ours = build(dispatcher(TABLE));
  const theirs = build(router);
  const both = async (path: string) => {
    const [a, b] = await Promise.all([request(ours).get(path).timeout(2_000), request(theirs).get(path).timeout(2_000)]);
    return { dispatcher: { status: a.status, body: a.body }, express: { status: b.status, body: b.body } };
  };

  it.each([
    ['next(null) goes on with the chain', '/null', { status: 200, body: { route: 'after next(null)' } }],
    [
      "a promise rejected with a falsy reason is express's 500 'Rejected promise'",
      '/falsy-rejection',
      { status: 500, body: { error: 'Rejected promise' } },
    ],
    [
      "a malformed escape in the path of a route of another method is express's 400",
      '/post-only/%E0%A4%A',
      { status: 400, body: { error: "Failed to decode param '%E0%A4%A'" } },
    ],
    ['a rejected thenable reaches the error handler', '/thenable', { status: 500, body: { error: 'thenable rejected' } }],
  ])('%s, as for express', async (_name, path, expected) => {
    const { dispatcher: a, express: b } = await both(path);
    expect(b).toEqual(expected);
    expect(a).toEqual(b);
  });
});

describe('fastJson against stock express', () => {
  for (const [name, etag] of [
    ['strong ETags', 'strong'],
    ['an ETag function of the app', () => '"custom"'],
  ] as const) {
    it(`with ${name} the ETag is the app's, as stock express sends it`, async () => {
      const build = (fast: boolean) => {
        const app = express();
        app.set('etag', etag);
        if (fast) fastJson(app);
        app.get('/answer', (_req, res) => void res.json({ a: 1 }));
        return app;
      };
      const [a, b] = [await request(build(true)).get('/answer'), await request(build(false)).get('/answer')];
      expect(b.headers['etag']).not.toMatch(/^W\//);
      expect(a.headers['etag']).toBe(b.headers['etag']);
    });
  }
});

describe('TurnBatchedDestination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-log-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const indexes = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { i: number }).i);

  it('flushLogger resolves once the lines are written', async () => {
    const file = join(dir, 'flush.log');
    const sink = pino.destination({ dest: file, sync: false });
    await once(sink, 'ready');
    const logger = createLogger('info', new TurnBatchedDestination(sink));
    for (let i = 0; i < 20_000; i++) logger.info({ i, pad: 'x'.repeat(500) }, 'line');
    await flushLogger(logger);
    expect(indexes(file)).toHaveLength(20_000);
  });
});
