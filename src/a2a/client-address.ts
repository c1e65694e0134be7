// The A2A "user": the service has no accounts (interface), so a caller is named by its address. The full
// address names the owner of the tasks it creates (ListTasks shows a caller only those); its rate-limit client
// key (services/rate-limits.ts, a whole /56 for IPv6) is what the per-client limits count, shared with the REST
// routes. Built per request, it also carries the end of that request's response when the HTTP side knows it: a
// stream that waits on the store (stored-task-stream.ts) stops when its caller has gone.
import type { User } from '@a2a-js/sdk/server';
import { clientKeyOf } from '../services/rate-limits.js';

export class ClientAddress implements User {
  readonly rateLimitKey: string;

  constructor(
    readonly userName: string,
    /** Aborted when the response to the caller's request has ended or its connection closed. */
    readonly gone?: AbortSignal,
  ) {
    this.rateLimitKey = clientKeyOf(userName);
  }

  get isAuthenticated(): boolean {
    return false;
  }
}

/** The rate-limit key of a request's caller ('unknown' when the transport named none). */
export const rateLimitKeyOf = (user: User | undefined): string => (user instanceof ClientAddress ? user.rateLimitKey : user?.userName || 'unknown');

/** When the caller's response is over, if the transport said. */
export const callerGoneOf = (user: User | undefined): AbortSignal | undefined => (user instanceof ClientAddress ? user.gone : undefined);
