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

/** Log lines gathered before a write: under load one write(2) carries a few dozen lines, not one. */
const BATCH_BYTES = 4096;
/** The longest a line waits for its batch to fill (pino's docs: flush on an interval, for quiet periods). */
const FLUSH_INTERVAL_MS = 1_000;

/**
 * Where the service's log lines go: standard output (or `dest`, a path or file descriptor), through pino's
 * asynchronous destination (sonic-boom), which holds lines until BATCH_BYTES have gathered (`minLength`) and writes
 * what it holds at least every FLUSH_INTERVAL_MS (`periodicFlush`), so a request does not wait for a write of its
 * line. pino writes what is held synchronously when the process exits, process.exit() included; shutdown flushes it
 * first anyway (flushLogger).
 */
export const logDestination = (dest: string | number = 1): DestinationStream =>
  pino.destination({ dest, sync: false, minLength: BATCH_BYTES, periodicFlush: FLUSH_INTERVAL_MS });

export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/** How long shutdown waits for the log to be written; what is left then is written synchronously at exit. */
const FLUSH_TIMEOUT_MS = 2_000;

/**
 * Writes what the logger has queued; resolves once written (or at once when nothing is queued or it cannot be, and
 * after FLUSH_TIMEOUT_MS at most: a reader that stopped reading must not hold a shutdown).
 * Twice: sonic-boom calls a flush back on the 'drain' of the write under way, which may leave up to minLength bytes
 * held behind it; the second flush writes those, and is called back once they are out.
 */
export function flushLogger(logger: Logger): Promise<void> {
  const once = (): Promise<void> =>
    new Promise((resolve, reject) => {
      try {
        logger.flush((error) => (error ? reject(error) : resolve()));
      } catch (error) {
        // a destination that cannot flush (not yet open, or already closed): nothing more can be written
        reject(error);
      }
    });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, FLUSH_TIMEOUT_MS).unref());
  return Promise.race([once().then(once), timeout]).catch(() => undefined);
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
