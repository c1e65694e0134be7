// Request counts and latency per route template and status (route-label.ts: templates, never URLs). A JSON-RPC
// endpoint serves many operations under one path, so its requests also carry the `rpc_method` label: the method
// named in the body when it is one the endpoint knows, else "other", so a caller cannot grow the series count.
import type { Request, RequestHandler } from 'express';
import type { Metrics } from '../../metrics.js';
import { routeLabel } from './route-label.js';

export { UNMATCHED_ROUTE } from './route-label.js';

/** A JSON-RPC endpoint: its route template and the methods it answers. */
export interface RpcEndpoint {
  route: string;
  methods: readonly string[];
}

/** The label of a JSON-RPC request whose method is absent, malformed or unknown. */
export const OTHER_RPC_METHOD = 'other';

interface Series {
  inc(): void;
  observe(seconds: number): void;
}

function rpcMethodOf(req: Request, known: ReadonlySet<string>): string {
  const method: unknown = (req.body as { method?: unknown } | undefined)?.method;
  return typeof method === 'string' && known.has(method) ? method : OTHER_RPC_METHOD;
}

export function httpMetrics(metrics: Metrics, options: { rpc?: RpcEndpoint } = {}): RequestHandler {
  const rpcRoute = options.rpc?.route;
  const rpcMethods = new Set(options.rpc?.methods ?? []);
  // One pair of label-bound children per route, method, status and RPC method (a bounded set), so that a request
  // does not hash its labels twice.
  const series = new Map<string, Series>();
  const seriesOf = (route: string, method: string, status: string, rpcMethod: string | undefined): Series => {
    const key = `${method} ${status} ${route} ${rpcMethod ?? ''}`;
    let found = series.get(key);
    if (!found) {
      const labels = { route, method, status, ...(rpcMethod ? { rpc_method: rpcMethod } : {}) };
      const counter = metrics.httpRequests.labels(labels);
      const histogram = metrics.httpDuration.labels(labels);
      found = { inc: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, found);
    }
    return found;
  };
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      const route = routeLabel(res);
      const rpcMethod = route === rpcRoute && req.method === 'POST' ? rpcMethodOf(req, rpcMethods) : undefined;
      const one = seriesOf(route, req.method, String(res.statusCode), rpcMethod);
      one.inc();
      one.observe((performance.now() - started) / 1000);
    });
    next();
  };
}
