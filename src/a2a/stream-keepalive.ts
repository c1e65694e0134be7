// Open A2A streams stay open through proxies. A register task's stream (message/stream, SendStreamingMessage, or a
// resubscription) sends nothing while the human scans, for minutes, and proxies and load balancers with an idle
// timeout (often 60 s) cut a connection that stays silent that long. Every server-sent-event response of the A2A
// endpoint therefore gets an SSE comment line at a fixed interval, which SSE clients skip (WHATWG HTML §9.2.6: a
// line starting with a colon is ignored), from the moment its headers go out until it ends or the client leaves.
// The SDK's handler writes the stream itself: its response is watched here, not the SDK changed.
import type { RequestHandler, Response } from 'express';

/** The comment sent on an idle stream. */
export const KEEPALIVE_COMMENT = ': keep-alive\n\n';

/** Runs `handler` with a keep-alive comment every `intervalMs` on any event stream it answers with. */
export function keepStreamsAlive(handler: RequestHandler, intervalMs: number): RequestHandler {
  return (req, res, next) => {
    watchForStream(res, intervalMs);
    return handler(req, res, next);
  };
}

const isEventStream = (res: Response): boolean => /^text\/event-stream\b/i.test(String(res.getHeader('content-type') ?? ''));

/** Starts the comments once the response's headers go out as an event stream (flushHeaders and a first write both pass writeHead). */
function watchForStream(res: Response, intervalMs: number): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    res.writeHead = writeHead;
    const result = writeHead.apply(this, args);
    if (isEventStream(res)) keepAlive(res, intervalMs);
    return result;
  } as Response['writeHead'];
}

function keepAlive(res: Response, intervalMs: number): void {
  const timer = setInterval(() => {
    if (!res.writableEnded && !res.destroyed) res.write(KEEPALIVE_COMMENT);
  }, intervalMs);
  // a stream never keeps the process alive on its own (shutdown closes the connections)
  timer.unref();
  const stop = () => clearInterval(timer);
  res.once('finish', stop);
  res.once('close', stop);
}
