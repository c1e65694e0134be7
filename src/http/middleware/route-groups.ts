// Express tries the routes of a router one after the other, testing each one's pattern against the path: with the
// whole table in one router, a request pays for every route mounted before its own. Here the table is split by the
// first segment of each route's template (api, .well-known, docs...), one router per segment, and a request goes
// straight to the router of its own first segment: it is tested only against the routes that could match it, in
// the table's order. A template whose first segment is a parameter would be in every group (none is today).
// Only GET, HEAD and POST are routed (the table's methods): others, OPTIONS included, go on to what answers what no
// route answered (a router left with an OPTIONS request it has no route for would answer it itself).
import express, { type RequestHandler, type Router } from 'express';

const ROUTED = new Set(['GET', 'HEAD', 'POST']);

/** The first segment of a path or template, lowercased as express matches paths (case-insensitively). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** One handler over `templates` (in order): `mount(router, index)` mounts the route of templates[index] on `router`. */
export function routeGroups(templates: readonly string[], mount: (router: Router, index: number) => void): RequestHandler {
  const keyOf = (template: string): string | undefined => {
    const segment = firstSegment(template);
    return segment.includes('{') ? undefined : segment;
  };
  const keys = new Set(templates.map(keyOf).filter((key) => key !== undefined));
  const groups = new Map<string, Router>();
  for (const key of keys) {
    const router = express.Router();
    templates.forEach((template, index) => {
      const own = keyOf(template);
      if (own === key || own === undefined) mount(router, index);
    });
    groups.set(key, router);
  }
  const anywhere = express.Router();
  templates.forEach((template, index) => {
    if (keyOf(template) === undefined) mount(anywhere, index);
  });
  const handler: RequestHandler = (req, res, next) => {
    if (!ROUTED.has(req.method)) {
      next();
      return;
    }
    (groups.get(firstSegment(req.path)) ?? anywhere)(req, res, next);
  };
  // The router's listRoutes() recurses into any handle that has a `stack`, as into a mounted router: with these two,
  // the app still lists every route once (tools and the OpenAPI check read it), not an opaque middleware.
  const listRoutes = (): ListedRoute[] => {
    const seen = new Set<string>();
    return [...groups.values(), anywhere]
      .flatMap((router) => (router as unknown as { listRoutes(): ListedRoute[] }).listRoutes())
      .filter((route) => {
        const key = `${String(route.path)} ${route.methods?.join(',')}`;
        return !seen.has(key) && Boolean(seen.add(key));
      });
  };
  return Object.assign(handler, { stack: [], listRoutes });
}

interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
}
