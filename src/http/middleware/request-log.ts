// One log line per request, with a request id (taken from X-Request-Id when it is sane). Written by hand
// rather than with pino-http: no child logger per request, no serializers, and never the query string, where
// session tokens travel. The logger's destination gathers lines into larger writes (logger.ts), so a line costs its
// serialization, not a write.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[\w.-]{1,64}$/;
const REQUEST_ID_KEY = 'requestId';

/** The id of a request: its X-Request-Id when sane, else a new one. */
export const requestIdFrom = (given: string | string[] | undefined): string =>
  typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();

/** The id of the request `res` answers (the one its X-Request-Id header carries). */
export const requestIdOf = (res: Response): string | undefined => res.locals[REQUEST_ID_KEY] as string | undefined;

export interface RequestLog {
  /** When the request arrives: its id, kept and sent back as X-Request-Id. */
  begin(req: Request, res: Response): void;
  /** When its answer has been sent, `ms` after it arrived: the line. */
  end(res: Response, ms: number): void;
  /** The same line for an answer written without express (the response cache). */
  line(id: string, method: string, url: string, status: number, ms: number): void;
}

export function requestLog(logger: Logger): RequestLog {
  // The line carries only the fields below, none of which a redaction path names (the query string, where tokens
  // travel, is cut off here): the logger's redaction would walk each line for nothing. One child, made once.
  const lines = logger.child({}, { redact: [] });
  const line = (id: string | undefined, method: string, url: string, status: number, ms: number): void => {
    const query = url.indexOf('?');
    const fields = { reqId: id, method, path: query < 0 ? url : url.slice(0, query), status, ms: Math.round(ms * 100) / 100 };
    if (status >= 500) lines.error(fields, 'request failed');
    else lines.info(fields, 'request completed');
  };
  return {
    begin(req, res) {
      const id = requestIdFrom(req.headers['x-request-id']);
      res.setHeader('x-request-id', id);
      res.locals[REQUEST_ID_KEY] = id;
    },
    end(res, ms) {
      line(requestIdOf(res), res.req.method, res.req.originalUrl, res.statusCode, ms);
    },
    line,
  };
}
