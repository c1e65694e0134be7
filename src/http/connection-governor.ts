// The server's cap on open connections, with long-lived streams left out of it. Node's own `maxConnections` counts
// every socket, so streams that last as long as their task (up to 30 minutes) could take every place and every new
// connection was refused, health checks included. Here a connection beyond the cap is closed as it arrives, as Node
// does, but a connection carrying a stream is not counted while the stream is open (streams have their own limits,
// services/stream-limits.ts); when the stream ends and the connection is kept alive, it counts again.
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const STATE = Symbol('governed connection');

interface ConnectionState {
  /** Not counted: it carries a stream now. */
  exempt: boolean;
  closed: boolean;
  governor: { counted: number };
}

type Governed = Socket & { [STATE]?: ConnectionState };

/** Closes connections beyond `max` (0: no cap) as they arrive, not counting those that carry a stream. */
export function governConnections(server: Server, max: number): void {
  if (max <= 0) return;
  const governor = { counted: 0 };
  server.on('connection', (socket: Governed) => {
    if (governor.counted >= max) {
      socket.destroy();
      return;
    }
    governor.counted++;
    const state: ConnectionState = { exempt: false, closed: false, governor };
    socket[STATE] = state;
    socket.once('close', () => {
      state.closed = true;
      if (!state.exempt) governor.counted--;
    });
  });
}

/** The connection of `res` carries a stream until `res` ends: it is not counted against the cap meanwhile. */
export function holdsStream(res: ServerResponse): void {
  const socket = res.socket as Governed | null;
  const state = socket?.[STATE];
  if (!socket || !state || state.exempt) return;
  state.exempt = true;
  state.governor.counted--;
  const done = () => {
    if (!state.exempt) return;
    // a connection already closing stays uncounted: its close is not counted down again
    if (state.closed || socket.destroyed) return;
    state.exempt = false;
    state.governor.counted++;
  };
  res.once('finish', done);
  res.once('close', done);
}
