import { writeSync } from 'node:fs';
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

/** pino's asynchronous file destination (sonic-boom). */
type FileDestination = ReturnType<typeof pino.destination>;

/** The destinations whose last lines are written when the process exits (one exit listener for all of them). */
const open = new Set<TurnBatchedDestination>();
let exitListener = false;

/**
 * The lines logged during one turn of the event loop, handed to `sink` as one string when the turn ends: under load a
 * turn answers many requests, and one write of their lines costs far less than a write each (pino's asynchronous
 * destination measures the length of what it holds on every write). Nothing waits longer than the turn it was
 * logged in, and lines keep their order.
 */
export class TurnBatchedDestination implements DestinationStream {
  readonly #sink: FileDestination;
  readonly #pending: string[] = [];
  #scheduled = false;
  /** Lines handed to the sink that it has not finished writing (it says so with 'drain'). */
  #writing = false;
  /** The reader of the pipe has gone (EPIPE): pino then drops every line, and so does this. */
  #broken = false;
  readonly #drained: ((error?: Error) => void)[] = [];

  constructor(sink: FileDestination) {
    this.#sink = sink;
    const settle = (error?: Error) => {
      this.#writing = false;
      for (const done of this.#drained.splice(0)) done(error);
    };
    sink.on('drain', () => settle());
    sink.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') this.#broken = true;
      settle(error);
    });
    sink.on('close', () => {
      open.delete(this);
      settle();
    });
    open.add(this);
    if (!exitListener) {
      exitListener = true;
      // pino writes out its destination's queue when the process exits; the lines of the last turn go first
      process.once('exit', () => {
        for (const destination of open) destination.#writeNow();
      });
    }
  }

  write(line: string): void {
    this.#pending.push(line);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#handOver);
  }

  /** Hands what is pending to the sink, then calls back once the sink has written all it holds (logger.flush). */
  flush(done: (error?: Error) => void = () => undefined): void {
    this.#handOver();
    if (this.#writing) this.#drained.push(done);
    else done();
  }

  #handOver = (): void => {
    this.#scheduled = false;
    const lines = this.#take();
    if (lines === '' || this.#broken) return;
    this.#writing = true;
    this.#sink.write(lines);
  };

  /** The pending lines as one string, no longer pending. */
  #take(): string {
    const lines = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join('');
    this.#pending.length = 0;
    return lines;
  }

  /**
   * At exit, synchronously: what the sink holds, then the lines of this turn, written straight to its file (handed to
   * the sink they would start an asynchronous write that the exit does not wait for).
   */
  #writeNow(): void {
    const lines = this.#take();
    if (this.#broken) return;
    try {
      this.#sink.flushSync();
    } catch {
      // not open yet, or closed: the lines below may still go
    }
    const fd = (this.#sink as unknown as { fd?: unknown }).fd;
    if (lines !== '' && typeof fd === 'number' && fd >= 0) writeAllSync(fd, lines);
  }
}

/** Writes all of `text` to `fd` before returning; a pipe that is full (EAGAIN) is waited for, 10 ms at a time, up to 2 s. */
function writeAllSync(fd: number, text: string): void {
  let rest = Buffer.from(text);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; rest.length > 0 && waited < 2_000; ) {
    try {
      rest = rest.subarray(writeSync(fd, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(pause, 0, 0, 10);
      waited += 10;
    }
  }
}

/**
 * Where the service's log lines go: standard output (or `dest`, a path or file descriptor), asynchronously. The lines
 * of an event-loop turn are written together, after the turn, so a request does not wait for a write(2) of its log
 * line. What is queued is written synchronously when the process exits; shutdown flushes it first anyway
 * (flushLogger).
 */
export const logDestination = (dest: string | number = 1): DestinationStream => new TurnBatchedDestination(pino.destination({ dest, sync: false }));

export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/** How long shutdown waits for the log to be written; what is left then is written synchronously at exit. */
const FLUSH_TIMEOUT_MS = 2_000;

/**
 * Writes what the logger has queued; resolves once written (or at once when nothing is queued or it cannot be, and
 * after FLUSH_TIMEOUT_MS at most: a reader that stopped reading must not hold a shutdown).
 */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_TIMEOUT_MS);
    timer.unref();
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      // a destination that cannot flush (not yet open, or already closed): nothing more can be written
      clearTimeout(timer);
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
