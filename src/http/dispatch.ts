// Routes requests to the entries of the route table, in one step of the app's middleware instead of express's
// router per group and route: the request is tested only against the routes of its path's first segment (api,
// .well-known, docs...), in the table's order, with a regex compiled once per route, and the matched route's chain
// (its headers, rate limit, body parser, handler) runs with a `next` of its own. Paths match as express's router
// matches them (case-insensitively, one trailing slash allowed, parameters percent-decoded, a malformed escape is a
// 400), GET routes answer HEAD, and `next()`, `next('route')`, `next(error)` and rejected promises mean what they
// mean to express. What no route answers goes on to the app's next middleware (unmatched.ts, then the 404).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type Route, type TemplatePattern, templatePattern } from './route.js';

/** A route of the table as the dispatcher runs it. */
export interface DispatchedRoute {
  path: string;
  method: Route['method'];
  /** Run first when the route matched: its own response headers (edge.ts routeHeaders). */
  prepare?: (res: Response) => void;
  /** Its rate limit, body parser and handler, in order. */
  chain: readonly RequestHandler[];
}

type Compiled = DispatchedRoute & TemplatePattern;

/** The first segment of a path or template, lowercased (paths match case-insensitively). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

const compile = (route: DispatchedRoute): Compiled => ({ ...route, ...templatePattern(route.path) });

/** A parameter as express's router decodes it; a malformed escape is the caller's mistake (400). */
function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw Object.assign(new Error(`Failed to decode param '${value}'`), { status: 400, statusCode: 400 });
  }
}

const handles = (route: Compiled, method: string): boolean =>
  route.method === 'get' ? method === 'GET' || method === 'HEAD' : method === route.method.toUpperCase();

/** The params of `path` if `route` matches it. */
function paramsOf(route: Compiled, path: string): Record<string, string> | undefined {
  const found = route.pattern.exec(path);
  if (found === null) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < route.names.length; i++) params[route.names[i] as string] = decodeParam(found[i + 1] as string);
  return params;
}

/** A returned promise, or any thenable, as express's router recognizes one. */
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';

/** Calls a handler as express does: a throw or a rejection becomes next(error) (a falsy reason, 'Rejected promise'). */
function invoke(handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const returned: unknown = handler(req, res, next);
    if (isThenable(returned)) returned.then(undefined, (error: unknown) => next(error || new Error('Rejected promise')));
  } catch (error) {
    next(error);
  }
}

/**
 * Runs `chain`; `exit` gets what ends it: nothing (fell through), 'route', 'router' or an error. As for express, a
 * falsy argument to next (null, false) is no error: the chain goes on.
 */
function run(chain: readonly RequestHandler[], req: Request, res: Response, exit: (outcome?: unknown) => void): void {
  let index = 0;
  const next: NextFunction = (outcome?: unknown) => {
    if (outcome) {
      exit(outcome);
      return;
    }
    const handler = chain[index++];
    if (handler === undefined) exit();
    else invoke(handler, req, res, next);
  };
  next();
}

/** A route as express's router.listRoutes() lists one. */
export interface ListedRoute {
  path: string;
  methods: string[];
}

/**
 * A middleware that lists the routes it answers: express's router.listRoutes() recurses into a handle that has a
 * `stack`, as into a mounted router, so the app still lists every route (tools and the OpenAPI check read it).
 */
export type RoutingHandler = RequestHandler & { stack: []; listRoutes(): ListedRoute[] };

/** One middleware that routes to `routes` (in order). */
export function dispatcher(routes: readonly DispatchedRoute[]): RoutingHandler {
  const compiled = routes.map(compile);
  const keyOf = (route: Compiled): string | undefined => {
    const segment = firstSegment(route.path);
    return segment.includes('{') ? undefined : segment;
  };
  // a route whose first segment is a parameter could match any path: it is in every group
  const anywhere = compiled.filter((route) => keyOf(route) === undefined);
  const groups = new Map<string, Compiled[]>();
  for (const route of compiled) {
    const key = keyOf(route);
    if (key !== undefined && !groups.has(key))
      groups.set(
        key,
        compiled.filter((other) => keyOf(other) === key || keyOf(other) === undefined),
      );
  }

  const handler: RequestHandler = (req, res, done) => {
    const { method } = req;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
      done();
      return;
    }
    const path = req.path;
    const candidates = groups.get(firstSegment(path)) ?? anywhere;
    let index = 0;
    const nextRoute = (outcome?: unknown): void => {
      if (outcome === 'router') {
        done();
        return;
      }
      if (outcome && outcome !== 'route') {
        done(outcome);
        return;
      }
      while (index < candidates.length) {
        const route = candidates[index++] as Compiled;
        // the path first, as express's router: a malformed escape is a 400 whatever the route's method
        let params: Record<string, string> | undefined;
        try {
          params = paramsOf(route, path);
        } catch (error) {
          done(error);
          return;
        }
        if (params === undefined || !handles(route, method)) continue;
        req.params = params;
        route.prepare?.(res);
        run(route.chain, req, res, nextRoute);
        return;
      }
      done();
    };
    nextRoute();
  };
  const listRoutes = (): ListedRoute[] =>
    routes.map((route) => ({
      path: route.path.replace(/\{([^}]+)\}/g, ':$1'),
      methods: route.method === 'get' ? ['GET', 'HEAD'] : [route.method.toUpperCase()],
    }));
  return Object.assign(handler, { stack: [] as [], listRoutes });
}
