// The account-abstraction proxy: a browser page sends ERC-4337 bundler and ERC-7677 paymaster JSON-RPC calls
// through the service, which forwards them to the configured upstream of the network, so the upstream's URL (and
// the provider API key in it) never reaches the page. The page must be an allowed origin and hold a short-lived
// token bound to it; calls are counted per client. Every refusal is a ServiceError saying why.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import { chainIdOf, type NetworkName, resolveNetworkOrAlias } from '../core/networks.js';
import { type LimitRule, RateLimiter } from '../services/rate-limits.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { forwardJsonRpc, UpstreamError, upstreamOrigin } from './json-rpc-forwarding.js';
import { bundlerRequestSchema, type JsonRpcRequestSchema, parseJsonRpcRequest, paymasterRequestSchema } from './json-rpc-request.js';
import { checkOrigin, headerOf, type OriginPolicy } from './origin-check.js';
import { DEFAULT_TOKEN_TTL_MS, PROXY_TOKEN_HEADER, type ProxyToken, ProxyTokens, type TokenBinding } from './proxy-tokens.js';
import { readBodyText } from './request-body.js';
import { encodeSponsoree, SPONSOREE_HEADER } from './sponsoree-header.js';

/** Where a network's calls go: any ERC-7769 bundler and ERC-7677 paymaster (a hosted provider's URL may hold its key). */
export interface AaUpstreams {
  bundlerUrl?: string;
  paymasterUrl?: string;
  /**
   * Set when the paymaster is the service's own local one: the proxy tells it who asks (client address, token id) in
   * a header MACed with this key, and it charges that client's budgets. Never set for a provider's paymaster.
   */
  sponsoreeKey?: Uint8Array;
}

export interface AaProxyOptions {
  /** Keys the tokens (HMAC-SHA256): AA_PROXY_TOKEN_SECRET's bytes, or the secret kept in DATA_DIR. */
  tokenSecret: Uint8Array;
  /** Per network; a network without one answers 503 naming the setting. */
  upstreams?: Partial<Record<NetworkName, AaUpstreams>>;
  /** Default 90 s, at least 10 s. */
  tokenTtlMs?: number;
  /** Default true. */
  enforceOrigin?: boolean;
  /** Default none: the page's host must be the service's. */
  allowedOrigins?: readonly string[];
  /** Tokens per client and minute; default 30. */
  tokenLimitPerMinute?: number;
  /** Calls per client, route and minute; default 60. */
  proxyLimitPerMinute?: number;
  /** Default 8 s. */
  upstreamTimeoutMs?: number;
  /** An upstream failed or timed out (the caller got 502 or 504); `upstream` is its origin only, never its path or query. */
  onUpstreamError?: (failure: UpstreamFailure) => void;
}

export interface UpstreamFailure {
  network: NetworkName;
  route: AaRoute;
  upstream: string;
  timedOut: boolean;
  reason: string;
}

/** What the proxy reads of a request. */
export interface AaCall {
  /** The query: chainId (42220, 11142220) or network. */
  query: unknown;
  headers: IncomingHttpHeaders;
  /** The client address as the rate limits count it (clientKeyOf). */
  client: string;
}

export type AaRoute = 'bundler' | 'paymaster';

interface RouteRules {
  label: string;
  /** The per-network setting named in a 503: MAINNET_<suffix>. */
  setting: string;
  schema: JsonRpcRequestSchema;
  upstreamOf: (upstreams: AaUpstreams) => string | undefined;
}

export const AA_ROUTES: Record<AaRoute, RouteRules> = {
  bundler: { label: 'Bundler', setting: 'BUNDLER_URL', schema: bundlerRequestSchema, upstreamOf: (u) => u.bundlerUrl },
  paymaster: {
    label: 'Paymaster',
    setting: 'PAYMASTER_URL',
    schema: paymasterRequestSchema,
    upstreamOf: (u) => u.paymasterUrl,
  },
};

const MISSING_CHAIN = 'Unsupported or missing chain: pass chainId=42220 or chainId=11142220 (or network=mainnet or network=testnet)';
const NETWORK_NAMES_ACCEPTED = ['mainnet', 'testnet', 'celo-mainnet', 'celo-sepolia'] as const;

/** The query of the three routes: which chain the token and the call are for. */
export const aaQuerySchema = z
  .object({
    chainId: z.enum(['42220', '11142220'], { error: MISSING_CHAIN }).optional().describe('42220 (mainnet) or 11142220 (testnet); or give network'),
    network: z
      .enum(NETWORK_NAMES_ACCEPTED, { error: MISSING_CHAIN })
      .optional()
      .describe('mainnet or testnet (or celo-mainnet, celo-sepolia) instead of chainId'),
  })
  .refine((query) => query.chainId !== undefined || query.network !== undefined, { error: MISSING_CHAIN })
  .refine(
    (query) =>
      query.chainId === undefined || query.network === undefined || resolveNetworkOrAlias(query.chainId) === resolveNetworkOrAlias(query.network),
    { error: 'chainId and network name different chains: give one of them' },
  );

function networkOf(query: unknown): NetworkName {
  const parsed = aaQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ServiceError(400, parsed.error.issues[0]?.message ?? MISSING_CHAIN);
  return resolveNetworkOrAlias(parsed.data.network ?? (parsed.data.chainId as string));
}

const perMinute = (name: string, what: string, limit: number): LimitRule => ({ name, what, limit, windowMs: 60_000 });

export class AaProxyService {
  readonly #tokens: ProxyTokens;
  readonly #origin: OriginPolicy;
  readonly #upstreams: Partial<Record<NetworkName, AaUpstreams>>;
  readonly #limits: Record<'token' | AaRoute, RateLimiter>;
  readonly #timeoutMs: number;
  readonly #onUpstreamError: ((failure: UpstreamFailure) => void) | undefined;

  constructor(store: KeyValueStore, options: AaProxyOptions, clock: Clock = Date.now) {
    this.#tokens = new ProxyTokens(options.tokenSecret, options.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS, clock);
    this.#origin = { enforce: options.enforceOrigin ?? true, allowedOrigins: options.allowedOrigins ?? [] };
    this.#upstreams = options.upstreams ?? {};
    const proxyLimit = options.proxyLimitPerMinute ?? 60;
    this.#limits = {
      token: new RateLimiter(store, perMinute('aa-token', 'AA proxy tokens', options.tokenLimitPerMinute ?? 30)),
      bundler: new RateLimiter(store, perMinute('aa-bundler', 'bundler calls', proxyLimit)),
      paymaster: new RateLimiter(store, perMinute('aa-paymaster', 'paymaster calls', proxyLimit)),
    };
    this.#timeoutMs = options.upstreamTimeoutMs ?? 8_000;
    this.#onUpstreamError = options.onUpstreamError;
  }

  /** POST /api/aa/token: origin (403), chain (400), the client's token budget (429), then a token for this client. */
  async issueToken(call: AaCall): Promise<ProxyToken> {
    checkOrigin(call.headers, this.#origin);
    const network = networkOf(call.query);
    await this.#limits.token.consume(call.client);
    return this.#tokens.issue(bindingOf(call, network));
  }

  /**
   * POST /api/aa/bundler and /api/aa/paymaster: chain (400), an upstream for it (503), origin (403), token (401),
   * the client's budget on this route (429), body size (413), the JSON-RPC request (400); then the upstream's
   * response text as it is, or 504 (timeout) / 502 (any other failure).
   */
  async forward(route: AaRoute, call: AaCall, body: Readable): Promise<string> {
    const rules = AA_ROUTES[route];
    const network = networkOf(call.query);
    const upstream = rules.upstreamOf(this.#upstreams[network] ?? {});
    if (!upstream) throw new ServiceError(503, `${rules.label} not configured for ${network}: set ${network.toUpperCase()}_${rules.setting}`);
    checkOrigin(call.headers, this.#origin);
    const token = headerOf(call.headers, PROXY_TOKEN_HEADER);
    this.#tokens.verify(token, bindingOf(call, network));
    await this.#limits[route].consume(call.client);
    const text = await readBodyText(body, headerOf(call.headers, 'content-length'));
    const request = parseJsonRpcRequest(text, rules.schema);
    const { sponsoreeKey } = this.#upstreams[network] ?? {};
    const headers: Record<string, string> =
      route === 'paymaster' && sponsoreeKey
        ? { [SPONSOREE_HEADER]: encodeSponsoree(sponsoreeKey, { client: call.client, token: tokenId(token as string) }) }
        : {};
    try {
      return await forwardJsonRpc(upstream, text, request, this.#timeoutMs, headers);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      this.#onUpstreamError?.({ network, route, upstream: upstreamOrigin(upstream), timedOut: error.timedOut, reason: error.message });
      throw error.timedOut ? new ServiceError(504, 'Upstream timeout') : new ServiceError(502, 'Upstream request failed');
    }
  }
}

/** Names a token to the paymaster's per-token budget without handing the token (a credential) on. */
const tokenId = (token: string): string => createHash('sha256').update(token, 'utf8').digest('base64url').slice(0, 22);

const bindingOf = (call: AaCall, network: NetworkName): TokenBinding => ({
  chainId: chainIdOf(network),
  client: call.client,
  userAgent: headerOf(call.headers, 'user-agent'),
});
