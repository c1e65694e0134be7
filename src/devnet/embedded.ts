// The embedded default for one network: an anvil with the network's chain id, supervised (restarted if it dies, its
// state written to DATA_DIR after every block: supervisor.ts), our contracts deployed on first start and reused
// after a restart.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Address, type Hex, type PrivateKeyAccount, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type ChainClient, type ChainWallet, type ClientOptions, createChainClient, createChainWallet } from '../chain/clients.js';
import { agentRegistryAbi } from '../contracts/artifacts/index.js';
import { chainIdOf, type NetworkName } from '../core/networks.js';
import { type AccountAbstractionAddresses, deployAccountAbstraction } from './aa/deploy-aa.js';
import { contractsFingerprint, type Deployment, deployContracts } from './deploy.js';
import { ChainSupervisor, type SupervisorOptions } from './supervisor.js';

/** Keys of the local chains' own accounts (never agent keys). */
export interface DevAccounts {
  /** Deploys our contracts and holds their roles; owns the sponsor paymaster. */
  operator: PrivateKeyAccount;
  /** The document attester the local identity hub trusts. */
  attester: PrivateKeyAccount;
  /** The mock identity app's funded account. */
  identityApp: PrivateKeyAccount;
  /** Signs the sponsor paymaster's approvals (holds no funds). */
  paymasterSigner: PrivateKeyAccount;
  /** Sends the in-process bundler's handleOps transactions. */
  bundler: PrivateKeyAccount;
}

const DEV_ACCOUNT_NAMES = ['operator', 'attester', 'identityApp', 'paymasterSigner', 'bundler'] as const satisfies readonly (keyof DevAccounts)[];

export interface EmbeddedNetwork {
  network: NetworkName;
  /** The running anvil and its supervisor (same RPC URL across restarts). */
  chain: ChainSupervisor;
  deployment: Deployment;
  /** True when the contracts were deployed by this start rather than reused. */
  deployedNow: boolean;
  clientOptions: ClientOptions;
  /** The ERC-4337 stack: EntryPoint v0.7, SimpleAccountFactory v0.7, the passkey account factory, the sponsor paymaster. */
  aa: AccountAbstractionAddresses;
  /** ms from spawning anvil until its RPC answered, then until our contracts were deployed or found in place. */
  timings: { rpcMs: number; contractsMs: number };
}

const FUNDING = parseEther('1000000');
const LOCAL_CLIENT = { timeoutMs: 5_000, pollingIntervalMs: 50 } as const;

function writePrivateFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, content, { mode: 0o600 });
}

/**
 * Loads the dev accounts from DATA_DIR, generating them once. A file written before an account existed gets that
 * account's key added, and keeps the others.
 */
export function loadDevAccounts(dataDir: string): { accounts: DevAccounts; created: boolean } {
  const path = join(dataDir, 'dev-accounts.json');
  const created = !existsSync(path);
  const stored = created ? {} : (JSON.parse(readFileSync(path, 'utf8')) as Partial<Record<keyof DevAccounts, Hex>>);
  const missing = DEV_ACCOUNT_NAMES.filter((name) => !stored[name]);
  const keys = { ...stored, ...Object.fromEntries(missing.map((name) => [name, generatePrivateKey()])) } as Record<keyof DevAccounts, Hex>;
  if (missing.length > 0) {
    // written next to the file and renamed over it: a reader never sees half a file
    const next = `${path}.${process.pid}.tmp`;
    writePrivateFile(next, `${JSON.stringify(keys, null, 2)}\n`);
    renameSync(next, path);
  }
  const accounts = Object.fromEntries(DEV_ACCOUNT_NAMES.map((name) => [name, privateKeyToAccount(keys[name])])) as unknown as DevAccounts;
  return { created, accounts };
}

const serialize = (deployment: Deployment): string =>
  `${JSON.stringify({ ...deployment, registryDeployBlock: deployment.registryDeployBlock.toString() }, null, 2)}\n`;

function readDeployment(path: string): Deployment | undefined {
  if (!existsSync(path)) return undefined;
  const raw = JSON.parse(readFileSync(path, 'utf8')) as Deployment & { registryDeployBlock: string };
  return { ...raw, registryDeployBlock: BigInt(raw.registryDeployBlock) };
}

async function isUsable(client: ChainClient, deployment: Deployment | undefined, chainId: number): Promise<boolean> {
  if (!deployment || deployment.chainId !== chainId || deployment.fingerprint !== contractsFingerprint) return false;
  const code = await client.getCode({ address: deployment.contracts.registry });
  return code !== undefined && code !== '0x';
}

/** Sets an account's balance on a local chain (anvil's cheat method). */
export async function fund(client: ChainClient, address: Hex, amount = FUNDING): Promise<void> {
  await client.request({ method: 'anvil_setBalance' as never, params: [address, `0x${amount.toString(16)}`] as never });
}

export interface EmbeddedOptions {
  /** The registry's cap on agents per human (0 = unlimited), applied to reused deployments too. */
  maxAgentsPerHuman?: number;
  /** What the chain's supervisor reports (exits, restarts) and whom it tells when it cannot restart the chain. */
  supervision?: Pick<SupervisorOptions, 'onEvent' | 'onFatal' | 'restartDelaysMs'>;
  /** Where the anvil binary is found (default: this platform's package, else the PATH). */
  anvil?: SupervisorOptions['anvil'];
}

async function applyMaxAgentsPerHuman(client: ChainClient, wallet: ChainWallet, registry: Address, max: bigint): Promise<void> {
  const current = await client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'maxAgentsPerHuman' });
  if (current === max) return;
  const hash = await wallet.writeContract({ address: registry, abi: agentRegistryAbi, functionName: 'setMaxAgentsPerHuman', args: [max] });
  await client.waitForTransactionReceipt({ hash });
}

export async function startEmbeddedNetwork(
  network: NetworkName,
  dataDir: string,
  accounts: DevAccounts,
  options: EmbeddedOptions = {},
): Promise<EmbeddedNetwork> {
  const chainId = chainIdOf(network);
  const stateDir = join(dataDir, 'chains', network);
  const spawnedAt = performance.now();
  const chain = await ChainSupervisor.start({
    network,
    chainId,
    stateDir,
    ...options.supervision,
    ...(options.anvil ? { anvil: options.anvil } : {}),
  });
  const answeredAt = performance.now();
  try {
    const probe = createChainClient(network, { rpcUrl: chain.rpcUrl, ...LOCAL_CLIENT });
    await Promise.all([accounts.operator, accounts.identityApp, accounts.bundler].map(({ address }) => fund(probe, address)));

    const deploymentPath = join(stateDir, 'deployment.json');
    let deployment = readDeployment(deploymentPath);
    const deployedNow = !(await isUsable(probe, deployment, chainId));
    const wallet = createChainWallet(network, accounts.operator, { rpcUrl: chain.rpcUrl, ...LOCAL_CLIENT });
    if (deployedNow) deployment = await deployContracts({ client: probe, wallet, attester: accounts.attester.address });
    const ready = deployment as Deployment;
    if (options.maxAgentsPerHuman !== undefined) {
      await applyMaxAgentsPerHuman(probe, wallet, ready.contracts.registry, BigInt(options.maxAgentsPerHuman));
    }
    // Outside the registry's fingerprint: these land at addresses derived from their code, so a change of theirs
    // deploys anew without redeploying the registry (and its agents) with it.
    const aa = await deployAccountAbstraction({ client: probe, wallet, paymasterSigner: accounts.paymasterSigner.address });
    // one dump for everything this start sent; the deployment file names contracts the state file must hold (else
    // the next start finds addresses without code), so it is written after
    await chain.makeDurable();
    if (deployedNow) writePrivateFile(deploymentPath, serialize(ready));
    return {
      network,
      chain,
      deployment: ready,
      deployedNow,
      // every client of this chain fails at once, with the named error, while the supervisor restarts it
      clientOptions: { rpcUrl: chain.rpcUrl, multicall: ready.contracts.multicall, runState: chain, ...LOCAL_CLIENT },
      aa,
      timings: { rpcMs: answeredAt - spawnedAt, contractsMs: performance.now() - answeredAt },
    };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}
