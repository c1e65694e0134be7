// The service's app over both test networks for the public-query tests: the gateways count every RPC round
// trip (as main.ts counts them into Metrics), the registry log followers are started and stopped by the test,
// and the human's deregistration and refresh are played through the identity app.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Abi, Address, Hex } from 'viem';
import { expect } from 'vitest';
import { type A2aAgent, createA2aAgent } from '../../src/a2a/agent.js';
import { ChainGateway, createNetworkGateway } from '../../src/chain/gateway.js';
import type { ConfigIndex } from '../../src/core/disclosures.js';
import type { NetworkName } from '../../src/core/networks.js';
import { advancedDeregisterUserData, refreshUserData } from '../../src/core/user-data.js';
import { type AppTuning, createApp } from '../../src/http/app.js';
import type { RequestedDisclosures } from '../../src/identity-app/index.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services/index.js';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { expectSubmitted, submitProof } from './agents.js';
import { LOCAL, type TestSystem } from './chain.js';
import type { TestNetworks } from './registration-flow.js';
import { readSharedJson } from './shared.js';

/** The A2A v0.3.0 JSON Schema, in the shared folder. */
export const A2A_SCHEMA = 'data/a2a/a2a-v0.3.0.schema.json';

/** A validator of the schema's AgentCard definition (draft-07, as the A2A project publishes it). */
export function a2aCardValidator(): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(readSharedJson<object>(A2A_SCHEMA), 'a2a');
  const validate = ajv.getSchema('a2a#/definitions/AgentCard');
  if (!validate) throw new Error('the A2A schema has no AgentCard definition');
  return validate;
}

export interface QueryTestApp {
  app: Express;
  services: Services;
  metrics: Metrics;
  /** RPC round trips (HTTP requests to the node) per network since the last reset. */
  rpc: Record<NetworkName, number>;
  resetRpc(): void;
  /** Cache lookups counted in Metrics: {hit, miss} of one cache. */
  cacheLookups(cache: string): Promise<{ hit: number; miss: number }>;
  /** The A2A agent, when asked for (its card is mounted). */
  a2a?: A2aAgent;
  stop(): Promise<void>;
}

export interface QueryTestAppOptions {
  /** Log polling interval; default the service's (200 ms on these embedded chains). */
  eventPollIntervalMs?: number;
  publicUrl?: string;
  /** Start the log followers (default true). */
  start?: boolean;
  /** Default: a new in-memory store. */
  store?: KeyValueStore;
  demoAgents?: ServiceOptions['demoAgents'];
  demoVerifiers?: ServiceOptions['demoVerifiers'];
  demoVerifiersEd25519?: ServiceOptions['demoVerifiersEd25519'];
  /** Mount the A2A agent too (its card, JSON-RPC). */
  a2a?: boolean;
  /** Most blocks per eth_getLogs (default the service's). */
  maxLogRange?: bigint;
  /** This instance, as the stored index's writer lease names it. */
  instanceId?: string;
  indexLeaseMs?: number;
  indexDatabase?: ServiceOptions['indexDatabase'];
  /** Agents each network's cache holds (default the service's). */
  agentCacheSize?: number;
  /** Where the app logs; default: silent. */
  logger?: Logger;
  /** Routes added to the table (and parts of the stack left out). */
  tuning?: AppTuning;
}

export async function queryTestApp(networks: TestNetworks, options: QueryTestAppOptions = {}): Promise<QueryTestApp> {
  const metrics = new Metrics();
  const rpc: Record<NetworkName, number> = { mainnet: 0, testnet: 0 };
  const counted = (system: TestSystem) =>
    createNetworkGateway(system.network, {
      clientOptions: {
        rpcUrl: system.rpcUrl,
        ...LOCAL,
        onRequest: (methods) => {
          rpc[system.network]++;
          metrics.rpcRequest(system.network, methods);
        },
      },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    });
  const chains = new ChainGateway({ mainnet: counted(networks.mainnet), testnet: counted(networks.testnet) });
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:3000';
  const store = options.store ?? new MemoryStore();
  const sessionSecret = randomBytes(32);
  const services = createServices({
    chains,
    store,
    sessionSecret,
    publicUrl,
    deepLinkScheme: 'selfapp',
    appName: 'Agent Identity Registry',
    metrics,
    ...(options.eventPollIntervalMs !== undefined ? { eventPollIntervalMs: options.eventPollIntervalMs } : {}),
    ...(options.maxLogRange !== undefined ? { maxLogRange: options.maxLogRange } : {}),
    ...(options.instanceId !== undefined ? { instanceId: options.instanceId } : {}),
    ...(options.indexLeaseMs !== undefined ? { indexLeaseMs: options.indexLeaseMs } : {}),
    ...(options.indexDatabase ? { indexDatabase: options.indexDatabase } : {}),
    ...(options.agentCacheSize !== undefined ? { agentCacheSize: options.agentCacheSize } : {}),
    ...(options.demoAgents ? { demoAgents: options.demoAgents } : {}),
    ...(options.demoVerifiers ? { demoVerifiers: options.demoVerifiers } : {}),
    ...(options.demoVerifiersEd25519 ? { demoVerifiersEd25519: options.demoVerifiersEd25519 } : {}),
  });
  const logger = options.logger ?? createLogger('silent');
  const a2a = options.a2a
    ? createA2aAgent(services, {
        publicUrl,
        version: '0.0.0-test',
        store,
        secret: sessionSecret,
        pushPolicy: { allowPrivateNetworks: false },
        logger,
      })
    : undefined;
  const app = createApp({ chains, services, logger, version: '0.0.0-test', metrics, publicUrl, ...(a2a ? { a2a } : {}) }, options.tuning);
  if (options.start !== false) await services.queries.start();
  return {
    app,
    services,
    metrics,
    rpc,
    resetRpc: () => {
      rpc.mainnet = 0;
      rpc.testnet = 0;
    },
    cacheLookups: async (cache) => {
      const values = (await metrics.cacheLookups.get()).values;
      const count = (result: string) => values.find((v) => v.labels.cache === cache && v.labels.result === result)?.value ?? 0;
      return { hit: count('hit'), miss: count('miss') };
    },
    ...(a2a ? { a2a } : {}),
    stop: async () => {
      a2a?.close();
      await services.queries.stop();
    },
  };
}

/** The human deregisters the agent in the identity app (X action), proving with the document it registered with. */
export async function deregisterByProof(
  system: TestSystem,
  args: { human: Address; agent: Address; configIndex?: ConfigIndex; disclosures?: Partial<RequestedDisclosures> },
): Promise<Hex> {
  const result = await submitProof(system, {
    userId: args.human,
    userDefinedData: advancedDeregisterUserData({ configIndex: args.configIndex ?? 0, agent: args.agent }),
    ...(args.disclosures ? { disclosures: args.disclosures } : {}),
  });
  expectSubmitted(result);
  return result.txHash;
}

/** The human refreshes the agent's proof in the identity app (F action), with the same config it registered with. */
export async function refreshByProof(
  system: TestSystem,
  args: { human: Address; agentId: bigint; configIndex?: ConfigIndex; disclosures?: Partial<RequestedDisclosures> },
): Promise<Hex> {
  const result = await submitProof(system, {
    userId: args.human,
    userDefinedData: refreshUserData({ configIndex: args.configIndex ?? 0, agentId: args.agentId }),
    ...(args.disclosures ? { disclosures: args.disclosures } : {}),
  });
  expectSubmitted(result);
  return result.txHash;
}

/** Polls `read` every 20 ms until `done` holds or `timeoutMs` passes; returns the last value and the time it took. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    const elapsedMs = Date.now() - started;
    if (done(value) || elapsedMs > timeoutMs) return { value, elapsedMs };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const require = createRequire(import.meta.url);

/**
 * A stand-in external proof provider with a given name and strength (compiled here with solc): it accepts any
 * proof and derives the nullifier from it. Only for tests of the strength labels and of non-self providers.
 */
let providerArtifact: { abi: Abi; bytecode: Hex } | undefined;

/** Compiles one test-only contract from source with solc (cancun, like the service's own contracts). */
export function compileTestContract(name: string, source: string): { abi: Abi; bytecode: Hex } {
  const solc = require('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { [`${name}.sol`]: { content: `// SPDX-License-Identifier: MIT\npragma solidity ^0.8.28;\n${source}` } },
        settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as {
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
    errors?: { severity: string; formattedMessage: string }[];
  };
  expect((output.errors ?? []).filter((e) => e.severity === 'error').map((e) => e.formattedMessage)).toEqual([]);
  const contract = output.contracts[`${name}.sol`]![name]!;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

export function testProviderArtifact(): { abi: Abi; bytecode: Hex } {
  providerArtifact ??= compileTestContract(
    'TestProofProvider',
    `contract TestProofProvider {
    string public providerName;
    uint8 public immutable verificationStrength;
    constructor(string memory name_, uint8 strength_) { providerName = name_; verificationStrength = strength_; }
    function verifyHumanProof(bytes calldata proof, bytes calldata) external pure returns (bool, uint256) {
        return (true, uint256(keccak256(proof)));
    }
}`,
  );
  return providerArtifact;
}
