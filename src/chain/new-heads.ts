// New blocks and the registry's logs as the node announces them (eth_subscribe newHeads and logs over WebSocket,
// through viem's webSocket transport), on one socket: the log follower polls when a block arrives rather than up
// to a poll interval later, and session watches look at the chain when the registry logs something, without
// waiting for the follower's round trips. Polling stays: a socket that drops (a node restarting, a provider closing
// idle sockets) costs latency, never an event. viem reconnects the socket by itself, a few times (each failed
// attempt it reports on the console); the socket is closed once nothing listens any more, so a stopped service
// leaves nothing trying to reach its chain.
import { type Address, createPublicClient, type Log, webSocket } from 'viem';
import type { NetworkName } from '../core/networks.js';
import { chainFor } from './clients.js';

/** A chain restarted by its supervisor is back within a second; past these, polling carries on alone. */
const RECONNECT_ATTEMPTS = 5;

/** Calls `onHead` at each new block until the returned function is called. */
export type HeadSource = (onHead: () => void) => () => void;

/** Calls `onLogs` with each batch of a contract's logs the node announces (often one log), until the returned function is called. */
export type LogSource = (onLogs: (logs: readonly Log[]) => void) => () => void;

export interface NodeSubscriptions {
  heads: HeadSource;
  /** The logs of the contract at `address`: one subscription on the node, however many listen. */
  logs(address: Address): LogSource;
}

/** The WebSocket URL a local anvil serves beside its HTTP one (the same port). */
export const localWebSocketUrl = (rpcUrl: string): string => rpcUrl.replace(/^http(s?):/, 'ws$1:');

export function nodeSubscriptions(network: NetworkName, url: string, onError: (error: Error) => void = () => undefined): NodeSubscriptions {
  const client = createPublicClient({
    chain: chainFor(network, { rpcUrl: url }),
    transport: webSocket(url, { keepAlive: { interval: 30_000 }, reconnect: { attempts: RECONNECT_ATTEMPTS, delay: 1_000 } }),
  });
  let watching = 0;
  /** Counts `unwatch` as one more listener of the socket; the returned function ends it, closing the socket after the last. */
  const held = (unwatch: () => void) => {
    watching++;
    return () => {
      unwatch();
      if (--watching > 0) return;
      void client.transport
        .getRpcClient()
        .then((socket) => socket.close())
        .catch(() => undefined);
    };
  };
  /** A contract's logs, subscribed while someone listens and handed to every listener. */
  const logsOf = (address: Address): LogSource => {
    const listeners = new Set<(logs: readonly Log[]) => void>();
    let unwatch: (() => void) | undefined;
    return (onLogs) => {
      const listener = (logs: readonly Log[]) => onLogs(logs);
      listeners.add(listener);
      unwatch ??= held(
        client.watchEvent({
          address,
          onLogs: (logs) => {
            for (const each of [...listeners]) each(logs);
          },
          onError,
        }),
      );
      return () => {
        if (!listeners.delete(listener) || listeners.size > 0) return;
        unwatch?.();
        unwatch = undefined;
      };
    };
  };
  const sources = new Map<Address, LogSource>();
  return {
    heads: (onHead) => held(client.watchBlockNumber({ onBlockNumber: () => onHead(), onError, emitMissed: false, emitOnBegin: false })),
    logs: (address) => {
      const source = sources.get(address) ?? logsOf(address);
      sources.set(address, source);
      return source;
    },
  };
}
