import type { Metrics } from '../../metrics.js';
import type { Route } from '../route.js';

/** GET /metrics in the registry's text format. Operators scrape it; it is neither cached nor CORS-enabled. */
export function metricsRoutes(metrics: Metrics): Route[] {
  return [
    {
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      description:
        'Prometheus text format: http_requests_total and http_request_duration_seconds by route template, method and status; ' +
        'rpc_requests_total by network (HTTP round trips to the chain RPC); cache_lookups_total by cache and result; process metrics.',
      tags: ['Service'],
      responses: { 200: { description: 'The metrics', contentType: 'text/plain' } },
      handler: async (_req, res) => {
        const text = await metrics.registry.metrics();
        res.set('Content-Type', metrics.registry.contentType).send(text);
      },
    },
  ];
}
