// The metrics on a listener of their own (METRICS_PORT), bound to METRICS_HOST (loopback by default), so a scraper
// on the host or a private network reads them while the public port does not serve them at all. Plain node:http:
// one path, nothing else to route. Every answer is JSON but the metrics themselves, as on the main port.
import { createServer, type Server } from 'node:http';
import type { Metrics } from '../metrics.js';
import { answerMetrics, type MetricsAccess } from './routes/metrics.js';
import { answerServerEdges } from './server-edges.js';

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };

export interface MetricsServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: Metrics, options: MetricsAccess & { port: number; host: string }): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      answerMetrics(metrics, options, req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, JSON_TYPE);
        res.end(JSON.stringify({ error: 'Internal server error' }));
      });
      return;
    }
    if (path === '/metrics') {
      const allow = 'GET, HEAD, OPTIONS';
      if (req.method === 'OPTIONS') res.writeHead(204, { Allow: allow }).end();
      else
        res
          .writeHead(405, { ...JSON_TYPE, Allow: allow })
          .end(JSON.stringify({ error: `Method ${req.method} is not allowed on /metrics: use ${allow}` }));
      return;
    }
    res.writeHead(404, JSON_TYPE).end(JSON.stringify({ error: `No endpoint ${req.method} ${path}` }));
  });
  answerServerEdges(server);
  // a scraper sends one small GET: anything slower is cut off
  server.headersTimeout = 5_000;
  server.requestTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
