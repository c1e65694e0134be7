// The one place where the environment is read: validated once at start into a typed Config.
import { type Address, getAddress, isAddress, parseEther } from 'viem';
import { z } from 'zod';
import { DEFAULT_MINIMUM_DEPOSIT } from './aa/paymaster-deposit.js';
import { CELO_DEPLOYMENTS, type ContractAddresses } from './chain/celo-deployments.js';
import { DEFAULT_DEEP_LINK_SCHEME } from './core/deep-link.js';
import { NETWORK_NAMES, type NetworkName } from './core/networks.js';
import { parseSigningJwk, SIGNING_ALGS, type SigningAlg, type SigningJwkInput } from './core/signing-jwk.js';
import { DEFAULT_RETIRE_AFTER_MS } from './core/signing-key-ring.js';
import { type BudgetLimit, DEFAULT_BUDGETS, type SponsorshipBudgetLimits } from './devnet/aa/sponsorship-budget.js';

/** A network served by an external RPC (Celo, or any node the operator runs). */
export interface ExternalNetworkConfig {
  kind: 'external';
  rpcUrl: string;
  contracts: ContractAddresses;
  registryDeployBlock: bigint;
  /** The node's WebSocket (<NETWORK>_WS_URL): new blocks wake the log follower, registry logs the session watches; polling stays the fallback. */
  wsUrl?: string;
}

/** A network the service runs itself: an anvil under DATA_DIR with our own contracts. */
export interface EmbeddedNetworkConfig {
  kind: 'embedded';
}

export type NetworkConfig = ExternalNetworkConfig | EmbeddedNetworkConfig;

/** The account-abstraction proxy (POST /api/aa/*): its token, origin rule, limits and upstreams. */
export interface AaProxyConfig {
  /** Keys the proxy tokens (HMAC-SHA256); generated once under DATA_DIR when unset. */
  tokenSecret?: string;
  tokenTtlMs: number;
  /** false: no origin check at all. */
  enforceOrigin: boolean;
  /** Origins (scheme://host[:port]) that may call; empty: the page's host must be the service's own. */
  allowedOrigins: string[];
  tokenLimitPerMinute: number;
  proxyLimitPerMinute: number;
  upstreamTimeoutMs: number;
  /** An ERC-7769 bundler and an ERC-7677 paymaster per network; their URLs may carry an API key. */
  upstreams: Partial<Record<NetworkName, { bundlerUrl?: string; paymasterUrl?: string }>>;
}

/** What the local paymasters of the embedded chains sponsor, and how much of their deposit per hour. */
export interface AaSponsorshipConfig {
  /** Call targets sponsored beside the registry's agent-management actions. */
  allowedTargets: Address[];
  /** Gas and wei per rolling hour, per proxy token, per client address and for each paymaster. */
  budgets: SponsorshipBudgetLimits;
  /** Wei; a deposit under it is reported (a warning, health, metrics). */
  lowDeposit: bigint;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: string;
  /** Public base URL of the service; derived from host and port when unset. */
  publicUrl: string;
  /**
   * The @authority values an RFC 9421 signature may be made for (host[:port], lowercase). Empty: the host of
   * PUBLIC_URL when it is set, else any loopback name on the port the request arrived at (a local service).
   */
  signatureAuthorities: string[];
  /** Signed requests per window per human, over all of the human's agents and signed endpoints; absent: no quota. */
  humanQuota?: { limit: number; windowS: number; trial?: { limit: number } };
  /** Encrypts session tokens; generated once under DATA_DIR (or in the shared Redis) when unset. */
  sessionSecret?: string;
  /**
   * The service's signing key (cards, credentials, the status list; its JWKS at /.well-known/jwks.json): SIGNING_KEY
   * when set, else generated once (into DATA_DIR, or the shared Redis) with `alg`; a replaced key stays in the JWKS
   * for `retireAfterMs`.
   */
  signingKey: { given?: SigningJwkInput; alg: SigningAlg; retireAfterMs: number };
  /** The shared store (REDIS_URL): several instances keep their data in one Redis; absent, the embedded sqlite store. */
  redis?: { url: string; keyPrefix: string };
  deepLinkScheme: string;
  /** The name the identity app shows the human. */
  appName: string;
  /** Agents one human may have on the local chains (0 = unlimited; Celo's registry has 1). */
  maxAgentsPerHuman: number;
  /** The platform whose @foundry-rs/anvil package runs the local chains (default this machine's; without it: anvil on the PATH). */
  anvilPlatform?: string;
  /** A2A push notifications may go to loopback, private and link-local addresses, over plain http too. */
  pushAllowPrivateNetworks: boolean;
  /** How often an open A2A stream gets a keep-alive comment (ms), so idle-timeout proxies keep it open. */
  streamKeepAliveMs: number;
  /** The demo agent's key per network (POST /api/demo/agent-to-agent); the embedded testnet makes its own. */
  demoAgentKeys: Partial<Record<NetworkName, `0x${string}`>>;
  /** Pays for POST /api/demo/chain-verify's transactions on configured chains (local chains use their operator). */
  relayerKey?: `0x${string}`;
  /** An external agent service for POST /api/demo/chat; unset: the built-in agent answers. */
  chatAgentUrl?: string;
  aaProxy: AaProxyConfig;
  aaSponsorship: AaSponsorshipConfig;
  /** Limits of the main HTTP server: a request's whole arrival, its headers', and open connections (0: no cap). */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; maxConnections: number };
  /** Request targets the response cache in front of express holds (0: no response cache). */
  responseCacheEntries: number;
  /** Agents whose chain reads and answers each network's cache holds, least recently used going first. */
  agentCacheEntries: number;
  /** The registry index's backfill: most blocks per eth_getLogs (halved when refused), and the stored index's writer lease. */
  registryIndex: { maxLogRange: bigint; leaseMs: number };
  /** Long-lived streams (A2A, scan-page events): open per client, per task or session, in all, and their longest life. */
  streams: { perClient: number; perSubject: number; total: number; maxLifetimeMs: number };
  /** GET /metrics: a bearer token it requires, and a listener of its own instead of the main port. */
  metrics: { token?: string; port?: number; host: string };
  /** How long a transaction the identity app reports may stay unknown to the chain; unset: per network (60 s local, 5 min external). */
  reportedTxTimeoutMs?: number;
  /** Messages to the agent (A2A messages and chat queries): per client address and minute, one message's and one body's bytes. */
  agentMessages: { perMinute: number; maxMessageBytes: number; maxBodyBytes: number };
  /** How long A2A tasks that follow no session are kept: finished queries, conversations waiting for input. */
  a2aTasks: { queryMs: number; conversationMs: number };
  /** How long and how much of a chat conversation is kept. */
  chatHistory: { ttlMs: number; maxBytes: number };
  networks: Record<NetworkName, NetworkConfig>;
}

const privateKey = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
  .transform((value) => value as `0x${string}`);

const address = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be a 0x-prefixed 20-byte hex address')
  .transform((value) => value as Address);

const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** A private JWK as JSON; the message says what is wrong with it, never what it holds. */
const signingJwk = z.string().transform((value, context): SigningJwkInput => {
  try {
    return parseSigningJwk(JSON.parse(value));
  } catch (error) {
    const reason =
      error instanceof SyntaxError ? 'must be a private JWK as JSON, e.g. the contents of DATA_DIR/signing-key.json' : (error as Error).message;
    context.addIssue({ code: 'custom', message: reason });
    return z.NEVER;
  }
});

const flag = optional(z.enum(['true', 'false', '1', '0']));
const isSet = (value: string): boolean => value === 'true' || value === '1';

/** An origin and nothing more (a trailing slash aside): http(s), a host, perhaps a port; no path, query, fragment or credentials. */
const isOrigin = (entry: string): boolean => {
  if (!URL.canParse(entry)) return false;
  const url = new URL(entry);
  return /^https?:$/.test(url.protocol) && url.pathname === '/' && !url.search && !url.hash && !url.username;
};

/** Comma-separated entries, trimmed, empties dropped. */
const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== ''),
);

/** Comma-separated origins, each normalized to scheme://host[:port]. */
const originList = commaList.pipe(
  z.array(
    z
      .string()
      .refine(isOrigin, { error: (issue) => `${String(issue.input)} is not an origin: use scheme://host[:port], e.g. https://app.example` })
      .transform((entry) => new URL(entry).origin),
  ),
);

/** Comma-separated authorities (host[:port]) as a signer's URL names them, lowercase. */
const authorityList = commaList.pipe(
  z.array(
    z
      .string()
      .refine((entry) => URL.canParse(`http://${entry}`) && new URL(`http://${entry}`).host === entry.toLowerCase(), {
        error: (issue) => `${String(issue.input)} is not an authority: use host[:port], e.g. registry.example or localhost:3000`,
      })
      .transform((entry) => entry.toLowerCase()),
  ),
);

/** Comma-separated addresses, checksummed. */
const addressList = commaList.pipe(
  z.array(
    z
      .string()
      .refine((entry) => isAddress(entry, { strict: false }), {
        error: (issue) => `${String(issue.input)} is not a 0x-prefixed 20-byte hex address`,
      })
      .transform((entry) => getAddress(entry)),
  ),
);

/** An amount of gas: a whole number (0 turns sponsorship off). */
const gasAmount = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a whole amount of gas, e.g. 20000000')
  .transform((value) => BigInt(value));

/** An amount of the native token in decimal (18 decimals at most), kept in wei. */
const nativeAmount = z
  .string()
  .regex(/^\d{1,12}(\.\d{1,18})?$/, 'must be an amount of the native token, e.g. 0.05')
  .transform((value) => parseEther(value));

const budgetEnv = (prefix: string, budget: BudgetLimit) => ({
  [`${prefix}_GAS_PER_HOUR`]: optional(gasAmount).default(budget.gas),
  [`${prefix}_VALUE_PER_HOUR`]: optional(nativeAmount).default(budget.wei),
});

const aaUpstreamEnv = (prefix: string) => ({
  [`${prefix}_BUNDLER_URL`]: optional(z.url({ protocol: /^https?$/ })),
  [`${prefix}_PAYMASTER_URL`]: optional(z.url({ protocol: /^https?$/ })),
});

const networkEnv = (prefix: string) => ({
  [`${prefix}_RPC_URL`]: optional(z.url({ protocol: /^(https?|wss?)$/ })),
  [`${prefix}_WS_URL`]: optional(z.url({ protocol: /^wss?$/ })),
  [`${prefix}_REGISTRY_ADDRESS`]: optional(address),
  [`${prefix}_PROOF_PROVIDER_ADDRESS`]: optional(address),
  [`${prefix}_HUB_ADDRESS`]: optional(address),
  [`${prefix}_DEMO_VERIFIER_ADDRESS`]: optional(address),
  [`${prefix}_DEMO_VERIFIER_ED25519_ADDRESS`]: optional(address),
  [`${prefix}_MULTICALL_ADDRESS`]: optional(address),
  [`${prefix}_REGISTRY_DEPLOY_BLOCK`]: optional(z.coerce.bigint().nonnegative()),
});

const envSchema = z.object({
  PORT: optional(z.coerce.number().int().min(0).max(65_535)).default(3000),
  HOST: optional(z.string().min(1)).default('127.0.0.1'),
  DATA_DIR: optional(z.string().min(1)).default('.data'),
  LOG_LEVEL: optional(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])).default('info'),
  PUBLIC_URL: optional(z.url({ protocol: /^https?$/ })),
  SIGNATURE_AUTHORITIES: optional(authorityList).default([]),
  HUMAN_QUOTA_LIMIT: optional(z.coerce.number().int().min(0)).default(0),
  HUMAN_QUOTA_WINDOW_S: optional(z.coerce.number().int().min(1)).default(3600),
  HUMAN_QUOTA_TRIAL: optional(z.coerce.number().int().min(0)).default(0),
  SESSION_SECRET: optional(
    z.string().refine((value) => Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes (e.g. openssl rand -hex 32)'),
  ),
  SIGNING_KEY: optional(signingJwk),
  SIGNING_KEY_ALG: optional(z.enum(SIGNING_ALGS, 'must be EdDSA (Ed25519) or ES256 (P-256)')).default('EdDSA'),
  SIGNING_KEY_RETIRE_AFTER_MS: optional(
    z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86_400_000, 'must be at most 2592000000 (30 days)'),
  ).default(DEFAULT_RETIRE_AFTER_MS),
  REDIS_URL: optional(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379' })),
  REDIS_KEY_PREFIX: optional(
    z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters without spaces, e.g. registry:'),
  ).default('air:'),
  DEEP_LINK_SCHEME: optional(z.string().regex(/^[a-z][a-z0-9+.-]*$/, 'must be a URL scheme such as selfapp')).default(DEFAULT_DEEP_LINK_SCHEME),
  APP_NAME: optional(z.string().min(1).max(64)).default('Agent Identity Registry'),
  MAX_AGENTS_PER_HUMAN: optional(z.coerce.number().int().min(0)).default(1),
  ANVIL_PLATFORM: optional(
    z.string().regex(/^[a-z0-9]+-[a-z0-9]+$/, 'must be <os>-<arch> as the @foundry-rs/anvil packages name it, e.g. darwin-arm64'),
  ),
  A2A_PUSH_ALLOW_PRIVATE_NETWORKS: flag.default('false'),
  A2A_STREAM_KEEPALIVE_MS: optional(
    z.coerce.number().int().min(1_000, 'must be at least 1000 (1 s)').max(300_000, 'must be at most 300000 (5 min)'),
  ).default(15_000),
  DEMO_AGENT_PRIVATE_KEY_MAINNET: optional(privateKey),
  DEMO_AGENT_PRIVATE_KEY_TESTNET: optional(privateKey),
  RELAYER_PRIVATE_KEY: optional(privateKey),
  CHAT_AGENT_URL: optional(z.url({ protocol: /^https?$/ })),
  AA_PROXY_TOKEN_SECRET: optional(
    z.string().refine((value) => Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes (e.g. openssl rand -hex 32)'),
  ),
  AA_PROXY_TOKEN_TTL_MS: optional(
    z.coerce.number().int().min(10_000, 'must be at least 10000 (10 s)').max(3_600_000, 'must be at most 3600000 (1 h)'),
  ).default(90_000),
  AA_PROXY_ENFORCE_ORIGIN: flag.default('true'),
  AA_PROXY_ALLOWED_ORIGINS: optional(originList).default([]),
  AA_TOKEN_MAX_REQ_PER_MINUTE: optional(z.coerce.number().int().min(1)).default(30),
  AA_PROXY_MAX_REQ_PER_MINUTE: optional(z.coerce.number().int().min(1)).default(60),
  AA_PROXY_UPSTREAM_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(120_000)).default(8_000),
  AA_SPONSOR_ALLOWED_TARGETS: optional(addressList).default([]),
  ...budgetEnv('AA_SPONSOR_TOKEN', DEFAULT_BUDGETS.perToken),
  ...budgetEnv('AA_SPONSOR_CLIENT', DEFAULT_BUDGETS.perClient),
  ...budgetEnv('AA_SPONSOR_GLOBAL', DEFAULT_BUDGETS.global),
  AA_PAYMASTER_LOW_DEPOSIT: optional(nativeAmount).default(DEFAULT_MINIMUM_DEPOSIT),
  REQUEST_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)).default(30_000),
  HEADERS_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)).default(10_000),
  MAX_CONNECTIONS: optional(z.coerce.number().int().min(0)).default(1_000),
  RESPONSE_CACHE_ENTRIES: optional(z.coerce.number().int().min(0).max(10_000_000)).default(10_000),
  AGENT_CACHE_ENTRIES: optional(z.coerce.number().int().min(1).max(10_000_000)).default(10_000),
  MAX_LOG_RANGE: optional(z.coerce.number().int().min(1).max(10_000_000)).default(50_000),
  INDEX_LEASE_MS: optional(z.coerce.number().int().min(1_000, 'must be at least 1000 (1 s)').max(600_000, 'must be at most 600000 (10 min)')).default(
    15_000,
  ),
  MAX_STREAMS_PER_CLIENT: optional(z.coerce.number().int().min(1)).default(8),
  MAX_STREAMS_PER_SUBJECT: optional(z.coerce.number().int().min(1)).default(4),
  MAX_STREAMS: optional(z.coerce.number().int().min(1)).default(1_000),
  STREAM_MAX_LIFETIME_MS: optional(z.coerce.number().int().min(1_000).max(1_800_000)).default(600_000),
  METRICS_TOKEN: optional(z.string().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 32)')),
  METRICS_PORT: optional(z.coerce.number().int().min(0).max(65_535)),
  METRICS_HOST: optional(z.string().min(1)).default('127.0.0.1'),
  CALLBACK_TX_TIMEOUT_MS: optional(z.coerce.number().int().min(1_000).max(1_800_000)),
  AGENT_MESSAGES_PER_MINUTE: optional(z.coerce.number().int().min(1)).default(60),
  AGENT_MESSAGE_MAX_BYTES: optional(z.coerce.number().int().min(256, 'must be at least 256').max(204_800, 'must be at most 204800 (200 kB)')).default(
    4_096,
  ),
  AGENT_MESSAGE_BODY_LIMIT_BYTES: optional(
    z.coerce.number().int().min(1_024, 'must be at least 1024').max(204_800, 'must be at most 204800 (200 kB, the interface limit)'),
  ).default(32_768),
  A2A_QUERY_TASK_TTL_MS: optional(
    z.coerce.number().int().min(1_000, 'must be at least 1000 (1 s)').max(86_400_000, 'must be at most 86400000 (a day)'),
  ).default(600_000),
  A2A_CONVERSATION_TTL_MS: optional(
    z.coerce.number().int().min(60_000, 'must be at least 60000 (1 min)').max(86_400_000, 'must be at most 86400000 (a day)'),
  ).default(3_600_000),
  CHAT_HISTORY_TTL_MS: optional(
    z.coerce.number().int().min(1_000, 'must be at least 1000 (1 s)').max(86_400_000, 'must be at most 86400000 (a day)'),
  ).default(3_600_000),
  CHAT_HISTORY_MAX_BYTES: optional(
    z.coerce.number().int().min(1_024, 'must be at least 1024').max(1_048_576, 'must be at most 1048576 (1 MB)'),
  ).default(16_384),
  ...aaUpstreamEnv('MAINNET'),
  ...aaUpstreamEnv('TESTNET'),
  ...networkEnv('MAINNET'),
  ...networkEnv('TESTNET'),
});

/** Every environment variable the service reads (documented in .env.example). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

function networkConfig(env: Record<string, unknown>, network: NetworkName): NetworkConfig {
  const prefix = network.toUpperCase();
  const read = <T>(name: string): T | undefined => env[`${prefix}_${name}`] as T | undefined;
  const rpcUrl = read<string>('RPC_URL');
  if (rpcUrl === undefined) return { kind: 'embedded' };
  const defaults = CELO_DEPLOYMENTS[network];
  return {
    kind: 'external',
    rpcUrl,
    contracts: {
      registry: read<Address>('REGISTRY_ADDRESS') ?? defaults.registry,
      proofProvider: read<Address>('PROOF_PROVIDER_ADDRESS') ?? defaults.proofProvider,
      hub: read<Address>('HUB_ADDRESS') ?? defaults.hub,
      demoVerifier: read<Address>('DEMO_VERIFIER_ADDRESS') ?? defaults.demoVerifier,
      demoVerifierEd25519: read<Address>('DEMO_VERIFIER_ED25519_ADDRESS') ?? defaults.demoVerifierEd25519,
      multicall: read<Address>('MULTICALL_ADDRESS') ?? defaults.multicall,
    },
    registryDeployBlock: read<bigint>('REGISTRY_DEPLOY_BLOCK') ?? defaults.registryDeployBlock,
    ...(read<string>('WS_URL') ? { wsUrl: read<string>('WS_URL') as string } : {}),
  };
}

function aaProxyConfig(values: Record<string, unknown> & z.infer<typeof envSchema>): AaProxyConfig {
  const upstreams: AaProxyConfig['upstreams'] = {};
  for (const network of NETWORK_NAMES) {
    const prefix = network.toUpperCase();
    const bundlerUrl = values[`${prefix}_BUNDLER_URL`] as string | undefined;
    const paymasterUrl = values[`${prefix}_PAYMASTER_URL`] as string | undefined;
    if (bundlerUrl || paymasterUrl) upstreams[network] = { ...(bundlerUrl ? { bundlerUrl } : {}), ...(paymasterUrl ? { paymasterUrl } : {}) };
  }
  return {
    ...(values.AA_PROXY_TOKEN_SECRET ? { tokenSecret: values.AA_PROXY_TOKEN_SECRET } : {}),
    tokenTtlMs: values.AA_PROXY_TOKEN_TTL_MS,
    enforceOrigin: isSet(values.AA_PROXY_ENFORCE_ORIGIN),
    allowedOrigins: values.AA_PROXY_ALLOWED_ORIGINS,
    tokenLimitPerMinute: values.AA_TOKEN_MAX_REQ_PER_MINUTE,
    proxyLimitPerMinute: values.AA_PROXY_MAX_REQ_PER_MINUTE,
    upstreamTimeoutMs: values.AA_PROXY_UPSTREAM_TIMEOUT_MS,
    upstreams,
  };
}

function aaSponsorshipConfig(values: Record<string, unknown> & z.infer<typeof envSchema>): AaSponsorshipConfig {
  const budget = (prefix: string): BudgetLimit => ({
    gas: values[`${prefix}_GAS_PER_HOUR`] as bigint,
    wei: values[`${prefix}_VALUE_PER_HOUR`] as bigint,
  });
  return {
    allowedTargets: values.AA_SPONSOR_ALLOWED_TARGETS,
    budgets: { perToken: budget('AA_SPONSOR_TOKEN'), perClient: budget('AA_SPONSOR_CLIENT'), global: budget('AA_SPONSOR_GLOBAL') },
    lowDeposit: values.AA_PAYMASTER_LOW_DEPOSIT,
  };
}

/** Reads and validates the environment; throws one error naming every bad variable. */
/** A listening address only this machine reaches. */
const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\./.test(host);

/** What the start warns of when GET /metrics is reachable beyond loopback without a token; undefined when it is not. */
export function metricsExposure(config: Pick<Config, 'host' | 'metrics'>): { host: string; message: string } | undefined {
  const host = config.metrics.port === undefined ? config.host : config.metrics.host;
  if (config.metrics.token || isLoopbackHost(host)) return undefined;
  return {
    host,
    message: `GET /metrics is reachable beyond loopback (${host}) without a token: set METRICS_TOKEN, or METRICS_PORT with a loopback METRICS_HOST`,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const values = parsed.data as Record<string, unknown> & z.infer<typeof envSchema>;
  // Node refuses a headers timeout longer than the request's; a metrics port equal to PORT could never listen
  const conflicts = [
    ...(values.HEADERS_TIMEOUT_MS > values.REQUEST_TIMEOUT_MS
      ? [`HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS (${values.REQUEST_TIMEOUT_MS})`]
      : []),
    ...(values.METRICS_PORT !== undefined && values.METRICS_PORT !== 0 && values.METRICS_PORT === values.PORT
      ? ['METRICS_PORT: must differ from PORT']
      : []),
    // a body must be able to hold the largest message
    ...(values.AGENT_MESSAGE_BODY_LIMIT_BYTES < values.AGENT_MESSAGE_MAX_BYTES
      ? [`AGENT_MESSAGE_BODY_LIMIT_BYTES: must be at least AGENT_MESSAGE_MAX_BYTES (${values.AGENT_MESSAGE_MAX_BYTES})`]
      : []),
  ];
  if (conflicts.length > 0) throw new Error(`Invalid configuration:\n  ${conflicts.join('\n  ')}`);
  const displayHost = values.HOST === '0.0.0.0' || values.HOST === '::' ? 'localhost' : values.HOST;
  return {
    port: values.PORT,
    host: values.HOST,
    dataDir: values.DATA_DIR,
    logLevel: values.LOG_LEVEL,
    publicUrl: (values.PUBLIC_URL ?? `http://${displayHost}:${values.PORT}`).replace(/\/+$/, ''),
    ...(values.HUMAN_QUOTA_LIMIT > 0
      ? {
          humanQuota: {
            limit: values.HUMAN_QUOTA_LIMIT,
            windowS: values.HUMAN_QUOTA_WINDOW_S,
            ...(values.HUMAN_QUOTA_TRIAL > 0 ? { trial: { limit: values.HUMAN_QUOTA_TRIAL } } : {}),
          },
        }
      : {}),
    signatureAuthorities:
      values.SIGNATURE_AUTHORITIES.length > 0 ? values.SIGNATURE_AUTHORITIES : values.PUBLIC_URL ? [new URL(values.PUBLIC_URL).host] : [],
    ...(values.SESSION_SECRET ? { sessionSecret: values.SESSION_SECRET } : {}),
    signingKey: {
      ...(values.SIGNING_KEY ? { given: values.SIGNING_KEY } : {}),
      alg: values.SIGNING_KEY_ALG,
      retireAfterMs: values.SIGNING_KEY_RETIRE_AFTER_MS,
    },
    ...(values.REDIS_URL ? { redis: { url: values.REDIS_URL, keyPrefix: values.REDIS_KEY_PREFIX } } : {}),
    deepLinkScheme: values.DEEP_LINK_SCHEME,
    appName: values.APP_NAME,
    maxAgentsPerHuman: values.MAX_AGENTS_PER_HUMAN,
    ...(values.ANVIL_PLATFORM ? { anvilPlatform: values.ANVIL_PLATFORM } : {}),
    pushAllowPrivateNetworks: isSet(values.A2A_PUSH_ALLOW_PRIVATE_NETWORKS),
    streamKeepAliveMs: values.A2A_STREAM_KEEPALIVE_MS,
    ...(values.RELAYER_PRIVATE_KEY ? { relayerKey: values.RELAYER_PRIVATE_KEY } : {}),
    ...(values.CHAT_AGENT_URL ? { chatAgentUrl: values.CHAT_AGENT_URL } : {}),
    demoAgentKeys: {
      ...(values.DEMO_AGENT_PRIVATE_KEY_MAINNET ? { mainnet: values.DEMO_AGENT_PRIVATE_KEY_MAINNET } : {}),
      ...(values.DEMO_AGENT_PRIVATE_KEY_TESTNET ? { testnet: values.DEMO_AGENT_PRIVATE_KEY_TESTNET } : {}),
    },
    aaProxy: aaProxyConfig(values),
    aaSponsorship: aaSponsorshipConfig(values),
    http: { requestTimeoutMs: values.REQUEST_TIMEOUT_MS, headersTimeoutMs: values.HEADERS_TIMEOUT_MS, maxConnections: values.MAX_CONNECTIONS },
    responseCacheEntries: values.RESPONSE_CACHE_ENTRIES,
    agentCacheEntries: values.AGENT_CACHE_ENTRIES,
    registryIndex: { maxLogRange: BigInt(values.MAX_LOG_RANGE), leaseMs: values.INDEX_LEASE_MS },
    streams: {
      perClient: values.MAX_STREAMS_PER_CLIENT,
      perSubject: values.MAX_STREAMS_PER_SUBJECT,
      total: values.MAX_STREAMS,
      maxLifetimeMs: values.STREAM_MAX_LIFETIME_MS,
    },
    metrics: {
      ...(values.METRICS_TOKEN ? { token: values.METRICS_TOKEN } : {}),
      ...(values.METRICS_PORT !== undefined ? { port: values.METRICS_PORT } : {}),
      host: values.METRICS_HOST,
    },
    ...(values.CALLBACK_TX_TIMEOUT_MS !== undefined ? { reportedTxTimeoutMs: values.CALLBACK_TX_TIMEOUT_MS } : {}),
    agentMessages: {
      perMinute: values.AGENT_MESSAGES_PER_MINUTE,
      maxMessageBytes: values.AGENT_MESSAGE_MAX_BYTES,
      maxBodyBytes: values.AGENT_MESSAGE_BODY_LIMIT_BYTES,
    },
    a2aTasks: { queryMs: values.A2A_QUERY_TASK_TTL_MS, conversationMs: values.A2A_CONVERSATION_TTL_MS },
    chatHistory: { ttlMs: values.CHAT_HISTORY_TTL_MS, maxBytes: values.CHAT_HISTORY_MAX_BYTES },
    networks: Object.fromEntries(NETWORK_NAMES.map((n) => [n, networkConfig(values, n)])) as Record<NetworkName, NetworkConfig>,
  };
}
