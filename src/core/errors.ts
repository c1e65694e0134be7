/**
 * The one error type services throw. `status` is the HTTP status of the interface's error table; the
 * message is shown to the caller as `{"error": message}` and must say what to fix.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';

  constructor(
    readonly status: number,
    message: string,
    /** For a 429 or 503: when to try again, sent as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const badRequest = (message: string): ServiceError => new ServiceError(400, message);
export const notFound = (message: string): ServiceError => new ServiceError(404, message);

/**
 * The ServiceError an error is or carries as its cause. Chain code throws its named failures (a chain that does not
 * answer) from under viem, which wraps them in its own errors (a contract call's, a multicall's): the adapters
 * answer with the ServiceError wherever it sits in the chain of causes.
 */
export function serviceErrorOf(error: unknown): ServiceError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 16; current = current.cause, depth++) {
    if (current instanceof ServiceError) return current;
  }
  return undefined;
}

/** A network's chain that does not answer (refused, timed out, being restarted): 500, naming the network and why. */
export class ChainUnreachableError extends ServiceError {
  constructor(
    readonly network: string,
    readonly reason: string,
  ) {
    super(500, `${network} chain unreachable: ${reason}`);
  }
}

export const chainUnreachable = (network: string, reason: string): ChainUnreachableError => new ChainUnreachableError(network, reason);

/**
 * The shared store does not answer (Redis stopped, unreachable or too slow): 503, naming the store and why, with a
 * Retry-After; the store reconnects by itself, so the same request succeeds once it is back.
 */
export class StoreUnavailableError extends ServiceError {
  constructor(
    readonly store: string,
    readonly reason: string,
  ) {
    super(503, `store unavailable: ${store} ${reason}`, 5);
  }
}
