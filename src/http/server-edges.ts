// The answers Node's HTTP server would give by itself, before or beside the app, made JSON like every other answer:
//   a request Node cannot parse (the 'clientError' event): 400 malformed (bad framing, a bad header), 431 headers
//     too large, 408 not arrived in time (headers or whole request), 413 chunk extensions too large, 501 a method
//     Node does not know; written straight to the socket (there is no response object), then the connection closes
//   CONNECT (which Node hands over as a raw socket): 405 with Allow; to a path, run through the app, which derives
//     Allow from the route table; to host:port (a proxy tunnel, which this server is not), with the server's methods
//   an Expect header other than 100-continue: 417
// A request without Host is the app's to refuse (middleware/edge.ts), so the server does not answer it empty.
import { type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SERVER_METHODS } from './route.js';

/** Node's parser and timeout error codes, and what the caller is told. */
const CLIENT_ERRORS: Readonly<Record<string, readonly [status: number, message: string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers are too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Chunk extensions are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request did not arrive in time'],
  HPE_INVALID_METHOD: [501, 'Unknown method: this service answers GET, HEAD, POST and OPTIONS'],
};

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

/** How long a closing connection may take to read its answer before it is cut. */
const CLOSE_GRACE_MS = 2_000;

/** A complete HTTP/1.1 answer with a JSON body, closing the connection. */
function rawAnswer(status: number, error: string): string {
  const body = JSON.stringify({ error });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** Ends the connection once the answer is out, and cuts it if the client does not read it. */
function closeAfter(socket: Duplex, answer?: string): void {
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  socket.end(answer);
}

function clientErrorAnswer(error: Error & { code?: string; reason?: string }): readonly [number, string] {
  const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
  if (known) return known;
  // llhttp's reason names what is wrong with the framing (e.g. both Content-Length and Transfer-Encoding)
  return [400, `Malformed HTTP request${error.reason ? `: ${error.reason}` : ''}`];
}

export function answerServerEdges(server: Server): void {
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex) => {
    // as Node does: never write into an answer already under way on this connection
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, message] = clientErrorAnswer(error);
    closeAfter(socket, rawAnswer(status, message));
  });

  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    // Node has taken its own listeners off the socket: without this, a reset would be an unhandled error
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => {
      res.detachSocket(socket as Socket);
      closeAfter(socket);
    });
    // express routes paths only: a host:port target would get its HTML 404
    if (req.url?.startsWith('/')) {
      server.emit('request', req, res);
      return;
    }
    const allow = SERVER_METHODS.join(', ');
    const body = JSON.stringify({ error: `Method CONNECT is not allowed on this server: it is not a proxy (use ${allow})` });
    res.writeHead(405, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), Allow: allow });
    res.end(body);
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({ error: `Unsupported Expect: ${String(req.headers.expect).slice(0, 100)} (only 100-continue is)` });
    res.writeHead(417, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}
