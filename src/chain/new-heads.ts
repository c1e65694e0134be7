// New blocks as the node announces them (eth_subscribe newHeads over WebSocket, through viem's webSocket transport),
// so the log follower polls when a block arrives rather than up to a poll interval later. Polling stays: a socket
// that drops (a node restarting, a provider closing idle sockets) costs latency, never an event. viem reconnects
// the socket by itself, a few times (each failed attempt it reports on the console); the socket is closed once
// nothing follows the chain any more, so a stopped service leaves nothing trying to reach its chain.
import { createPublicClient, webSocket } from 'viem';
import type { NetworkName } from '../core/networks.js';
import { chainFor } from './clients.js';

/** A chain restarted by its supervisor is back within a second; past these, polling carries on alone. */
const RECONNECT_ATTEMPTS = 5;

/** Calls `onHead` at each new block until the returned function is called. */
export type HeadSource = (onHead: () => void) => () => void;

/** The WebSocket URL a local anvil serves beside its HTTP one (the same port). */
export const localWebSocketUrl = (rpcUrl: string): string => rpcUrl.replace(/^http(s?):/, 'ws$1:');

export function newHeads(network: NetworkName, url: string, onError: (error: Error) => void = () => undefined): HeadSource {
  const client = createPublicClient({
    chain: chainFor(network, { rpcUrl: url }),
    transport: webSocket(url, { keepAlive: { interval: 30_000 }, reconnect: { attempts: RECONNECT_ATTEMPTS, delay: 1_000 } }),
  });
  let watching = 0;
  return (onHead) => {
    watching++;
    const unwatch = client.watchBlockNumber({ onBlockNumber: () => onHead(), onError, emitMissed: false, emitOnBegin: false });
    return () => {
      unwatch();
      if (--watching > 0) return;
      void client.transport
        .getRpcClient()
        .then((socket) => socket.close())
        .catch(() => undefined);
    };
  };
}
