// The chain layer as the services see it: one entry per network with its client and registry reads.
import type { Address } from 'viem';
import { chainIdOf, NETWORK_NAMES, type NetworkName } from '../core/networks.js';
import { readBlockTimestamp } from './actions/blocks.js';
import { BACKFILL_TOPICS } from './actions/registry-logs.js';
import { AgentLens } from './agent-lens.js';
import type { ContractAddresses } from './celo-deployments.js';
import { type ChainClient, type ClientOptions, createChainClient } from './clients.js';
import { DemoVerifierGateway } from './demo-verifier-gateway.js';
import { type LogSource, nodeSubscriptions } from './new-heads.js';
import type { ChainRunState } from './reachability.js';
import { type FollowerOptions, type LogReader, RegistryEventFollower } from './registry-events.js';
import { RegistryGateway } from './registry-gateway.js';

export interface NetworkGateway {
  network: NetworkName;
  chainId: number;
  client: ChainClient;
  registry: RegistryGateway;
  /** One-call reads of an agent's whole public state (a deployless eth_call). */
  lens: AgentLens;
  /** The demo verifier contracts, read-only (a relayer is added by whoever pays for transactions); Celo has no Ed25519 one. */
  demoVerifier: DemoVerifierGateway;
  demoVerifierEd25519: DemoVerifierGateway | null;
  contracts: ContractAddresses;
  registryDeployBlock: bigint;
  /** True for a chain the service runs itself (anvil), false for Celo or another external node. */
  embedded: boolean;
  /** The RPC of a chain the service runs itself, which discovery names (an external RPC's URL may hold a key: never). */
  localRpcUrl?: string;
  /**
   * A follower of the registry's logs from its deploy block (not started). After a restart of the local chain that
   * lost blocks it had delivered, it starts over (its onRewind listeners drop what they built).
   */
  followRegistry(options: FollowerOptions): RegistryEventFollower;
  /**
   * The registry's logs as the node's WebSocket announces them (newHeadsUrl), ahead of the follower's round trips;
   * absent without a WebSocket. Only a wake-up: what they change is read from the chain or the follower.
   */
  registryLogs?: LogSource;
  /**
   * Resolves once block `block` (default: everything the chain holds now) survives a hard kill of the service: at
   * once for an external chain, after the local chain's state is written for an embedded one. Call it before
   * reporting what a block holds (a transaction, a receipt, a completed session).
   */
  makeDurable(block?: bigint): Promise<void>;
  /** Unix time of a block. */
  blockTimestamp(blockNumber: bigint): Promise<number>;
  /** True while the service's own chain for this network is being restarted. */
  restarting(): boolean;
}

export interface NetworkHealth {
  network: NetworkName;
  chainId: number;
  up: boolean;
  blockNumber: number | null;
  registry: Address;
  rpc: 'embedded' | 'external';
  /** An embedded chain that stopped and is being restarted from its saved state. */
  restarting?: boolean;
  error?: string;
}

/** What the gateway needs of the supervisor of an embedded chain (devnet/supervisor.ts). */
export interface LocalChainControl extends ChainRunState {
  makeDurable(block?: bigint): Promise<void>;
  /** Calls the listener with the chain's head after each restart from the state file. */
  onRestart(listener: (head: bigint) => void): () => void;
}

export interface NetworkSetup {
  clientOptions: ClientOptions;
  contracts: ContractAddresses;
  registryDeployBlock: bigint;
  embedded: boolean;
  /** The supervisor of the chain, when the service runs it. */
  localChain?: LocalChainControl;
  /**
   * The node's WebSocket: the log follower polls at each new block it announces, and session watches wake at the
   * registry's logs (polling stays the fallback).
   */
  newHeadsUrl?: string;
}

/** The log follower polls in the background: it may wait longer for a large eth_getLogs range than a request may. */
const FOLLOWER_TIMEOUT_MS = 10_000;

export function createNetworkGateway(network: NetworkName, setup: NetworkSetup): NetworkGateway {
  const { localChain } = setup;
  const clientOptions = { ...setup.clientOptions, multicall: setup.contracts.multicall, ...(localChain ? { runState: localChain } : {}) };
  const client = createChainClient(network, clientOptions);
  // Its own client: a slow log range must not make the request path fail fast, and it needs no fail-fast of its own.
  const followerOptions = { ...clientOptions, timeoutMs: Math.max(clientOptions.timeoutMs ?? 0, FOLLOWER_TIMEOUT_MS), failFastMs: 0 };
  const followerClient = createChainClient(network, followerOptions);
  // and one for its eth_getLogs, unbatched, whose answers are told to it (registry-events.ts logReader)
  const logAnswers = new Set<() => void>();
  const logReader: LogReader = {
    client: createChainClient(network, {
      ...followerOptions,
      batch: false,
      onAnswer: (methods) => {
        if (methods.includes('eth_getLogs')) for (const listener of logAnswers) listener();
      },
    }),
    answers: (listener) => {
      logAnswers.add(listener);
      return () => logAnswers.delete(listener);
    },
  };
  const socket = setup.newHeadsUrl ? nodeSubscriptions(network, setup.newHeadsUrl) : undefined;
  const heads = socket?.heads;
  return {
    network,
    chainId: chainIdOf(network),
    client,
    registry: new RegistryGateway(client, setup.contracts.registry),
    lens: new AgentLens(client, setup.contracts.registry),
    demoVerifier: new DemoVerifierGateway(client, setup.contracts.demoVerifier),
    demoVerifierEd25519: setup.contracts.demoVerifierEd25519
      ? new DemoVerifierGateway(client, setup.contracts.demoVerifierEd25519, undefined, 'ed25519')
      : null,
    contracts: setup.contracts,
    registryDeployBlock: setup.registryDeployBlock,
    embedded: setup.embedded,
    ...(setup.embedded ? { localRpcUrl: setup.clientOptions.rpcUrl } : {}),
    followRegistry: (options) => {
      const chainDown = localChain ? { chainDown: () => localChain.downReason() !== undefined } : {};
      const follower = new RegistryEventFollower(followerClient, setup.contracts.registry, setup.registryDeployBlock, {
        backfillTopics: BACKFILL_TOPICS,
        logReader,
        ...options,
        ...chainDown,
        ...(heads ? { heads } : {}),
      });
      localChain?.onRestart((head) => void follower.rewind(head));
      return follower;
    },
    ...(socket ? { registryLogs: socket.logs(setup.contracts.registry) } : {}),
    makeDurable: (block) => localChain?.makeDurable(block) ?? Promise.resolve(),
    blockTimestamp: (blockNumber) => readBlockTimestamp(client, { blockNumber }),
    restarting: () => localChain?.downReason() !== undefined,
  };
}

const HEALTH_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class ChainGateway {
  constructor(private readonly networks: Record<NetworkName, NetworkGateway>) {}

  /** The gateway of a network. */
  get(network: NetworkName): NetworkGateway {
    return this.networks[network];
  }

  all(): NetworkGateway[] {
    return NETWORK_NAMES.map((name) => this.networks[name]);
  }

  /** Asks each chain for its id and latest block; a chain that fails or answers wrongly is reported down. */
  health(): Promise<NetworkHealth[]> {
    return Promise.all(
      this.all().map(async (gateway): Promise<NetworkHealth> => {
        const base = {
          network: gateway.network,
          chainId: gateway.chainId,
          registry: gateway.contracts.registry,
          rpc: gateway.embedded ? 'embedded' : 'external',
        } as const;
        try {
          const [chainId, blockNumber] = await withTimeout(
            Promise.all([gateway.client.getChainId(), gateway.client.getBlockNumber({ cacheTime: 0 })]),
            HEALTH_TIMEOUT_MS,
          );
          if (chainId !== gateway.chainId) {
            return { ...base, up: false, blockNumber: null, error: `RPC answers for chain ${chainId}` };
          }
          return { ...base, up: true, blockNumber: Number(blockNumber) };
        } catch (error) {
          const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
          // asked after the calls: the chain may have stopped while they were under way
          const restarting = gateway.restarting() ? { restarting: true } : {};
          return { ...base, ...restarting, up: false, blockNumber: null, error: message ?? 'unreachable' };
        }
      }),
    );
  }
}
