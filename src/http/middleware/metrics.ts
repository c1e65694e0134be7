// Request counts and latency per route template and status. The route label is the express route the
// request matched (its router's mount path plus the route path, e.g. /api/agent/info/:chainId/:agentId),
// never the URL: agent ids, addresses and session tokens must not become label values (they would leak
// into the metrics and make the series count unbounded). Requests that match no route (404s, CORS
// preflights answered by middleware) share the label "unmatched".
import type { Request, RequestHandler } from 'express';
import type { Metrics } from '../../metrics.js';

export const UNMATCHED_ROUTE = 'unmatched';

function routeTemplate(req: Request): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (path === undefined) return UNMATCHED_ROUTE;
  const template = typeof path === 'string' ? path : String(path);
  return `${req.baseUrl}${template}` || '/';
}

interface Series {
  inc(): void;
  observe(seconds: number): void;
}

export function httpMetrics(metrics: Metrics): RequestHandler {
  // One pair of label-bound children per route, method and status (a bounded set: templates, not URLs),
  // so that a request does not hash its labels twice.
  const series = new Map<string, Series>();
  const seriesOf = (route: string, method: string, status: string): Series => {
    const key = `${method} ${status} ${route}`;
    let found = series.get(key);
    if (!found) {
      const counter = metrics.httpRequests.labels(route, method, status);
      const histogram = metrics.httpDuration.labels(route, method, status);
      found = { inc: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, found);
    }
    return found;
  };
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      const one = seriesOf(routeTemplate(req), req.method, String(res.statusCode));
      one.inc();
      one.observe((performance.now() - started) / 1000);
    });
    next();
  };
}
