// viem clients per network. Writes go only through local accounts (never a node-held key). Every request goes
// through one wrapper: a chain that does not answer in time, refuses the connection or is being restarted fails
// fast with the named error `<network> chain unreachable: <reason>` (reachability.ts), never a long hang.
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  type EIP1193RequestFn,
  http,
  type PublicClient,
  TimeoutError,
  type Transport,
  type WalletClient,
} from 'viem';
import { chainUnreachable } from '../core/errors.js';
import type { NetworkName } from '../core/networks.js';
import { celo, celoSepolia } from './celo-chains.js';
import { type ChainRunState, FailFast, transportFailure } from './reachability.js';

const CHAINS: Record<NetworkName, Chain> = { mainnet: celo, testnet: celoSepolia };

export interface ClientOptions {
  rpcUrl: string;
  /** Contract with Multicall3's aggregate3, used to batch reads into one round trip (default: the chain's). */
  multicall?: Address;
  /** JSON-RPC batching: calls made in the same tick share one HTTP request, sent at the next timer turn (default true). */
  batch?: boolean;
  /** Called for every HTTP request sent to the RPC (one per round trip, batched or not), with its JSON-RPC methods. */
  onRequest?: (methods: readonly string[]) => void;
  /**
   * Called as the answer to an HTTP request starts to arrive (its headers, before its body is read and parsed), with
   * the request's JSON-RPC methods: the node is done with it.
   */
  onAnswer?: (methods: readonly string[]) => void;
  /**
   * The most one call may take, its retry included; a chain that does not answer in time counts as down. Default
   * 1.5 s, so that a request served while an RPC is down answers its named 500 within 2 s.
   */
  timeoutMs?: number;
  /** How long calls fail at once after one found the chain unreachable (default 1 s; 0: every call tries). */
  failFastMs?: number;
  /** The chain's supervisor, when the service runs the chain itself: calls fail at once while it is down. */
  runState?: ChainRunState;
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

const DEFAULT_TIMEOUT_MS = 1_500;
const DEFAULT_FAIL_FAST_MS = 1_000;

function httpTransport(options: ClientOptions, timeoutMs: number): Transport {
  const { onRequest, onAnswer } = options;
  return http(options.rpcUrl, {
    batch: options.batch === false ? false : { wait: 0 },
    timeout: timeoutMs,
    // one quick retry (a keep-alive connection the node closed); the deadline below bounds it
    retryCount: 1,
    // around the fetch itself rather than onFetchRequest, which costs a Request object per call, and
    // onFetchResponse, which does not say which request is answered
    ...(onRequest || onAnswer
      ? {
          fetchFn: async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
            const methods = rpcMethodsOf(init?.body);
            onRequest?.(methods);
            const response = await fetch(input, init);
            onAnswer?.(methods);
            return response;
          },
        }
      : {}),
  });
}

/** The JSON-RPC methods of a request body viem sends: one call, or a batch. */
function rpcMethodsOf(body: unknown): string[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    return calls.map((call) => (typeof (call as { method?: unknown })?.method === 'string' ? (call as { method: string }).method : 'unknown'));
  } catch {
    return [];
  }
}

/** Rejects with `onTimeout()` when `promise` has not settled within `ms`; the promise itself runs on. */
function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  promise.catch(() => undefined); // settled after the deadline: nobody is listening any more
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The HTTP transport behind the fail-fast rules: one place maps "the chain does not answer" to the named error. */
function transport(network: NetworkName, options: ClientOptions): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const inner = httpTransport(options, timeoutMs);
  const failFast = new FailFast(options.failFastMs ?? DEFAULT_FAIL_FAST_MS);
  return (params) => {
    const built = inner(params);
    const request = (async (args, requestOptions) => {
      const { runState } = options;
      // A supervised chain's own state wins: once restarted, nothing held from before its restart applies.
      const epoch = runState?.restarts() ?? 0;
      const down = runState?.downReason() ?? failFast.heldReason(epoch);
      if (down) throw chainUnreachable(network, down);
      try {
        const result = await withDeadline(
          built.request(args, requestOptions),
          timeoutMs,
          () => new TimeoutError({ body: args, url: options.rpcUrl }),
        );
        failFast.answered();
        return result;
      } catch (error) {
        const supervised = runState?.downReason();
        const reason = supervised ?? transportFailure(error, timeoutMs);
        if (reason === undefined) throw error;
        if (supervised === undefined) failFast.failed(reason, epoch);
        throw Object.assign(chainUnreachable(network, reason), { cause: error });
      }
    }) as EIP1193RequestFn;
    return { ...built, request };
  };
}

export function createChainClient(network: NetworkName, options: ClientOptions): ChainClient {
  return createPublicClient({
    chain: chainFor(network, options),
    transport: transport(network, options),
    pollingInterval: options.pollingIntervalMs ?? 1_000,
  }) as ChainClient;
}

export function createChainWallet(network: NetworkName, account: Account, options: ClientOptions): ChainWallet {
  return createWalletClient({
    account,
    chain: chainFor(network, options),
    transport: transport(network, options),
    pollingInterval: options.pollingIntervalMs ?? 1_000,
  });
}
