// GET /metrics in the registry's text format. Operators scrape it; it is neither cached nor CORS-enabled. With a
// token set it answers only `Authorization: Bearer <token>` (401 otherwise); it may also be served by a listener of
// its own (metrics-server.ts) instead of the main port.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '../../metrics.js';
import type { Route } from '../route.js';

export interface MetricsAccess {
  /** The bearer token scrapers must send; unset: anyone who reaches the endpoint may read it. */
  token?: string;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Whether the Authorization header carries the token; compared in constant time (as digests, so lengths match too). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return timingSafeEqual(digest(match?.[1]?.trim() ?? ''), digest(token)) && match !== null;
}

/** Answers a metrics request, or 401 without the token. */
export async function answerMetrics(metrics: Metrics, access: MetricsAccess, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (access.token !== undefined && !bearerMatches(req.headers.authorization, access.token)) {
    res.writeHead(401, {
      'Content-Type': 'application/json; charset=utf-8',
      'WWW-Authenticate': 'Bearer realm="metrics"',
      'Cache-Control': 'no-store',
    });
    res.end(JSON.stringify({ error: 'The metrics need Authorization: Bearer <METRICS_TOKEN>' }));
    return;
  }
  const text = await metrics.registry.metrics();
  res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : text);
}

export function metricsRoutes(metrics: Metrics, access: MetricsAccess = {}): Route[] {
  return [
    {
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      description:
        'Prometheus text format: http_requests_total and http_request_duration_seconds by route template, method and status ' +
        '(and rpc_method, the JSON-RPC method, on the A2A endpoint); rpc_requests_total by network and method (JSON-RPC calls to ' +
        'the chain RPC) and rpc_round_trips_total by network (HTTP requests); cache_lookups_total by cache and result; process metrics.' +
        (access.token ? ' Needs Authorization: Bearer <METRICS_TOKEN>.' : ''),
      tags: ['Service'],
      responses: access.token
        ? { 200: { description: 'The metrics', contentType: 'text/plain' }, 401: { description: 'No or another bearer token' } }
        : { 200: { description: 'The metrics', contentType: 'text/plain' } },
      handler: (req, res) => answerMetrics(metrics, access, req, res),
    },
  ];
}
