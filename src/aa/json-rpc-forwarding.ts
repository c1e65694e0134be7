// One JSON-RPC call to an upstream bundler or paymaster, with jayson's HTTP(S) client (the design card's choice).
// The proxy forwards the caller's body text exactly and answers with the upstream's response text exactly; jayson
// serializes the request object it is given and parses the response, so two of its documented events are used to
// keep the texts: `http request` hands over the ClientRequest before jayson writes its serialization (we write the
// original text instead, with its own Content-Length), and `http response` hands over the response, whose bytes we
// keep as they arrive. jayson still decides success: a status outside 2xx or a body that is not JSON is its error,
// and so a failure here (as is an empty answer).
//
// Timeout: jayson passes `timeout` to http.request, which is an idle-socket timeout (an upstream that trickles
// bytes never trips it), and its documented `http timeout` event is never emitted. So the deadline is our own
// timer over the whole exchange, which destroys the request.
import type { ClientRequest, IncomingMessage } from 'node:http';
import jayson, { type HttpClientOptions, type JSONRPCVersionTwoRequest } from 'jayson';

/** Larger upstream answers are refused rather than held in memory. */
const MAX_RESPONSE_CHARS = 5_000_000;

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly timedOut: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** The upstream without path or query, where providers put API keys: all a log may show of it. */
export const upstreamOrigin = (url: string): string => (URL.canParse(url) ? new URL(url).origin : 'an invalid URL');

function clientOptions(url: URL, body: string, headers: Record<string, string>): HttpClientOptions {
  return {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    ...(url.port ? { port: Number(url.port) } : {}),
    path: `${url.pathname}${url.search}`,
    ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
    // the same header names jayson sets, so these replace its own (its Content-Length is of its serialization)
    headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body, 'utf8') },
    notificationIdNull: true,
  };
}

/**
 * Sends `body` (the text of `request`) to `url`, with `headers` of the proxy's own beside the content headers, and
 * resolves with the upstream's response text; rejects with an UpstreamError after `timeoutMs` or when the upstream
 * fails (connection, HTTP status, not JSON-RPC).
 */
export function forwardJsonRpc(
  url: string,
  body: string,
  request: JSONRPCVersionTwoRequest,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<string> {
  const target = new URL(url);
  const options = clientOptions(target, body, headers);
  const client = target.protocol === 'https:' ? jayson.client.https(options) : jayson.client.http(options);
  return new Promise((resolve, reject) => {
    let sent: ClientRequest | undefined;
    let text = '';
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outcome();
    };
    const fail = (timedOut: boolean, message: string): void => {
      settle(() => reject(new UpstreamError(timedOut, message)));
      sent?.destroy();
    };
    const deadline = setTimeout(() => fail(true, `no answer within ${timeoutMs} ms`), timeoutMs);

    client.on('http request', (req: ClientRequest) => {
      sent = req;
      const end = req.end.bind(req);
      req.end = ((..._serialized: unknown[]) => end(body)) as ClientRequest['end'];
    });
    client.on('http response', (res: IncomingMessage) => {
      // once the request is destroyed the response may report the cut; it is already a failure
      res.on('error', () => {});
      res.on('data', (chunk: Buffer | string) => {
        text += chunk;
        if (text.length > MAX_RESPONSE_CHARS) fail(false, `answer longer than ${MAX_RESPONSE_CHARS} characters`);
      });
      // jayson waits for an end that a cut connection never brings
      res.on('close', () => {
        if (!res.complete) fail(false, 'the answer was cut off');
      });
    });
    // the same request rebuilt by jayson (notificationIdNull keeps an id of null), though the text sent is the caller's
    client.request(request.method, request.params, request.id ?? null, (error: unknown, response: unknown) => {
      if (error) fail(false, error instanceof Error ? describeFailure(error) : String(error));
      else if (response === undefined || response === null) fail(false, 'empty answer');
      else settle(() => resolve(text));
    });
  });
}

/** jayson's error for an HTTP status carries the status as `code` and the body as the message. */
function describeFailure(error: Error & { code?: unknown }): string {
  if (typeof error.code === 'number') return `HTTP ${error.code}`;
  return typeof error.code === 'string' ? `${error.code}: ${error.message}` : error.message;
}
