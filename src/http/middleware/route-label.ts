// The route a request matched, as its template (e.g. /api/agent/info/:chainId/:agentId), for metrics labels and
// log lines: never the URL, whose agent ids, addresses and session tokens must not become label values (they would
// leak into the metrics and make the series count unbounded). Each route of the table is tagged first in its own
// chain (edge.ts routeHeaders), rather than by reading req.route afterwards: a handler that runs a router of its own
// (the A2A SDK's) leaves that router's "/" in req.route.
import type { Response } from 'express';

/** The label of requests that match no route (404s, CORS preflights answered by middleware). */
export const UNMATCHED_ROUTE = 'unmatched';

const ROUTE = 'routeTemplate';

/** Marks a request as one of the route with this template. */
export const tagRoute = (res: Response, template: string): void => {
  res.locals[ROUTE] = template;
};

export const routeLabel = (res: Response): string => (res.locals[ROUTE] as string | undefined) ?? UNMATCHED_ROUTE;
