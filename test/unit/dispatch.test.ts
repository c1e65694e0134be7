// The dispatcher routes the route table in one middleware instead of express's router, so it has to answer as that
// router would. Every request here goes to two apps built from the same table: one with the dispatcher, one with the
// same routes on express's own router (mounted with app.use, since the dispatcher too is one middleware of the app
// and what it does not answer goes on to the app's next middleware), each with the same 404 middleware and error
// handler. Both must give the same status and body, so the tests prove the equivalence rather than restate the code.
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type DispatchedRoute, dispatcher } from '../../src/http/dispatch.js';
import { expressPath } from '../../src/http/route.js';

/** Records that a handler ran, in res.locals.ran (the 404 middleware and the answers show it). */
const mark =
  (name: string, then?: unknown): RequestHandler =>
  (_req, res, next) => {
    res.locals['ran'] = [...((res.locals['ran'] as string[] | undefined) ?? []), name];
    if (then === undefined) next();
    else next(then);
  };

/** Answers which route it is, the params it got and the handlers that ran before it. */
const answer =
  (name: string): RequestHandler =>
  (req, res) => {
    res.json({ route: name, params: req.params, ran: res.locals['ran'] ?? [] });
  };

const teapot = (): Error => Object.assign(new Error('I am a teapot'), { status: 418 });

const TABLE: DispatchedRoute[] = [
  { method: 'get', path: '/api/agent/info/{chainId}/{agentId}', chain: [answer('info')] },
  { method: 'post', path: '/api/agent/register', chain: [answer('register')] },
  { method: 'post', path: '/api/agent/refresh/{sessionId}', chain: [answer('refresh')] },
  // next() goes on to the next route of the same path, then to the app
  { method: 'get', path: '/api/pass/{id}', chain: [mark('first'), mark('second')] },
  { method: 'get', path: '/api/pass/{id}', chain: [answer('pass')] },
  { method: 'get', path: '/api/unanswered', chain: [mark('only')] },
  // next('route') leaves the chain at once
  { method: 'get', path: '/api/skip', chain: [mark('skipping', 'route'), mark('never'), answer('never')] },
  { method: 'get', path: '/api/skip', chain: [answer('skip')] },
  // next('router') leaves the routes for the app
  { method: 'get', path: '/api/leave', chain: [mark('leaving', 'router')] },
  { method: 'get', path: '/api/leave', chain: [answer('never')] },
  // errors, whichever way they leave the handler
  { method: 'get', path: '/api/fail/next', chain: [mark('failing', teapot()), answer('never')] },
  {
    method: 'get',
    path: '/api/fail/throw',
    chain: [
      () => {
        throw teapot();
      },
    ],
  },
  {
    method: 'post',
    path: '/api/fail/reject',
    chain: [
      async () => {
        await Promise.resolve();
        throw teapot();
      },
    ],
  },
  {
    method: 'get',
    path: '/api/fail/unknown',
    chain: [
      async () => {
        throw new Error('something of ours');
      },
    ],
  },
  // groups: a template whose first segment is a parameter is tried for every path, in table order
  { method: 'get', path: '/site/{page}', chain: [answer('site-page')] },
  { method: 'get', path: '/{section}/about', chain: [answer('any-about')] },
  { method: 'get', path: '/docs/about', chain: [answer('docs-about')] },
  { method: 'get', path: '/docs/{page}', chain: [answer('docs-page')] },
  { method: 'get', path: '/.well-known/agent.json', chain: [answer('well-known')] },
  // prepare: the route's own headers, before its chain
  {
    method: 'get',
    path: '/prepared/{id}',
    prepare: (res) => res.setHeader('X-Route', '/prepared/:id'),
    chain: [(_req, res) => void res.json({ headerSeenByHandler: res.getHeader('X-Route') ?? null })],
  },
];

const notFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: 'no route', ran: res.locals['ran'] ?? [] });
};
const onError: ErrorRequestHandler = (err: Error & { status?: number }, _req, res, _next) => {
  res.status(err.status ?? 500).json({ error: err.message, ran: res.locals['ran'] ?? [] });
};

/** An app with `routing` first, then the same 404 and error handlers. */
function appWith(routing: RequestHandler): Express {
  const app = express();
  app.use(routing);
  app.use(notFound);
  app.use(onError);
  return app;
}

const withDispatcher = (table: readonly DispatchedRoute[]): Express => appWith(dispatcher(table));

/** The same routes on express's router: `prepare` as the first handler of the chain, templates as :param paths. */
function expressRouter(table: readonly DispatchedRoute[]): express.Router {
  const router = express.Router();
  for (const route of table) {
    const { prepare } = route;
    const before: RequestHandler[] = prepare
      ? [
          (_req, res, next) => {
            prepare(res);
            next();
          },
        ]
      : [];
    router[route.method](expressPath(route.path), ...before, ...route.chain);
  }
  return router;
}

const withExpressRouter = (table: readonly DispatchedRoute[]): Express => appWith(expressRouter(table));

const dispatched = withDispatcher(TABLE);
const reference = withExpressRouter(TABLE);

/** express's router.listRoutes() (router 2.3), which @types/express does not declare. */
const listedBy = (router: express.Router): { path: string | RegExp; methods?: string[]; router?: unknown }[] =>
  (router as unknown as { listRoutes(): { path: string | RegExp; methods?: string[]; router?: unknown }[] }).listRoutes();

type Method = 'get' | 'head' | 'post' | 'put' | 'delete';

/** The request's answer from the dispatcher's app, after checking express's router answers it the same way. */
async function same(method: Method, path: string): Promise<request.Response> {
  const [ours, theirs] = await Promise.all([request(dispatched)[method](path), request(reference)[method](path)]);
  expect({ status: ours.status, body: ours.body }, `${method.toUpperCase()} ${path}`).toEqual({ status: theirs.status, body: theirs.body });
  return ours;
}

describe('dispatcher', () => {
  describe('matching paths as express 5 does', () => {
    it('case-insensitively, with one trailing slash but not two, the query string apart', async () => {
      const info = { route: 'info', params: { chainId: '42220', agentId: '7' }, ran: [] };
      for (const path of ['/api/agent/info/42220/7', '/API/Agent/INFO/42220/7', '/api/agent/info/42220/7/', '/api/agent/info/42220/7?x=1&y=/z']) {
        expect((await same('get', path)).body, path).toEqual(info);
      }
      // the params keep their case: only the template's literal parts match case-insensitively
      expect((await same('get', '/api/agent/INFO/Ab/Cd')).body).toMatchObject({ params: { chainId: 'Ab', agentId: 'Cd' } });
      for (const path of [
        '/api/agent/info/42220/7//',
        '/api/agent/info/42220',
        '/api/agent/info/42220/7/extra',
        '/api/agent/info//7',
        '/api/agent/infos/42220/7',
      ]) {
        expect((await same('get', path)).status, path).toBe(404);
      }
    });

    it('with parameters percent-decoded, encoded slashes and percent signs included', async () => {
      const cases: [string, Record<string, string>][] = [
        ['/api/agent/info/a%20b/%F0%9F%98%80', { chainId: 'a b', agentId: '😀' }],
        ['/api/agent/info/a%2Fb/x', { chainId: 'a/b', agentId: 'x' }],
        ['/api/agent/info/100%25/%3Fq%3D1', { chainId: '100%', agentId: '?q=1' }],
        ['/api/agent/info/caf%C3%A9/+plus', { chainId: 'café', agentId: '+plus' }],
      ];
      for (const [path, params] of cases) expect((await same('get', path)).body.params, path).toEqual(params);
    });

    it("a malformed escape in a parameter is a 400 for the app's error handler, with express's message", async () => {
      const res = await same('get', '/api/agent/info/%E0%A4%A/7');
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Failed to decode param '%E0%A4%A'");
      expect((await same('post', '/api/agent/refresh/%ZZ')).body.error).toBe("Failed to decode param '%ZZ'");
    });
  });

  describe('methods', () => {
    it('GET routes answer HEAD (headers, no body)', async () => {
      const [head, get] = await Promise.all([same('head', '/api/agent/info/42220/7'), request(dispatched).get('/api/agent/info/42220/7')]);
      expect(head.status).toBe(200);
      expect(head.text ?? '').toBe('');
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
    });

    it('a POST route does not answer GET, a GET route does not answer POST, other methods go on to the app', async () => {
      expect((await same('post', '/api/agent/register')).body).toMatchObject({ route: 'register' });
      expect((await same('get', '/api/agent/register')).status).toBe(404);
      expect((await same('head', '/api/agent/register')).status).toBe(404);
      expect((await same('post', '/api/agent/info/42220/7')).status).toBe(404);
      expect((await same('put', '/api/agent/info/42220/7')).status).toBe(404);
      expect((await same('delete', '/api/agent/register')).status).toBe(404);
    });
  });

  describe('what a handler passes to next', () => {
    it('next() runs the rest of the chain, then the next route of the path, then the app', async () => {
      expect((await same('get', '/api/pass/1')).body).toEqual({ route: 'pass', params: { id: '1' }, ran: ['first', 'second'] });
      expect((await same('get', '/api/unanswered')).body).toEqual({ error: 'no route', ran: ['only'] });
    });

    it("next('route') skips the rest of the chain for the next route; next('router') goes on to the app", async () => {
      expect((await same('get', '/api/skip')).body).toEqual({ route: 'skip', params: {}, ran: ['skipping'] });
      expect((await same('get', '/api/leave')).body).toEqual({ error: 'no route', ran: ['leaving'] });
    });

    it("next(error), a thrown error and a rejected promise reach the app's error handler, past the rest of the chain", async () => {
      expect((await same('get', '/api/fail/next')).body).toEqual({ error: 'I am a teapot', ran: ['failing'] });
      for (const [method, path] of [
        ['get', '/api/fail/throw'],
        ['post', '/api/fail/reject'],
      ] as const) {
        const res = await same(method, path);
        expect({ status: res.status, error: res.body.error }, path).toEqual({ status: 418, error: 'I am a teapot' });
      }
      expect((await same('get', '/api/fail/unknown')).status).toBe(500);
    });
  });

  describe('groups by first segment', () => {
    it('a template whose first segment is a parameter is tried in every group and for paths of no group, in table order', async () => {
      const routeOf = async (path: string) => ((await same('get', path)).body as { route?: string }).route;
      // /site/{page} is before /{section}/about in the table, /{section}/about before /docs/about
      expect(await routeOf('/site/about')).toBe('site-page');
      expect(await routeOf('/docs/about')).toBe('any-about');
      expect(await routeOf('/DOCS/About/')).toBe('any-about');
      expect(await routeOf('/docs/intro')).toBe('docs-page');
      expect(await routeOf('/elsewhere/about')).toBe('any-about');
      expect(await routeOf('/.well-known/agent.json')).toBe('well-known');
      expect((await same('get', '/elsewhere/intro')).status).toBe(404);
      expect((await same('get', '/about')).status).toBe(404);
    });
  });

  it("prepare runs before the matched route's chain, and only for a matched route", async () => {
    const res = await same('get', '/prepared/1');
    expect(res.body).toEqual({ headerSeenByHandler: '/prepared/:id' });
    expect(res.headers['x-route']).toBe('/prepared/:id');
    expect((await request(dispatched).post('/prepared/1')).headers['x-route']).toBeUndefined();
    expect((await request(dispatched).get('/prepared/1/more')).headers['x-route']).toBeUndefined();
  });

  it("lists the table as express's router lists the same routes, and the app's route list reaches it", () => {
    const routing = dispatcher(TABLE);
    const theirs = listedBy(expressRouter(TABLE)).map(({ path, methods }) => ({ path, methods }));
    expect(routing.listRoutes()).toEqual(theirs);
    expect(routing.listRoutes()[0]).toEqual({ path: '/api/agent/info/:chainId/:agentId', methods: ['GET', 'HEAD'] });
    // express's listRoutes recurses into a handle with a stack, as into a mounted router (the OpenAPI check walks it)
    const app = express();
    app.use(routing);
    const listed = listedBy((app as unknown as { router: express.Router }).router);
    expect(listed).toEqual([expect.objectContaining({ path: '/', router: routing })]);
  });
});
