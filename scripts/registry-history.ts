// A registry with a history, made through its real entry point, and the service started against it as an external
// RPC: what bench:history measures and what the kill -9 tests of the stored index interrupt.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, encodeFunctionData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type ChainClient, createChainClient } from '../src/chain/clients.js';
import { agentRegistryAbi } from '../src/contracts/artifacts/index.js';
import { linkedRegistrationData } from '../src/core/registration-data.js';
import { advancedDeregisterUserData } from '../src/core/user-data.js';
import { attestedProof, type ProofContext, proofContext, verifySelfProofAbi } from '../src/identity-app/index.js';
import type { LocalSystem } from './local-system.js';

const RELAYERS = 8;
const GAS_PER_PROOF = 2_000_000n;

/** Per chain, a client for the calls that drive it (mining blocks full of proofs), patient with a loaded machine. */
const drivers = new WeakMap<LocalSystem, ChainClient>();

/** Reads and writes of the chain the caller drives (not the service's: those are counted by its own metrics). */
export async function rpc(system: LocalSystem, method: string, params: unknown[] = []): Promise<unknown> {
  let driver = drivers.get(system);
  if (!driver) {
    driver = createChainClient(system.network, { ...system.local, timeoutMs: 60_000 });
    drivers.set(system, driver);
  }
  return driver.request({ method: method as never, params: params as never });
}

export interface Population {
  agents: { agentId: bigint; human: Address }[];
  /** The humans with ten agents each: ten, or a hundred from 10,000 agents. */
  busyHumans: Address[];
  /** Agents deregistered by their human (burned). */
  deregistered: bigint[];
  blocks: number;
}

export interface PopulateOptions {
  /** Registrations mined in one block; default 200. */
  perBlock?: number;
  /** Empty blocks mined after each block of registrations (a longer history to backfill); default 0. */
  gapBlocks?: number;
}

/**
 * Registers `n` agents on a fresh registry through verifySelfProof (the mock identity app's attested proofs, as the
 * relayer submits them), perBlock to a block: ten humans (a hundred from 10,000 agents) hold ten agents each, every
 * other agent has a human of its own; then one agent in a hundred (never a busy human's) is deregistered by its human's proof.
 */
export async function populate(system: LocalSystem, n: number, options: PopulateOptions = {}): Promise<Population> {
  const perBlock = options.perBlock ?? 200;
  const gapBlocks = options.gapBlocks ?? 0;
  const registry = system.deployment.contracts.registry;
  await system.operator.writeContract({ address: registry, abi: agentRegistryAbi, functionName: 'setMaxAgentsPerHuman', args: [0n] });
  const chainId = await system.client.getChainId();
  const context: ProofContext = await proofContext(system.client, registry);
  const relayers = await Promise.all(Array.from({ length: RELAYERS }, () => system.newWallet()));
  const nonces = await Promise.all(relayers.map((r) => system.client.getTransactionCount({ address: r.account.address })));
  const gasPrice = await system.client.getGasPrice();
  await rpc(system, 'evm_setBlockGasLimit', [`0x${(GAS_PER_PROOF * BigInt(perBlock) * 2n).toString(16)}`]);
  await rpc(system, 'evm_setAutomine', [false]);

  // from 10,000 agents, a hundred busy humans: a cold by-human p99 over a hundred answers rather than the slowest of ten
  const busy = n >= 10_000 ? 100 : 10;
  const busyHumans = Array.from({ length: busy }, () => privateKeyToAccount(generatePrivateKey()).address);
  const humanOf = (i: number): Address => (i < busy * 10 ? (busyHumans[i % busy] as Address) : privateKeyToAccount(generatePrivateKey()).address);
  let sent = 0;
  let blocks = 0;
  const mine = async (): Promise<void> => {
    await rpc(system, 'evm_mine');
    blocks++;
    // in short calls: one long anvil_mine may outlast the client's timeout on a loaded machine
    for (let left = gapBlocks; left > 0; left -= 25) {
      const count = Math.min(left, 25);
      await rpc(system, 'anvil_mine', [`0x${count.toString(16)}`]);
      blocks += count;
    }
  };
  const submit = async (userId: Address, userDefinedData: string): Promise<void> => {
    const { args } = await attestedProof(
      {
        attester: system.attester,
        request: { registry, chainId, scopeSeed: 'self-agent-id', userId, userDefinedData, disclosures: { minimumAge: 0, ofac: false } },
      },
      context,
    );
    const relayer = sent % RELAYERS;
    const wallet = relayers[relayer]!;
    const data = encodeFunctionData({ abi: verifySelfProofAbi, functionName: 'verifySelfProof', args });
    const signed = await wallet.account.signTransaction!({
      to: registry,
      data,
      gas: GAS_PER_PROOF,
      gasPrice,
      nonce: nonces[relayer]!++,
      chainId,
      type: 'legacy',
    });
    await rpc(system, 'eth_sendRawTransaction', [signed]);
    if (++sent % perBlock === 0) await mine();
  };

  const registered: { agent: Address; human: Address }[] = [];
  for (let i = 0; i < n; i++) {
    const agent = privateKeyToAccount(generatePrivateKey());
    const human = humanOf(i);
    // a new agent key's registration nonce is 0
    await submit(human, await linkedRegistrationData(agent, human, { chainId, registry, nonce: 0n, configIndex: 0 }));
    registered.push({ agent: agent.address, human });
  }
  if (sent % perBlock !== 0) await mine();
  const leaving = registered.map((r, i) => ({ ...r, agentId: BigInt(i + 1) })).filter((_, i) => i >= busy * 10 && i % 100 === 0);
  for (const { agent, human } of leaving) await submit(human, advancedDeregisterUserData({ configIndex: 0, agent }));
  if (sent % perBlock !== 0) await mine();
  await rpc(system, 'evm_setAutomine', [true]);

  // the last agent's NFT exists, and a deregistered one's is burned: every proof went through
  await system.client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'ownerOf', args: [BigInt(n)] });
  for (const { agentId } of leaving.slice(0, 1)) {
    const burned = await system.client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'ownerOf', args: [agentId] }).then(
      () => false,
      () => true,
    );
    if (!burned) throw new Error('a deregistration did not go through');
  }
  const agents = registered.map((r, i) => ({ agentId: BigInt(i + 1), human: r.human }));
  return { agents, busyHumans, deregistered: leaving.map((l) => l.agentId), blocks };
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });

/** The environment of `node dist/main.js` on `dataDir` and `port`, attached to the local chains as external RPCs. */
export function serviceEnv(chains: { testnet: LocalSystem; mainnet: LocalSystem }, dataDir: string, port: number): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  for (const [network, system] of Object.entries(chains)) {
    const prefix = network.toUpperCase();
    const c = system.deployment.contracts;
    Object.assign(env, {
      [`${prefix}_RPC_URL`]: system.chain.rpcUrl,
      [`${prefix}_REGISTRY_ADDRESS`]: c.registry,
      [`${prefix}_PROOF_PROVIDER_ADDRESS`]: c.proofProvider,
      [`${prefix}_HUB_ADDRESS`]: c.hub,
      [`${prefix}_DEMO_VERIFIER_ADDRESS`]: c.demoVerifier,
      [`${prefix}_MULTICALL_ADDRESS`]: c.multicall,
      [`${prefix}_REGISTRY_DEPLOY_BLOCK`]: String(system.deployment.registryDeployBlock),
      ...(c.demoVerifierEd25519 ? { [`${prefix}_DEMO_VERIFIER_ED25519_ADDRESS`]: c.demoVerifierEd25519 } : {}),
    });
  }
  return env;
}

export const tempDataDir = (): string => mkdtempSync(join(tmpdir(), 'registry-history-'));

/** The sum of a metric's samples in the exposition text, over the label sets that have every one of `labels`. */
export async function metricTotal(base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => wanted.every((label) => line.includes(label)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
