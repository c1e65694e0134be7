// What every request goes through before it is routed, as one app-level middleware rather than one per part (each
// is a layer express's router runs): its start time and a single 'finish' listener that counts it and writes its
// log line, its request id, then the edge (security headers, Host check). Parts left out (benchmarks build the app
// without one to see what it costs) are not called.
import type { Request, RequestHandler, Response } from 'express';
import type { HttpMetrics } from './metrics.js';
import type { RequestLog } from './request-log.js';

const STARTED = 'started';

export interface RequestParts {
  metrics?: HttpMetrics;
  log?: RequestLog;
  /** The edge (edge.ts): false when it has answered the request itself. */
  edge?: (req: Request, res: Response) => boolean;
}

export function everyRequest({ metrics, log, edge }: RequestParts): RequestHandler {
  const observed = metrics !== undefined || log !== undefined;
  // one listener function for all requests (no closure per request)
  function finished(this: Response): void {
    const ms = performance.now() - (this.locals[STARTED] as number);
    metrics?.end(this, ms);
    log?.end(this, ms);
  }
  return (req, res, next) => {
    if (observed) {
      res.locals[STARTED] = performance.now();
      res.on('finish', finished);
    }
    log?.begin(req, res);
    if (edge === undefined || edge(req, res)) next();
  };
}
