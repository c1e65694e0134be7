import { format } from 'node:util';
import { type DestinationStream, type Logger, pino } from 'pino';

/** Paths that may carry session tokens, keys or signatures: never written to the log. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-aa-proxy-token"]',
  'req.headers["x-svc-agent-signature"]',
  'req.query.token',
  '*.privateKey',
  '*.sessionToken',
  '*.token',
];

/**
 * Where the service's log lines go: standard output (or `dest`, a path or file descriptor), asynchronously. A line
 * is queued and written with the next ones, so a request does not wait for a write(2) of its log line. pino flushes
 * what is queued, synchronously, when the process exits; shutdown flushes it first anyway (flushLogger).
 */
export const logDestination = (dest: string | number = 1): DestinationStream => pino.destination({ dest, sync: false });

export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/** Writes what the logger has queued; resolves once written (or at once when nothing is queued or it cannot be). */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      // a destination that cannot flush (not yet open, or already closed): nothing more can be written
      resolve();
    }
  });
}

/**
 * Sends what is written to the console through `logger`, as JSON lines with the other logs: the A2A SDK writes
 * its diagnostics (failed streams, unknown versions) with console.* and has no logger option. An error that
 * `isCallerError` recognizes (the caller's mistake, not ours) is logged at warn with its name and message, no stack.
 */
export function routeConsoleTo(logger: Logger, options: { isCallerError?: (error: Error) => boolean } = {}): void {
  const child = logger.child({ source: 'console' });
  const forward =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const err = args.find((arg): arg is Error => arg instanceof Error);
      const message = format(...args.filter((arg) => arg !== err));
      if (err && options.isCallerError?.(err))
        child[level === 'error' ? 'warn' : level]({ error: { type: err.name, message: err.message } }, message);
      else if (err) child[level]({ err }, message);
      else child[level](message);
    };
  console.debug = forward('debug');
  console.log = forward('info');
  console.info = forward('info');
  console.warn = forward('warn');
  console.error = forward('error');
}
