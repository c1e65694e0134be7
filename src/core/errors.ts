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
