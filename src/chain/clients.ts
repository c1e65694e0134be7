// viem clients per network. Writes go only through local accounts (never a node-held key).
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  http,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { celo, celoSepolia } from 'viem/chains';
import type { NetworkName } from '../core/networks.js';

const CHAINS: Record<NetworkName, Chain> = { mainnet: celo, testnet: celoSepolia };

export interface ClientOptions {
  rpcUrl: string;
  /** Contract with Multicall3's aggregate3, used to batch reads into one round trip (default: the chain's). */
  multicall?: Address;
  /** Called for every HTTP request sent to the RPC (one per round trip, batched or not). */
  onRequest?: () => void;
  /** Per-request timeout; a chain that does not answer in time counts as down. */
  timeoutMs?: number;
  /** How often to poll for receipts and logs; local chains mine instantly, so poll fast there. */
  pollingIntervalMs?: number;
}

export type ChainClient = PublicClient<Transport, Chain>;
export type ChainWallet = WalletClient<Transport, Chain, Account>;

/** The network's viem chain, pointed at the given RPC and multicall contract. */
export function chainFor(network: NetworkName, options: ClientOptions): Chain {
  const base = CHAINS[network];
  return {
    ...base,
    rpcUrls: { default: { http: [options.rpcUrl] } },
    contracts: options.multicall ? { ...base.contracts, multicall3: { address: options.multicall } } : base.contracts,
  };
}

function transport(options: ClientOptions): Transport {
  // JSON-RPC batching: calls made in the same tick share one HTTP request.
  const { onRequest } = options;
  return http(options.rpcUrl, {
    batch: { wait: 0 },
    timeout: options.timeoutMs ?? 10_000,
    retryCount: 1,
    // viem treats a value returned from onFetchRequest as a replacement request: return nothing.
    ...(onRequest ? { onFetchRequest: (): void => void onRequest() } : {}),
  });
}

export function createChainClient(network: NetworkName, options: ClientOptions): ChainClient {
  return createPublicClient({
    chain: chainFor(network, options),
    transport: transport(options),
    pollingInterval: options.pollingIntervalMs ?? 1_000,
  }) as ChainClient;
}

export function createChainWallet(network: NetworkName, account: Account, options: ClientOptions): ChainWallet {
  return createWalletClient({
    account,
    chain: chainFor(network, options),
    transport: transport(options),
    pollingInterval: options.pollingIntervalMs ?? 1_000,
  });
}
