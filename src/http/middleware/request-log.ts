// One log line per request, with a request id (taken from X-Request-Id when it is sane). Written by hand
// rather than with pino-http: no child logger per request, no serializers, one listener function shared by all
// requests (no closure per request), and never the query string, where session tokens travel. The logger's
// destination gathers lines into larger writes (logger.ts), so a line costs its serialization, not a write.
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[\w.-]{1,64}$/;
const REQUEST_ID_KEY = 'requestId';
const STARTED = 'logStarted';

/** The id of the request `res` answers (the one its X-Request-Id header carries). */
export const requestIdOf = (res: Response): string | undefined => res.locals[REQUEST_ID_KEY] as string | undefined;

export function requestLog(logger: Logger): RequestHandler {
  // The line carries only the fields below, none of which a redaction path names (the query string, where tokens
  // travel, is cut off here): the logger's redaction would walk each line for nothing. One child, made once.
  const lines = logger.child({}, { redact: [] });
  function completed(this: Response): void {
    const { req, statusCode } = this;
    const url = req.originalUrl;
    const query = url.indexOf('?');
    const line = {
      reqId: requestIdOf(this),
      method: req.method,
      path: query < 0 ? url : url.slice(0, query),
      status: statusCode,
      ms: Math.round((performance.now() - (this.locals[STARTED] as number)) * 100) / 100,
    };
    if (statusCode >= 500) lines.error(line, 'request failed');
    else lines.info(line, 'request completed');
  }
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', id);
    res.locals[REQUEST_ID_KEY] = id;
    res.locals[STARTED] = performance.now();
    res.on('finish', completed);
    next();
  };
}
