// The one place where failures become HTTP answers: always {"error": "..."}, never a stack trace.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { serviceErrorOf } from '../../core/errors.js';
import { PolicyRefusalError } from '../../core/policy-refusal.js';
import { bodyLimitText } from '../route.js';
import { requestIdOf } from './request-log.js';
import { routeLabel } from './route-label.js';

/** Errors raised by express's body parser carry the status they mean (and, for a body too large, the limit in bytes). */
interface HttpParserError extends Error {
  status?: number;
  type?: string;
  body?: string;
  limit?: number;
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
  // each route has its own limit: the parser's error names it
  if (error.type === 'entity.too.large' && typeof error.limit === 'number')
    return `Request body is too large (at most ${bodyLimitText(error.limit)})`;
  return PARSER_MESSAGES[error.type ?? ''] ?? error.message;
}

const PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'Request body is not valid JSON',
  'entity.too.large': 'Request body is too large',
  'encoding.unsupported': 'Request body encoding is not supported: send it uncompressed, or gzip, deflate or br',
  'charset.unsupported': 'Request body charset is not supported: send UTF-8',
};

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ error: `No endpoint ${req.method} ${req.originalUrl.split('?')[0]}` });
};

/**
 * Failures become `{"error": ...}`, a policy's refusal `{"error", "policy"}`. A ServiceError counts wherever it sits
 * among the causes: a chain that does not answer is raised under viem's own errors. A refusal of the caller's request
 * (4xx) is logged at warn with its status, route and message and no stack: the caller's mistake, not ours. A failure
 * of ours (5xx) is logged at error with the error itself; an unexpected one is answered 500 without its details.
 */
export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, next) => {
    const serviceError = serviceErrorOf(error);
    const parserError = error as HttpParserError;
    const answer = serviceError
      ? { status: serviceError.status, message: serviceError.message }
      : typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500
        ? { status: parserError.status, message: parserMessage(parserError) }
        : { status: 500, message: 'Internal server error' };
    const line = { reqId: requestIdOf(res), status: answer.status, method: req.method, route: routeLabel(res) };
    if (answer.status >= 500) logger.error({ ...line, err: error }, 'request failed');
    else logger.warn({ ...line, error: answer.message }, 'request refused');
    // an answer already under way (a stream) cannot become an error answer: express closes the connection
    if (res.headersSent) {
      next(error);
      return;
    }
    if (serviceError?.retryAfterSeconds !== undefined) res.set('Retry-After', String(serviceError.retryAfterSeconds));
    // a policy's refusal names the policy too ({error, policy}), as the client SDK's verifier answers it
    res.status(answer.status).json(serviceError instanceof PolicyRefusalError ? serviceError.answer.body : { error: answer.message });
  };
