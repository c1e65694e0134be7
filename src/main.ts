// Composition root: configuration -> store, chains (embedded anvil or external RPC) -> services -> the REST app, the
// A2A agent and the MCP server side by side over the same services -> one HTTP server.

import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { formatEther, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createA2aAgent } from './a2a/agent.js';
import { skills } from './a2a/agent-card.js';
import { isA2aCallerError } from './a2a/caller-errors.js';
import { intentChatAgent } from './a2a/chat-agent.js';
import { PROXY_TOKEN_SECRET } from './aa/proxy-tokens.js';
import { CELO_DEPLOYMENTS } from './chain/celo-deployments.js';
import { createChainClient, createChainWallet } from './chain/clients.js';
import type { DemoVerifierGateway } from './chain/demo-verifier-gateway.js';
import { ChainGateway, createNetworkGateway, type NetworkGateway, type NetworkSetup } from './chain/gateway.js';
import { localWebSocketUrl } from './chain/new-heads.js';
import { type AaSponsorshipConfig, type Config, loadConfig, metricsExposure } from './config.js';
import { agentRegistryAbi } from './contracts/artifacts/index.js';
import { DISCOVERY_PATH } from './core/endpoints.js';
import { NETWORK_NAMES, type NetworkName } from './core/networks.js';
import { provisionDemoAgent } from './demo/demo-agent.js';
import { createLocalBundler } from './devnet/aa/bundler.js';
import type { AccountAbstractionAddresses } from './devnet/aa/deploy-aa.js';
import { ENTRY_POINT_V07 } from './devnet/aa/entry-point.js';
import { createLocalPaymaster } from './devnet/aa/paymaster-rpc.js';
import { type AaRpcServer, startAaRpcServer } from './devnet/aa/rpc-server.js';
import { storeBudgetLedger } from './devnet/aa/sponsorship-budget-ledger.js';
import { storeSponsorshipLedger } from './devnet/aa/sponsorship-ledger.js';
import type { DevChain } from './devnet/devchain.js';
import { type DevAccounts, type EmbeddedNetwork, type EmbeddedOptions, loadDevAccounts, startEmbeddedNetwork } from './devnet/embedded.js';
import { describeSupervisorEvent } from './devnet/supervisor.js';
import { createApp } from './http/app.js';
import { ExpressMessages } from './http/express-messages.js';
import { type MetricsServer, startMetricsServer } from './http/metrics-server.js';
import { ResponseCache } from './http/response-cache.js';
import { createLimitedServer } from './http/server-limits.js';
import { createLogger, flushLogger, routeConsoleTo } from './logger.js';
import { createMcpEndpoint } from './mcp/endpoint.js';
import { Metrics } from './metrics.js';
import { createServices } from './services/index.js';
import { ServiceSigningKeys, type SigningKeySource } from './services/signing-keys.js';
import { SessionReconciliation } from './sessions/session-reconciliation.js';
import { SessionRepository } from './sessions/session-repository.js';
import { StartupTimer, type StartupTimings } from './startup-timer.js';
import { secureDataDir } from './store/data-dir.js';
import { type EventBus, InProcessEventBus } from './store/event-bus.js';
import { type KeptSecret, loadKeptSecret, loadSharedSecret, SESSION_SECRET } from './store/kept-secret.js';
import type { KeyValueStore } from './store/key-value-store.js';
import { RedisEventBus } from './store/redis-event-bus.js';
import { RedisStore } from './store/redis-store.js';
import { SIGNING_KEY_FILE, SigningKeyFile } from './store/signing-key-file.js';
import { SqliteStore } from './store/sqlite-store.js';

export { createApp } from './http/app.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export interface RunningService {
  server: Server;
  url: string;
  chains: ChainGateway;
  /** The anvil processes this service started (empty when every network has an external RPC). */
  devChains: readonly DevChain[];
  /** The embedded chains' ERC-4337 contracts and the loopback bundler and paymaster URLs behind the proxy. */
  accountAbstraction: Partial<Record<NetworkName, AccountAbstractionAddresses & { bundlerUrl: string; paymasterUrl: string }>>;
  /** GET /metrics on its own listener (METRICS_PORT); absent: served on the main port. */
  metricsUrl?: string;
  /** How long each phase of this start took. */
  startup: StartupTimings;
  stop(): Promise<void>;
}

export interface ServiceHooks {
  /** An embedded chain stopped and every restart failed (default: logged); main exits non-zero. */
  onChainLost?: (error: Error) => void;
  /** Times the phases of the start (main's counts from the start of the process); default: from this call. */
  startupTimer?: StartupTimer;
}

interface Networks {
  gateways: Record<NetworkName, NetworkGateway>;
  /** The embedded chains' own ERC-4337 stack: addresses, and the loopback bundler and paymaster the proxy forwards to. */
  accountAbstraction: Partial<Record<NetworkName, LocalAccountAbstraction>>;
  /** The service's demo agent per network: configured, or registered on the embedded testnet at first start. */
  demoAgents: Partial<Record<NetworkName, LocalAccount>>;
  demoVerifiers: Partial<Record<NetworkName, DemoVerifierGateway>>;
  demoVerifiersEd25519: Partial<Record<NetworkName, DemoVerifierGateway>>;
}

/** The local paymaster's rolling window for its per-sender limit. */
const SPONSORSHIP_WINDOW_SECONDS = 3600;
/** How often a backfill's progress is logged (blocks done, to go, pace and time left). */
const INDEXING_LOG_MS = 10_000;
/** How often the local paymasters' deposits are read between health checks (a low one is logged). */
const DEPOSIT_CHECK_INTERVAL_MS = 60_000;

interface LocalAccountAbstraction {
  addresses: AccountAbstractionAddresses;
  rpc: AaRpcServer;
}

/** How the local paymasters are run: what they sponsor, and the key the proxy vouches for its clients with. */
interface LocalSponsorship extends AaSponsorshipConfig {
  sponsoreeKey: Uint8Array;
}

/** The local bundler (its executor: the bundler dev account) and paymaster (the service holds its signer) of one embedded chain. */
async function startLocalAccountAbstraction(
  network: NetworkName,
  started: EmbeddedNetwork,
  accounts: DevAccounts,
  store: KeyValueStore,
  sponsorship: LocalSponsorship,
): Promise<LocalAccountAbstraction> {
  const client = createChainClient(network, started.clientOptions);
  const { entryPoint, paymaster, accountFactory, simpleAccountFactory } = started.aa;
  const { chainId } = started.chain;
  const rpc = await startAaRpcServer({
    sponsoreeKey: sponsorship.sponsoreeKey,
    bundler: createLocalBundler({
      client,
      wallet: createChainWallet(network, accounts.bundler, started.clientOptions),
      entryPoint,
      makeDurable: (block) => started.chain.makeDurable(block),
    }),
    paymaster: createLocalPaymaster({
      client,
      paymaster,
      signer: accounts.paymasterSigner,
      entryPoint,
      calls: {
        registry: started.deployment.contracts.registry,
        passkeyFactory: accountFactory,
        simpleAccountFactory,
        allowedTargets: sponsorship.allowedTargets,
      },
      // the per-sender limit and the budgets count on the store: a restart does not reset them
      policy: {
        ledger: storeSponsorshipLedger(store, chainId, SPONSORSHIP_WINDOW_SECONDS * 1000),
        windowSeconds: SPONSORSHIP_WINDOW_SECONDS,
        budgets: sponsorship.budgets,
        budgetLedger: storeBudgetLedger(store, chainId),
      },
    }),
  });
  return { addresses: started.aa, rpc };
}

async function setUpNetworks(
  config: Config,
  logger: Logger,
  devChains: DevChain[],
  metrics: Metrics,
  store: KeyValueStore,
  sponsorship: LocalSponsorship,
  onChainLost: (error: Error) => void,
  timer: StartupTimer,
): Promise<Networks> {
  const embedded = NETWORK_NAMES.filter((n) => config.networks[n].kind === 'embedded');
  const devAccounts = embedded.length > 0 ? loadDevAccounts(config.dataDir) : undefined;
  if (devAccounts?.created) {
    logger.info({ dataDir: config.dataDir }, "generated the local chains' operator, attester and identity-app keys in DATA_DIR");
  }
  const accountAbstraction: Partial<Record<NetworkName, LocalAccountAbstraction>> = {};
  // allSettled, not all: when one chain fails to start, the other must still be known so it can be stopped.
  const results = await Promise.allSettled(
    NETWORK_NAMES.map(async (network): Promise<[NetworkName, NetworkSetup]> => {
      const networkConfig = config.networks[network];
      if (networkConfig.kind === 'external') {
        const { rpcUrl, contracts, registryDeployBlock, wsUrl } = networkConfig;
        return [network, { clientOptions: { rpcUrl }, contracts, registryDeployBlock, embedded: false, ...(wsUrl ? { newHeadsUrl: wsUrl } : {}) }];
      }
      const supervision: EmbeddedOptions['supervision'] = {
        onEvent: (event) => {
          const { level, fields, message } = describeSupervisorEvent(event);
          logger[level]({ network, ...fields }, message);
        },
        onFatal: onChainLost,
      };
      const started = await startEmbeddedNetwork(network, config.dataDir, devAccounts!.accounts, {
        maxAgentsPerHuman: config.maxAgentsPerHuman,
        supervision,
        ...(config.anvilPlatform ? { anvil: { platform: config.anvilPlatform } } : {}),
      });
      devChains.push(started.chain);
      timer.chain(network, { ...started.timings, deployed: started.deployedNow });
      accountAbstraction[network] = await startLocalAccountAbstraction(network, started, devAccounts!.accounts, store, sponsorship);
      logger.info(
        { network, chainId: started.chain.chainId, rpcUrl: started.chain.rpcUrl, deployed: started.deployedNow },
        started.deployedNow ? 'local chain started, contracts deployed' : 'local chain started, contracts reused',
      );
      const { contracts, registryDeployBlock } = started.deployment;
      return [
        network,
        {
          clientOptions: started.clientOptions,
          contracts,
          registryDeployBlock,
          embedded: true,
          localChain: started.chain,
          newHeadsUrl: localWebSocketUrl(started.chain.rpcUrl),
        },
      ];
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(Object.values(accountAbstraction).map((aa) => aa.rpc.close()));
    throw failed.reason;
  }
  const setups = results.map((r) => (r as PromiseFulfilledResult<[NetworkName, NetworkSetup]>).value);
  // Every HTTP round trip to a network's RPC counts in rpc_round_trips_total{network}, and each call it carries in
  // rpc_requests_total{network, method}.
  const counted = (network: NetworkName, setup: NetworkSetup): NetworkSetup => ({
    ...setup,
    clientOptions: { ...setup.clientOptions, onRequest: (methods) => metrics.rpcRequest(network, methods) },
  });
  const gateways = Object.fromEntries(setups.map(([network, setup]) => [network, createNetworkGateway(network, counted(network, setup))])) as Record<
    NetworkName,
    NetworkGateway
  >;
  timer.end('chains');
  const demoAgents: Partial<Record<NetworkName, LocalAccount>> = {};
  for (const [network, key] of Object.entries(config.demoAgentKeys) as [NetworkName, `0x${string}`][]) demoAgents[network] = privateKeyToAccount(key);
  // only the test network's local hub accepts the mock identity app's documents
  if (!demoAgents.testnet && config.networks.testnet.kind === 'embedded' && devAccounts) {
    const setup = setups.find(([network]) => network === 'testnet')?.[1] as NetworkSetup;
    const { account, registeredNow } = await provisionDemoAgent({
      dataDir: config.dataDir,
      network: 'testnet',
      gateway: gateways.testnet,
      wallet: createChainWallet('testnet', devAccounts.accounts.identityApp, setup.clientOptions),
      attester: devAccounts.accounts.attester,
    });
    demoAgents.testnet = account;
    if (registeredNow) logger.info({ network: 'testnet', agent: account.address }, 'registered the demo agent on the local test chain');
  }
  timer.end('demoAgent');
  // the relayer of the demo verifier: the local chains' operator, or the configured key
  const demoVerifiers: Partial<Record<NetworkName, DemoVerifierGateway>> = {};
  const demoVerifiersEd25519: Partial<Record<NetworkName, DemoVerifierGateway>> = {};
  for (const [network, setup] of setups) {
    const relayer = setup.embedded ? devAccounts?.accounts.operator : config.relayerKey ? privateKeyToAccount(config.relayerKey) : undefined;
    if (!relayer) continue;
    const gateway = gateways[network];
    const wallet = createChainWallet(network, relayer, setup.clientOptions);
    demoVerifiers[network] = gateway.demoVerifier.withRelayer(wallet);
    if (gateway.demoVerifierEd25519) demoVerifiersEd25519[network] = gateway.demoVerifierEd25519.withRelayer(wallet);
  }
  return { gateways, accountAbstraction, demoAgents, demoVerifiers, demoVerifiersEd25519 };
}

/** Where the signing key is kept: SIGNING_KEY; else the shared Redis (an earlier DATA_DIR key offered first); else DATA_DIR. */
export function signingKeySource(config: Config): SigningKeySource {
  const file = new SigningKeyFile(join(config.dataDir, SIGNING_KEY_FILE));
  if (config.signingKey.given) return { kind: 'given', jwk: config.signingKey.given };
  return config.redis ? { kind: 'store', offered: () => file.read() } : { kind: 'file', file };
}

/** The address the registry checks Ed25519 signatures with (its "E" action), where it has one. */
async function ed25519VerifierOf(gateway: NetworkGateway): Promise<string | undefined> {
  const verifier = await gateway.client
    .readContract({ address: gateway.contracts.registry, abi: agentRegistryAbi, functionName: 'ed25519Verifier' })
    .catch(() => undefined);
  return verifier && BigInt(verifier) !== 0n ? verifier : undefined;
}

/**
 * The start banner: per network, where its chain is and every contract the service uses there (ours, the ERC-4337
 * stack), then how a program finds them without copying them (discovery, which requireAgent({ service }) reads).
 */
async function describe(url: string, chains: ChainGateway, accountAbstraction: RunningService['accountAbstraction']): Promise<string> {
  const lines = [`Agent identity registry listening on ${url}`];
  for (const gateway of chains.all()) {
    const source = gateway.embedded ? 'local anvil' : 'external RPC';
    const celo = CELO_DEPLOYMENTS[gateway.network].registry === gateway.contracts.registry ? ' (Celo deployment)' : '';
    lines.push(`  ${gateway.network} chain ${gateway.chainId} (${source})${celo}`);
    const rows: [string, string][] = [];
    // an external RPC's URL may hold a key: only its host is shown
    rows.push(['rpc', gateway.localRpcUrl ?? `${new URL(gateway.client.transport.url ?? 'http://unknown').host} (external)`]);
    for (const [name, address] of Object.entries(gateway.contracts)) if (address) rows.push([name, address]);
    const ed25519Verifier = await ed25519VerifierOf(gateway);
    if (ed25519Verifier) rows.push(['ed25519Verifier', `${ed25519Verifier} (the registry's Ed25519 signature check)`]);
    const aa = accountAbstraction[gateway.network];
    if (aa) {
      rows.push(
        ['entryPoint', aa.entryPoint],
        ['accountFactory', `${aa.accountFactory} (passkey accounts)`],
        ['simpleFactory', `${aa.simpleAccountFactory} (SimpleAccount v0.7, implementation ${aa.simpleAccountImplementation})`],
        ['paymaster', aa.paymaster],
        ['bundler', `${url}/api/aa/bundler?chainId=${gateway.chainId} (local bundler and paymaster)`],
      );
    }
    const width = Math.max(...rows.map(([name]) => name.length)) + 1;
    for (const [name, value] of rows) lines.push(`    ${name.padEnd(width)} ${value}`);
  }
  lines.push(
    `  discovery: ${url}${DISCOVERY_PATH} names each network's chain and registry`,
    `  verify agents in your service: requireAgent({ service: '${url}', network: 'testnet' })`,
    `  register one from a terminal: npx agent-identity-registry register --network testnet --url ${url}`,
  );
  return lines.join('\n');
}

export async function startService(config: Config, logger: Logger, hooks: ServiceHooks = {}): Promise<RunningService> {
  const timer = hooks.startupTimer ?? new StartupTimer();
  const devChains: DevChain[] = [];
  // the owner's alone (0700, files 0600), tightened with a warning if a copy or an older version left it looser
  secureDataDir(config.dataDir, (message) => logger.warn(message));
  // REDIS_URL: the store several instances share (one that does not answer stops the start); else the sqlite file
  const store: KeyValueStore = config.redis
    ? await RedisStore.connect({
        ...config.redis,
        onConnection: (event) =>
          event.state === 'lost'
            ? logger.error({ reason: event.reason }, 'redis connection lost: store calls answer 503 until it is back')
            : logger.info('redis connection back'),
      })
    : new SqliteStore(join(config.dataDir, 'store.sqlite'));
  // the instances sharing that Redis tell each other of session changes on it; alone, in-process
  const events: EventBus = config.redis
    ? new RedisEventBus({ ...config.redis, onError: (err) => logger.warn({ err }, 'redis events connection failed: watches fall back to polling') })
    : new InProcessEventBus();
  // generated secrets: in the shared store when there is one (every instance must hold the same), else in DATA_DIR
  const keptSecret = (secret: KeptSecret, value: string | undefined): Promise<Uint8Array> => {
    const source = { ...(value !== undefined ? { value } : {}), dataDir: config.dataDir, log: (message: string) => logger.info(message) };
    return config.redis ? loadSharedSecret(secret, { ...source, store }) : Promise.resolve(loadKeptSecret(secret, source));
  };
  let localAccountAbstraction: LocalAccountAbstraction[] = [];
  const stopChains = async (): Promise<void> => {
    await Promise.all(localAccountAbstraction.map((aa) => aa.rpc.close()));
    await Promise.all(devChains.map((chain) => chain.stop()));
  };
  const metrics = new Metrics({ defaultMetrics: true });
  // in memory only: whoever holds it can tell the local paymasters which client asks
  const sponsorship: LocalSponsorship = { ...config.aaSponsorship, sponsoreeKey: randomBytes(32) };
  metrics.observeStore(store);
  try {
    const sessionSecret = await keptSecret(SESSION_SECRET, config.sessionSecret);
    const signingKeys = new ServiceSigningKeys({
      store,
      source: signingKeySource(config),
      alg: config.signingKey.alg,
      retireAfterMs: config.signingKey.retireAfterMs,
      log: (message) => logger.info(message),
      onRefreshError: (err) => logger.warn({ err }, 'could not read the signing keys from the store: signing with the ones read last'),
    });
    // made (or read and checked) now: a first start generates the key, a bad key file stops the start
    await signingKeys.current();
    timer.end('dataDir');
    const { gateways, accountAbstraction, demoAgents, demoVerifiers, demoVerifiersEd25519 } = await setUpNetworks(
      config,
      logger,
      devChains,
      metrics,
      store,
      sponsorship,
      hooks.onChainLost ?? ((err) => logger.fatal({ err }, 'a local chain stopped and could not be restarted')),
      timer,
    );
    localAccountAbstraction = Object.values(accountAbstraction);
    const chains = new ChainGateway(gateways);
    // No session may claim what a local chain does not hold (a state lost or restored): checked before serving.
    const reconciled = await new SessionReconciliation({
      chains,
      sessions: new SessionRepository(store, Date.now, { bus: events }),
      clock: Date.now,
      onError: (session, err) => logger.warn({ session, err }, 'could not check a session against the chain'),
    }).run();
    if (reconciled.length > 0) logger.warn({ sessions: reconciled }, 'sessions claimed what the chain does not hold: reopened or failed');
    timer.end('sessions');
    // Listen before building the services: with PORT=0 the links they hand out need the bound port.
    // requests and responses are built with the app's prototypes once it is made (express-messages.ts)
    const messages = new ExpressMessages();
    const server = createLimitedServer(config.http, messages);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = config.port === 0 ? config.publicUrl.replace(/:0$/, `:${port}`) : config.publicUrl;
    timer.end('listen');
    // the same after a restart, another for each instance (its own DATA_DIR or host): it takes its own watches back
    const instanceId = createHash('sha256')
      .update(`${hostname()}\n${resolve(config.dataDir)}`)
      .digest('hex')
      .slice(0, 16);
    const services = createServices({
      chains,
      store,
      events,
      onEventError: (err) => logger.warn({ err }, 'could not publish a session change to the other instances'),
      instanceId,
      sessionSecret,
      signingKeys,
      publicUrl: url,
      signatureAuthorities: config.signatureAuthorities,
      ...(config.humanQuota ? { humanQuota: config.humanQuota } : {}),
      deepLinkScheme: config.deepLinkScheme,
      appName: config.appName,
      metrics,
      ...(config.reportedTxTimeoutMs !== undefined ? { reportedTxTimeoutMs: config.reportedTxTimeoutMs } : {}),
      onFollowerError: (network, err) => logger.warn({ network, err }, 'registry index: a poll, a stored write or the move to disk failed'),
      agentCacheSize: config.agentCacheEntries,
      maxLogRange: config.registryIndex.maxLogRange,
      indexLeaseMs: config.registryIndex.leaseMs,
      streamLimits: config.streams,
      demoAgents,
      demoVerifiers,
      demoVerifiersEd25519,
      chatAgent: intentChatAgent,
      ...(config.chatAgentUrl ? { chatAgentUrl: config.chatAgentUrl } : {}),
      agentMessages: config.agentMessages,
      chatHistory: config.chatHistory,
      accountAbstraction: Object.fromEntries(
        NETWORK_NAMES.flatMap((network) => {
          const local = accountAbstraction[network]?.addresses;
          if (local) return [[network, local]];
          // a configured provider: the canonical EntryPoint; its factory and paymaster are the provider's
          return config.aaProxy.upstreams[network]?.bundlerUrl ? [[network, { entryPoint: ENTRY_POINT_V07 }]] : [];
        }),
      ),
      paymasterLowDeposit: config.aaSponsorship.lowDeposit,
      onLowPaymasterDeposit: ({ network, deposit, threshold }) =>
        logger.warn(
          { network, deposit: formatEther(deposit), threshold: formatEther(threshold) },
          "the local paymaster's deposit is low: sponsored operations stop when it runs out (a restart tops it up)",
        ),
      aa: {
        ...config.aaProxy,
        tokenSecret: await keptSecret(PROXY_TOKEN_SECRET, config.aaProxy.tokenSecret),
        // a configured provider wins; an embedded chain without one uses its own local bundler and paymaster, and
        // only that paymaster is told who asks
        upstreams: Object.fromEntries(
          NETWORK_NAMES.map((network) => {
            const local = accountAbstraction[network]?.rpc;
            const configured = config.aaProxy.upstreams[network] ?? {};
            const localPaymaster =
              local && !configured.paymasterUrl ? { paymasterUrl: local.paymasterUrl, sponsoreeKey: sponsorship.sponsoreeKey } : {};
            return [network, { ...(local ? { bundlerUrl: local.bundlerUrl } : {}), ...localPaymaster, ...configured }];
          }),
        ),
        onUpstreamError: (failure) => logger.warn(failure, 'AA proxy upstream failed'),
      },
    });
    // Catching up with past registry logs (on Celo, back to the deploy block) must not delay listening:
    // until it is done, answers bypass the cache.
    // A first start against a public RPC reads the registry's history: how far it is, every INDEXING_LOG_MS
    const indexingLog = setInterval(() => {
      for (const [network, progress] of Object.entries(services.queries.indexing())) logger.info({ network, ...progress }, 'indexing the registry');
    }, INDEXING_LOG_MS).unref();
    const indexingFrom = performance.now();
    void services.queries
      .start()
      .then(() => logger.info({ ms: Math.round(performance.now() - indexingFrom) }, 'registry index live'))
      .catch((err: unknown) => logger.error({ err }, 'registry log followers failed to start'))
      .finally(() => clearInterval(indexingLog));
    services.paymasterDeposits.start(DEPOSIT_CHECK_INTERVAL_MS);
    const a2a = createA2aAgent(services, {
      publicUrl: url,
      version,
      store,
      events,
      secret: sessionSecret,
      pushPolicy: { allowPrivateNetworks: config.pushAllowPrivateNetworks },
      streamKeepAliveMs: config.streamKeepAliveMs,
      taskLifetimes: config.a2aTasks,
      logger,
    });
    const { port: metricsPort, host: metricsHost, ...metricsAccess } = config.metrics;
    const metricsEndpoint = metricsPort === undefined ? metricsAccess : false;
    const exposed = metricsExposure(config);
    if (exposed) logger.warn({ host: exposed.host }, exposed.message);
    const mcp = createMcpEndpoint({ services, store, events, instanceId, publicUrl: url, version, logger, a2aSkills: skills() });
    const app = createApp({ chains, services, logger, version, metrics, publicUrl: url, a2a, mcp: mcp.mount, metricsEndpoint });
    messages.adopt(app);
    // exact repeats of cacheable reads are answered in front of express, until the services announce a change
    const responses = new ResponseCache({ maxEntries: config.responseCacheEntries, metrics, logger });
    services.queries.onChange((key) => responses.drop(key));
    server.on('request', responses.front(app));
    const metricsServer: MetricsServer | undefined =
      metricsPort === undefined ? undefined : await startMetricsServer(metrics, { ...metricsAccess, port: metricsPort, host: metricsHost });
    timer.end('app');
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        // tools that follow a session answer with where it stands while their connections are still open
        await mcp.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await metricsServer?.close();
        // open sessions are no longer followed (another instance may take them over); push notifications under
        // way get a moment to leave
        a2a.close();
        services.watcher.stopAll();
        services.paymasterDeposits.stop();
        services.cardSigner.stop();
        await Promise.race([a2a.idle(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
        await services.queries.stop();
        await stopChains();
        await events.close();
        await store.close();
      })();
      return stopping;
    };
    const aaSummary = Object.fromEntries(
      Object.entries(accountAbstraction).map(([network, aa]) => [
        network,
        { ...aa.addresses, bundlerUrl: aa.rpc.bundlerUrl, paymasterUrl: aa.rpc.paymasterUrl },
      ]),
    );
    return {
      server,
      url,
      chains,
      devChains,
      accountAbstraction: aaSummary,
      ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
      startup: timer.summary(),
      stop,
    };
  } catch (error) {
    await stopChains();
    await events.close();
    await store.close();
    throw error;
  }
}

async function main(): Promise<void> {
  // from the start of the process: Node's own start and the imports are the first phase
  const timer = new StartupTimer(0);
  timer.end('imports');
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  timer.end('config');
  let running: RunningService | undefined;
  const service = await startService(config, logger, {
    // exit non-zero, so that whatever supervises the service starts it afresh
    onChainLost: (err) => {
      logger.fatal({ err }, 'a local chain stopped and could not be restarted');
      if (running) shutdown('local chain lost', 1);
      else process.exit(1);
    },
    startupTimer: timer,
  });
  running = service;
  console.log(await describe(service.url, service.chains, service.accountAbstraction));
  if (service.metricsUrl) console.log(`  metrics on ${service.metricsUrl}`);
  logger.info({ startup: service.startup }, `started in ${Math.round(service.startup.totalMs)} ms`);
  // the start's lines (chains, addresses) are wanted now, not when the log's first batch fills
  logger.flush();
  // from here on, console output (the A2A SDK's) goes through the logger
  routeConsoleTo(logger, { isCallerError: isA2aCallerError });

  const shutdown = (reason: string, code: number) => {
    logger.info({ reason }, 'shutting down');
    // the log lines queued on the asynchronous destination are written before the process ends
    void service
      .stop()
      .finally(() => flushLogger(logger))
      .finally(() => process.exit(code));
  };
  // Ctrl-C (to the whole foreground group), a stop, a closed terminal: the chains, in sessions of their own, hear
  // none of these; they are stopped by stop(), after their state is written
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => shutdown(signal, 0));
  process.once('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    shutdown('uncaught exception', 1);
  });
  process.once('unhandledRejection', (error) => {
    logger.fatal({ err: error }, 'unhandled rejection');
    shutdown('unhandled rejection', 1);
  });
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
