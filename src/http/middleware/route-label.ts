// The route a request matched, as its template (e.g. /api/agent/info/:chainId/:agentId), for metrics labels and
// log lines: never the URL, whose agent ids, addresses and session tokens must not become label values (they would
// leak into the metrics and make the series count unbounded). app.ts tags each route of the table as it mounts it,
// rather than reading req.route afterwards: a handler that runs a router of its own (the A2A SDK's) leaves that
// router's "/" in req.route.
import type { RequestHandler, Response } from 'express';

/** The label of requests that match no route (404s, CORS preflights answered by middleware). */
export const UNMATCHED_ROUTE = 'unmatched';

const ROUTE = 'routeTemplate';

/** Marks the requests of one route with its template; mounted first in the route's chain. */
export const routeTag =
  (template: string): RequestHandler =>
  (_req, res, next) => {
    res.locals[ROUTE] = template;
    next();
  };

export const routeLabel = (res: Response): string => (res.locals[ROUTE] as string | undefined) ?? UNMATCHED_ROUTE;
