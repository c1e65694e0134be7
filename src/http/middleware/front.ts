// What every request goes through, as one middleware rather than a chain of them (each link of express's chain
// costs a layer match and a call): its start time and one 'finish' listener that counts it and writes its log
// line; its request id; the edge (security headers, Host check); then the route table's dispatcher. Parts left out
// (benchmarks build the app without one to see what it costs) are simply not called.
import type { Request, RequestHandler, Response } from 'express';
import type { RoutingHandler } from '../dispatch.js';
import type { HttpMetrics } from './metrics.js';
import type { RequestLog } from './request-log.js';

const STARTED = 'started';

export interface FrontParts {
  metrics?: HttpMetrics;
  log?: RequestLog;
  /** The edge (edge.ts): false when it has answered the request itself. */
  edge?: (req: Request, res: Response) => boolean;
  dispatch: RoutingHandler;
}

export function front({ metrics, log, edge, dispatch }: FrontParts): RoutingHandler {
  const observed = metrics !== undefined || log !== undefined;
  function finished(this: Response): void {
    const ms = performance.now() - (this.locals[STARTED] as number);
    metrics?.end(this, ms);
    log?.end(this, ms);
  }
  const handler: RequestHandler = (req, res, next) => {
    if (observed) {
      res.locals[STARTED] = performance.now();
      res.on('finish', finished);
    }
    log?.begin(req, res);
    if (edge === undefined || edge(req, res)) dispatch(req, res, next);
  };
  // the routes, listed as the dispatcher lists them
  return Object.assign(handler, { stack: dispatch.stack, listRoutes: dispatch.listRoutes });
}
