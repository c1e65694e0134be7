// The metrics on a listener of their own (METRICS_PORT), bound to METRICS_HOST (loopback by default), so a scraper
// on the host or a private network reads them while the public port does not serve them at all. Plain node:http:
// one path, nothing else to route.
import { createServer, type Server } from 'node:http';
import type { Metrics } from '../metrics.js';
import { answerMetrics, type MetricsAccess } from './routes/metrics.js';

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
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ error: 'Internal server error' }));
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: `No endpoint ${req.method} ${path}` }));
  });
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
