// The A2A "user": the service has no accounts (interface), so a caller is named by its address. The full
// address names the owner of the tasks it creates (ListTasks shows a caller only those); the rate-limit key
// (a whole /56 for IPv6, as express-rate-limit counts) is what the session-creation budget is counted under,
// shared with the REST routes.
import type { User } from '@a2a-js/sdk/server';
import { ipKeyGenerator } from 'express-rate-limit';

export class ClientAddress implements User {
  readonly rateLimitKey: string;

  constructor(readonly userName: string) {
    this.rateLimitKey = ipKeyGenerator(userName);
  }

  get isAuthenticated(): boolean {
    return false;
  }
}

/** The rate-limit key of a request's caller ('unknown' when the transport named none). */
export const rateLimitKeyOf = (user: User | undefined): string => (user instanceof ClientAddress ? user.rateLimitKey : user?.userName || 'unknown');
