// Who asks: the client address of the HTTP request that carried a message, for the per-client limits its tool call
// counts against (the same keys REST and A2A count under). The transport hands a tool no HTTP request, so the
// endpoint runs each exchange inside the caller's context and the tool reads it there (node:async_hooks).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Caller {
  /** The rate-limit client key (services/rate-limits.ts clientKeyOf). */
  client: string;
}

const callers = new AsyncLocalStorage<Caller>();

/** Runs `work` (and everything it starts) as `caller`'s. */
export const asCaller = <T>(caller: Caller, work: () => T): T => callers.run(caller, work);

/** The caller of the message being handled; 'unknown' outside an exchange (as the A2A side names one it cannot tell). */
export const currentCaller = (): Caller => callers.getStore() ?? { client: 'unknown' };
