// Where a long-lived stream starts on the HTTP side: its ticket from the stream limits (429 beyond them, thrown
// before anything is written), its connection left out of the accept cap while it is open, and its end at the
// ticket's longest lifetime (a clean end of the event stream: A2A clients resubscribe, the scan page reconnects).
import type { Request, Response } from 'express';
import { clientKeyOf } from '../services/rate-limits.js';
import type { StreamLimits } from '../services/stream-limits.js';
import { holdsStream } from './connection-governor.js';

/** Admits the stream `res` will carry, following `subject` (a task or session) when known; throws 429 when refused. */
export function admitStream(limits: StreamLimits, req: Request, res: Response, subject?: string): void {
  const ticket = limits.admit(clientKeyOf(req.ip), subject);
  holdsStream(res);
  const lifetime = setTimeout(() => {
    if (!res.writableEnded) res.end();
  }, ticket.maxLifetimeMs);
  lifetime.unref();
  const done = (): void => {
    clearTimeout(lifetime);
    ticket.release();
  };
  res.once('finish', done);
  res.once('close', done);
  // the client left while the request was being read: no close is coming
  if (res.writableEnded || !res.socket || res.socket.destroyed) done();
}
