// One log line per request, with a request id (taken from X-Request-Id when it is sane). Written by hand
// rather than with pino-http: no child logger per request, no serializers, and never the query string,
// where session tokens travel.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[\w.-]{1,64}$/;

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', id);
    res.locals['requestId'] = id;
    const started = performance.now();
    res.once('finish', () => {
      const line = {
        reqId: id,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 100) / 100,
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request completed');
    });
    next();
  };
}
