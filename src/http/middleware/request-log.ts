// One log line per request, with a request id (taken from X-Request-Id when it is sane). Written by hand
// rather than with pino-http: no child logger per request, no serializers, and never the query string, where
// session tokens travel. The logger's destination gathers lines into larger writes (logger.ts), so a line costs its
// serialization, not a write.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[\w.-]{1,64}$/;
const REQUEST_ID_KEY = 'requestId';

/** The id of the request `res` answers (the one its X-Request-Id header carries). */
export const requestIdOf = (res: Response): string | undefined => res.locals[REQUEST_ID_KEY] as string | undefined;

export interface RequestLog {
  /** When the request arrives: its id, kept and sent back as X-Request-Id. */
  begin(req: Request, res: Response): void;
  /** When its answer has been sent, `ms` after it arrived: the line. */
  end(res: Response, ms: number): void;
}

export function requestLog(logger: Logger): RequestLog {
  // The line carries only the fields below, none of which a redaction path names (the query string, where tokens
  // travel, is cut off here): the logger's redaction would walk each line for nothing. One child, made once.
  const lines = logger.child({}, { redact: [] });
  return {
    begin(req, res) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('x-request-id', id);
      res.locals[REQUEST_ID_KEY] = id;
    },
    end(res, ms) {
      const { req, statusCode } = res;
      const url = req.originalUrl;
      const query = url.indexOf('?');
      const line = {
        reqId: requestIdOf(res),
        method: req.method,
        path: query < 0 ? url : url.slice(0, query),
        status: statusCode,
        ms: Math.round(ms * 100) / 100,
      };
      if (statusCode >= 500) lines.error(line, 'request failed');
      else lines.info(line, 'request completed');
    },
  };
}
