// Whether a network's chain answers, as its clients see it. Every viem client of the service sends through one
// transport wrapper (clients.ts) that uses what is here, so a chain that does not answer becomes one named error,
// `500 "<network> chain unreachable: <reason>"`, whichever route, service or A2A intent made the call.
import { BaseError, HttpRequestError, SocketClosedError, TimeoutError } from 'viem';

/** What the chain's own supervisor knows (an embedded anvil being restarted): why it cannot answer now, if so. */
export interface ChainRunState {
  downReason(): string | undefined;
  /** How many times the chain was restarted: a failure seen before a restart says nothing about the chain after it. */
  restarts(): number;
}

const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
};

/** The system error code (ECONNREFUSED, ...) somewhere in an error's causes. */
function systemCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const { code, cause, errors } = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && code in SYSTEM_ERRORS) return code;
    // fetch over "localhost" tries each address and fails with an AggregateError of their errors
    current = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return undefined;
}

/**
 * A short reason when `error` means the RPC could not be reached or did not answer (connection refused or reset,
 * a timeout, an HTTP failure status); undefined for an answer the chain gave (a revert, a JSON-RPC error).
 */
export function transportFailure(error: unknown, timeoutMs?: number): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const failure = error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof SocketClosedError);
  if (failure instanceof TimeoutError) return timeoutMs ? `no answer within ${timeoutMs / 1000} s` : 'no answer in time';
  if (failure instanceof SocketClosedError) return 'connection closed';
  if (failure instanceof HttpRequestError) {
    if (failure.status) return `HTTP ${failure.status}`;
    const code = systemCode(failure);
    return code ? (SYSTEM_ERRORS[code] as string) : (failure.details || failure.shortMessage).split('\n')[0];
  }
  return undefined;
}

/**
 * After a chain failed to answer, further calls fail at once for `holdMs` instead of each waiting for its own
 * timeout: a request that makes several chain reads answers in one timeout, not several. The first call after the
 * hold tries the chain again, so recovery needs no timer (the log follower's polls and health checks are such calls).
 */
export class FailFast {
  #reason: string | undefined;
  #until = 0;
  #epoch = 0;

  constructor(
    private readonly holdMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Why calls fail now without trying, or undefined; `epoch`: the chain's restarts (a failure before one is void). */
  heldReason(epoch = 0): string | undefined {
    return this.#reason !== undefined && epoch === this.#epoch && this.clock() < this.#until ? this.#reason : undefined;
  }

  failed(reason: string, epoch = 0): void {
    if (this.holdMs <= 0) return;
    this.#reason = reason;
    this.#epoch = epoch;
    this.#until = this.clock() + this.holdMs;
  }

  answered(): void {
    this.#reason = undefined;
  }
}
