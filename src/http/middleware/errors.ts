// The one place where failures become HTTP answers: always {"error": "..."}, never a stack trace.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ServiceError } from '../../core/errors.js';

/** Errors raised by express's body parser carry the status they mean. */
interface HttpParserError extends Error {
  status?: number;
  type?: string;
  body?: string;
}

/** express.json refuses a body that is JSON but not an object or array; say so rather than "not JSON". */
function parserMessage(error: HttpParserError): string {
  if (error.type === 'entity.parse.failed' && error.body !== undefined) {
    try {
      JSON.parse(error.body);
      return 'Request body must be a JSON object';
    } catch {
      // really malformed: the generic message below
    }
  }
  return PARSER_MESSAGES[error.type ?? ''] ?? error.message;
}

const PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'Request body is not valid JSON',
  'entity.too.large': 'Request body is too large',
  'encoding.unsupported': 'Request body encoding is not supported',
};

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ error: `No endpoint ${req.method} ${req.originalUrl.split('?')[0]}` });
};

/** Failures become `{"error": ...}`; unexpected ones are logged with the request id and answered 500. */
export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, _req, res, _next) => {
    if (error instanceof ServiceError) {
      if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(error.status).json({ error: error.message });
      return;
    }
    const parserError = error as HttpParserError;
    if (typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500) {
      res.status(parserError.status).json({ error: parserMessage(parserError) });
      return;
    }
    logger.error({ err: error, reqId: res.locals['requestId'] }, 'request failed');
    res.status(500).json({ error: 'Internal server error' });
  };
