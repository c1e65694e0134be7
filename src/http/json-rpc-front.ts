// JSON-RPC 2.0 in front of a handler that answers one request at a time (the A2A SDK's): reads the body as text
// (express.text, so body-parser enforces the limit, charsets and encodings) and parses it itself, so that whatever
// the caller sends is answered by the specification (https://www.jsonrpc.org/specification):
//   not JSON (or no body, or one that does not   -32700 Parse error, id null
//   decode as its Content-Encoding says)
//   JSON that is not a request object             -32600 Invalid Request, id null (or the request's id when valid)
//   a method the endpoint does not have           -32601 Method not found
//   a notification (no id)                        handled, never answered: HTTP 204 without a body
//   a batch                                       one answer per request that is not a notification, in a JSON array
//                                                 (HTTP 204 when all are notifications); an empty array is one -32600;
//                                                 a streaming method in a batch is -32600 (a stream must be alone)
//   a body the server will not read               a JSON-RPC error object (-32600, id null) under the HTTP status that
//                                                 says why: 413 over the size limit, 415 a charset other than UTF-8
//                                                 or an unknown Content-Encoding
// Every other answer (also an error object) is HTTP 200. A lone request with an id of a streaming method goes to the
// handler as is, which answers with a stream; every other request goes to `call`, which answers with one object.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { JSON_RPC_ERRORS, type JsonRpcAnswer, type JsonRpcRequest, jsonRpcError, jsonRpcIdOf, parseJsonRpcRequest } from './schemas/json-rpc.js';

/** The methods one HTTP request may call (they can depend on its headers, e.g. a protocol version). */
export interface JsonRpcMethods {
  known: ReadonlySet<string>;
  /**
   * The methods that answer with a stream, each with the method that does the same without one; undefined when
   * the method does nothing but stream (a notification of it is then dropped without a call).
   */
  streaming: ReadonlyMap<string, string | undefined>;
  /** The -32601 message for a method that is not known (e.g. which protocol version has it). */
  notFound(method: string): string;
}

export interface JsonRpcFrontOptions {
  /** Largest body, as express's body parsers take it. */
  limit: string | number;
  /** The methods of this HTTP request; undefined: not checked here (the handler answers, e.g. an unsupported version). */
  methodsOf(req: Request): JsonRpcMethods | undefined;
  /**
   * The handler behind the front: it answers a request of another media type (refusing it, as it does), and a lone
   * request with an id of a streaming method (req.body holds it) with the stream.
   */
  single: RequestHandler;
  /** For the streaming requests only, instead of `single`: e.g. limits on open streams before it. */
  stream?: RequestHandler;
  /** One request that does not stream, or a notification: its answer; `res` for a lone request (for its headers). */
  call(request: JsonRpcRequest, req: Request, res?: Response): Promise<JsonRpcAnswer>;
  /** Largest number of requests in one batch. */
  maxBatch?: number;
}

/** Batches beyond this are refused whole: each entry may open a session or query a chain. */
export const MAX_BATCH = 100;

const UNREADABLE = 'Invalid Request: the body must be JSON in UTF-8 (no other charset, no unknown Content-Encoding)';

/** What a body-parser error means for the caller: HTTP status, JSON-RPC code and message. */
function unreadBody(
  error: { status?: number; type?: string },
  limit: string | number,
): { status: number; code: number; message: string } | undefined {
  const invalid = JSON_RPC_ERRORS.invalidRequest;
  if (error.type === 'entity.too.large') return { status: 413, code: invalid, message: `Invalid Request: the body is too large (at most ${limit})` };
  if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported') {
    return { status: 415, code: invalid, message: UNREADABLE };
  }
  // a body that does not decode as its Content-Encoding says (gzip that is not gzip), or shorter than announced
  if (typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
    return { status: 200, code: JSON_RPC_ERRORS.parseError, message: 'Parse error: the body could not be read as its headers describe it' };
  }
  return undefined;
}

const SDK_MEDIA_TYPE = 'application/json';

/** The HTTP exchange a request arrived in. */
interface Exchange {
  req: Request;
  res: Response;
  next: NextFunction;
}

const HANDLED = Symbol('handled by the single-request handler');

export function jsonRpcFront(options: JsonRpcFrontOptions): RequestHandler {
  const maxBatch = options.maxBatch ?? MAX_BATCH;
  // the raw text, whatever the Content-Type: JSON.parse below tells -32700 (not JSON) from -32600 (JSON, not a request)
  const readText = express.text({ type: () => true, limit: options.limit, defaultCharset: 'utf-8' });

  /** A call whose failure is an answer too: -32603, never an HTTP error in the middle of a batch. */
  async function call(request: JsonRpcRequest, req: Request, res?: Response): Promise<JsonRpcAnswer> {
    try {
      return await options.call(request, req, res);
    } catch {
      return jsonRpcError(request.id ?? null, JSON_RPC_ERRORS.internalError, 'Internal error');
    }
  }

  /** One request: its answer, undefined when there is none (a notification), or HANDLED when `single` answers it. */
  async function answerOne(value: unknown, http: Exchange, inBatch: boolean): Promise<JsonRpcAnswer | undefined | typeof HANDLED> {
    const parsed = parseJsonRpcRequest(value);
    if (!parsed.ok) return jsonRpcError(jsonRpcIdOf(value), JSON_RPC_ERRORS.invalidRequest, parsed.message);
    const request = parsed.request;
    const notification = !('id' in request);
    const id = request.id ?? null;
    const methods = options.methodsOf(http.req);
    if (methods && !methods.known.has(request.method)) {
      return notification ? undefined : jsonRpcError(id, JSON_RPC_ERRORS.methodNotFound, methods.notFound(request.method));
    }
    const streaming = methods?.streaming.has(request.method) ?? false;
    if (notification) {
      // nobody reads a notification's stream: do the same without one, or nothing when the method only streams
      const method = streaming ? methods?.streaming.get(request.method) : request.method;
      if (method !== undefined) await call({ ...request, method }, http.req);
      return undefined;
    }
    if (!inBatch) {
      // the request exactly as the caller sent it (unknown members included; the metrics read its method there)
      http.req.body = value;
      if (!streaming) return call(value as JsonRpcRequest, http.req, http.res);
      (options.stream ?? options.single)(http.req, http.res, http.next);
      return HANDLED;
    }
    if (streaming) {
      const message = `Invalid Request: ${request.method} answers with a stream and cannot be part of a batch: send it alone`;
      return jsonRpcError(id, JSON_RPC_ERRORS.invalidRequest, message);
    }
    return call(request, http.req);
  }

  /** Answers and errors are HTTP 200; nothing to answer (notifications only) is 204 without a body. */
  const reply = (res: Response, answer: JsonRpcAnswer | JsonRpcAnswer[] | undefined): void => {
    if (answer === undefined || (Array.isArray(answer) && answer.length === 0)) res.status(204).end();
    else res.status(200).json(answer);
  };

  async function answer(http: Exchange, text: unknown): Promise<void> {
    const { req, res } = http;
    let value: unknown;
    try {
      if (typeof text !== 'string' || text.trim() === '') throw new SyntaxError('empty body');
      value = JSON.parse(text);
    } catch {
      reply(
        res,
        jsonRpcError(
          null,
          JSON_RPC_ERRORS.parseError,
          'Parse error: the body is not valid JSON (send a JSON-RPC 2.0 request object or a batch array)',
        ),
      );
      return;
    }
    if (!Array.isArray(value)) {
      const one = await answerOne(value, http, false);
      if (one !== HANDLED) reply(res, one);
      return;
    }
    req.body = value;
    if (value.length === 0) {
      reply(res, jsonRpcError(null, JSON_RPC_ERRORS.invalidRequest, 'Invalid Request: an empty batch (send at least one request in the array)'));
      return;
    }
    if (value.length > maxBatch) {
      reply(
        res,
        jsonRpcError(null, JSON_RPC_ERRORS.invalidRequest, `Invalid Request: a batch holds at most ${maxBatch} requests; got ${value.length}`),
      );
      return;
    }
    const answers: JsonRpcAnswer[] = [];
    // one after another: a batch is no way around the per-client limits, and its order is kept
    for (const entry of value) {
      const one = await answerOne(entry, http, true);
      if (one !== undefined && one !== HANDLED) answers.push(one);
    }
    reply(res, answers);
  }

  return (req, res, next) => {
    // another media type is the handler's to refuse, as it refuses it (its body is never read)
    const mediaType = req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
    if (mediaType !== undefined && mediaType !== SDK_MEDIA_TYPE) {
      options.single(req, res, next);
      return;
    }
    // JSON is UTF-8 (RFC 8259), as the app's JSON parser holds it: another declared charset is refused unread
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.header('content-type') ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && !charset.startsWith('utf-')) {
      res.status(415).json(jsonRpcError(null, JSON_RPC_ERRORS.invalidRequest, UNREADABLE));
      return;
    }
    const read = (error?: unknown) => {
      if (error) {
        const refusal = unreadBody(error as { status?: number; type?: string }, options.limit);
        if (!refusal) {
          next(error);
          return;
        }
        res.status(refusal.status).json(jsonRpcError(null, refusal.code, refusal.message));
        return;
      }
      answer({ req, res, next }, req.body).catch(next);
    };
    readText(req, res, read);
  };
}
