// New blocks as the node announces them (eth_subscribe newHeads over WebSocket, through viem's webSocket transport),
// so the log follower polls when a block arrives rather than up to a poll interval later. Polling stays: a socket
// that drops (a node restarting, a provider closing idle sockets) costs latency, never an event. viem reconnects
// the socket by itself.
import { createPublicClient, webSocket } from 'viem';
import type { NetworkName } from '../core/networks.js';
import { chainFor } from './clients.js';

/** Calls `onHead` at each new block until the returned function is called. */
export type HeadSource = (onHead: () => void) => () => void;

/** The WebSocket URL a local anvil serves beside its HTTP one (the same port). */
export const localWebSocketUrl = (rpcUrl: string): string => rpcUrl.replace(/^http(s?):/, 'ws$1:');

export function newHeads(network: NetworkName, url: string, onError: (error: Error) => void = () => undefined): HeadSource {
  const client = createPublicClient({
    chain: chainFor(network, { rpcUrl: url }),
    transport: webSocket(url, { keepAlive: { interval: 30_000 }, reconnect: { attempts: Number.POSITIVE_INFINITY, delay: 1_000 } }),
  });
  return (onHead) => client.watchBlockNumber({ onBlockNumber: () => onHead(), onError, emitMissed: false, emitOnBegin: false });
}
