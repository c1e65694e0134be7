// Using a registry service's account-abstraction proxy from another program: a proxy token (bound to the chain,
// the caller's address and User-Agent, short-lived), and viem bundler and paymaster clients whose requests carry
// a fresh token, so any ERC-4337 code (viem's sendUserOperation, a passkey account) goes through the proxy and
// the provider's API key never reaches the client.
import { type Chain, type Client, http, type Transport } from 'viem';
import { type BundlerClient, createBundlerClient, createPaymasterClient, type PaymasterClient, type SmartAccount } from 'viem/account-abstraction';

export const AA_PROXY_TOKEN_HEADER = 'x-aa-proxy-token';

export interface ProxyToken {
  token: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

export interface AaProxyOptions {
  /** The registry service, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  chainId: number;
  /**
   * Sent as Origin: the proxy serves pages of allowed origins (by default its own host). A browser sets it
   * itself; a server-side caller names the origin it is allowed under (default: the service's own).
   */
  origin?: string;
  /** Refresh the token this long before it expires (default 5 s). */
  refreshMarginMs?: number;
  fetch?: typeof fetch;
}

export class AaProxyError extends Error {
  override name = 'AaProxyError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const proxyUrl = (options: AaProxyOptions, route: 'token' | 'bundler' | 'paymaster'): string =>
  `${options.baseUrl.replace(/\/+$/, '')}/api/aa/${route}?chainId=${options.chainId}`;

const originOf = (options: AaProxyOptions): string => options.origin ?? new URL(options.baseUrl).origin;

/** POST /api/aa/token: a token for this chain, this caller's address and User-Agent. */
export async function fetchProxyToken(options: AaProxyOptions): Promise<ProxyToken> {
  const res = await (options.fetch ?? fetch)(proxyUrl(options, 'token'), { method: 'POST', headers: { origin: originOf(options) } });
  const body = (await res.json().catch(() => ({}))) as Partial<ProxyToken> & { error?: string };
  if (!res.ok || typeof body.token !== 'string' || typeof body.expiresAt !== 'number') {
    throw new AaProxyError(res.status, body.error ?? `the proxy answered ${res.status} without a token`);
  }
  return { token: body.token, expiresAt: body.expiresAt };
}

/** A fetch that adds the Origin and a current proxy token to every request, fetching a new token when due. */
export function proxyFetch(options: AaProxyOptions): typeof fetch {
  const margin = options.refreshMarginMs ?? 5_000;
  let current: Promise<ProxyToken> | undefined;
  const token = async (): Promise<string> => {
    const held = current && (await current.catch(() => undefined));
    if (held && held.expiresAt - margin > Date.now()) return held.token;
    current = fetchProxyToken(options);
    return (await current).token;
  };
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('origin', originOf(options));
    headers.set(AA_PROXY_TOKEN_HEADER, await token());
    return (options.fetch ?? fetch)(input, { ...init, headers });
  };
}

/** viem transports to the proxy's bundler and paymaster routes. */
export function aaProxyTransports(options: AaProxyOptions): { bundler: Transport; paymaster: Transport } {
  const fetchFn = proxyFetch(options);
  return {
    bundler: http(proxyUrl(options, 'bundler'), { fetchFn }),
    paymaster: http(proxyUrl(options, 'paymaster'), { fetchFn }),
  };
}

/**
 * A bundler client that sends through the proxy, sponsored by the proxy's paymaster, for `account` (e.g. a
 * passkey account: toPasskeySmartAccount). `client` reads the chain (nonces, code, fees).
 */
export function aaProxyClients<account extends SmartAccount>(
  options: AaProxyOptions & { client: Client<Transport, Chain>; account: account },
): { bundler: BundlerClient<Transport, Chain, account>; paymaster: PaymasterClient } {
  const transports = aaProxyTransports(options);
  const paymaster = createPaymasterClient({ transport: transports.paymaster });
  const bundler = createBundlerClient({
    account: options.account,
    client: options.client,
    chain: options.client.chain,
    transport: transports.bundler,
    paymaster,
  }) as BundlerClient<Transport, Chain, account>;
  return { bundler, paymaster };
}
