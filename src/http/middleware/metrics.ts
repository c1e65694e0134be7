// Request counts and latency per route template and status (route-label.ts: templates, never URLs). A JSON-RPC
// endpoint serves many operations under one path, so its requests also carry the `rpc_method` label: the method
// named in the body when it is one the endpoint knows, else "other", so a caller cannot grow the series count.
import type { Request, Response } from 'express';
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

/** The label-bound children of one series (prom-client's labels(), looked up once per series). */
interface Series {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

function rpcMethodOf(req: Request, known: ReadonlySet<string>): string {
  const method: unknown = (req.body as { method?: unknown } | undefined)?.method;
  return typeof method === 'string' && known.has(method) ? method : OTHER_RPC_METHOD;
}

/** The map under `key` in `map`, made on first use. */
function under<K, V>(map: Map<K, Map<string | number, V>>, key: K): Map<string | number, V> {
  let found = map.get(key);
  if (found === undefined) {
    found = new Map();
    map.set(key, found);
  }
  return found;
}

export interface HttpMetrics {
  /** When an answer has been sent, `ms` after its request arrived: counted and timed under its route's labels. */
  end(res: Response, ms: number): void;
}

export function httpMetrics(metrics: Metrics, options: { rpc?: RpcEndpoint } = {}): HttpMetrics {
  const rpcRoute = options.rpc?.route;
  const rpcMethods = new Set(options.rpc?.methods ?? []);
  // route → method → status → RPC method ('' elsewhere): a bounded set, looked up without building a key string
  const series = new Map<string, Map<string | number, Map<string | number, Map<string | number, Series>>>>();
  const seriesOf = (route: string, method: string, status: number, rpcMethod: string | undefined): Series => {
    const byRpcMethod = under(under(under(series, route), method), status);
    let found = byRpcMethod.get(rpcMethod ?? '');
    if (found === undefined) {
      const labels = { route, method, status: String(status), ...(rpcMethod ? { rpc_method: rpcMethod } : {}) };
      found = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
      byRpcMethod.set(rpcMethod ?? '', found);
    }
    return found;
  };
  return {
    end(res, ms) {
      const { req } = res;
      const route = routeLabel(res);
      const rpcMethod = route === rpcRoute && req.method === 'POST' ? rpcMethodOf(req, rpcMethods) : undefined;
      const one = seriesOf(route, req.method, res.statusCode, rpcMethod);
      one.requests.inc();
      one.duration.observe(ms / 1000);
    },
  };
}
