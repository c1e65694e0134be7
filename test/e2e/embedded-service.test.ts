// The embedded default as a user runs it: local chains started by the service, contracts deployed on the
// first start and reused after a restart, and no chain process left behind when the service stops.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createChainClient, createChainWallet } from '../../src/chain/clients.js';
import { RegistryGateway } from '../../src/chain/registry-gateway.js';
import { loadConfig } from '../../src/config.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { linkedRegistrationData } from '../../src/core/registration-data.js';
import { loadDevAccounts } from '../../src/devnet/embedded.js';
import { prove } from '../../src/identity-app/index.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/main.js';
import { freePort, serviceCommand } from '../support/service-process.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-e2e-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Running and not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
}

/** Registers a linked agent on the testnet chain of a service that keeps its dev accounts in `dataDir`. */
async function registerAgent(dataDir: string, rpcUrl: string, registry: Address): Promise<{ agent: Address; human: Address }> {
  const client = createChainClient('testnet', { rpcUrl, pollingIntervalMs: 20 });
  const { accounts } = loadDevAccounts(dataDir);
  const relayer = createChainWallet('testnet', accounts.identityApp, { rpcUrl, pollingIntervalMs: 20 });
  const human = privateKeyToAccount(generatePrivateKey()).address;
  const agent = privateKeyToAccount(generatePrivateKey());
  const chainId = 11142220;
  const userDefinedData = await linkedRegistrationData(agent, human, { chainId, registry, nonce: 0n, configIndex: 0 });
  const result = await prove({
    client,
    wallet: relayer,
    attester: accounts.attester,
    request: { registry, chainId, scopeSeed: 'self-agent-id', userId: human, userDefinedData, disclosures: { minimumAge: 0, ofac: false } },
  });
  expect(result.status).toBe('submitted');
  return { agent: agent.address, human };
}

describe('embedded default, in process', () => {
  const logger = createLogger('silent');

  it('deploys on first start, keeps agents and addresses across a restart, and stops its chains', async () => {
    const dataDir = tempDir();
    const config = { ...loadConfig({ DATA_DIR: dataDir, PORT: '0' }) };

    const first: RunningService = await startService(config, logger);
    const health = await fetch(`${first.url}/api/health`);
    expect(health.status).toBe(200);
    const { networks } = (await health.json()) as { networks: { chainId: number; up: boolean }[] };
    expect(networks.map((n) => [n.chainId, n.up])).toEqual([
      [42220, true],
      [11142220, true],
    ]);

    // register an agent on testnet the way the identity app does
    const testnet = first.chains.get('testnet');
    const { agent, human } = await registerAgent(dataDir, testnet.client.transport.url as string, testnet.contracts.registry);
    // agent 1 is the service's own demo agent, registered at first start
    const agentId = await testnet.registry.agentIdOf(addressAgentKey(agent));
    expect(agentId).toBe(2n);

    const addresses = first.chains.all().map((n) => n.contracts);
    const pids = first.devChains.map((chain) => chain.pid);
    expect(pids.every(isAlive)).toBe(true);
    await first.stop();
    expect(pids.some(isAlive)).toBe(false);

    const second = await startService(config, logger);
    try {
      expect(second.chains.all().map((n) => n.contracts)).toEqual(addresses);
      const again = second.chains.get('testnet');
      expect(await again.registry.agentIdOf(addressAgentKey(agent))).toBe(agentId);
      const record = await again.registry.readAgent(agentId);
      expect(record?.owner).toBe(human);
      expect(record?.hasHumanProof).toBe(true);
    } finally {
      await second.stop();
    }
    expect(second.devChains.map((c) => c.pid).some(isAlive)).toBe(false);
  });

  it('starts no chain for a network with an RPC URL, and reports it down when that RPC does not answer', async () => {
    const port = await freePort();
    const config = loadConfig({ DATA_DIR: tempDir(), PORT: '0', MAINNET_RPC_URL: `http://127.0.0.1:${port}` });
    const service = await startService(config, logger);
    try {
      expect(service.devChains.map((c) => c.chainId)).toEqual([11142220]);
      const res = await fetch(`${service.url}/api/health`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { networks: { network: string; up: boolean; rpc: string }[] };
      expect(body.networks).toEqual([
        expect.objectContaining({ network: 'mainnet', up: false, rpc: 'external' }),
        expect.objectContaining({ network: 'testnet', up: true, rpc: 'embedded' }),
      ]);
    } finally {
      await service.stop();
    }
  });
});

describe('npm start as a process', () => {
  interface Started {
    stdout: () => string;
    exited: Promise<number | null>;
    signal: (s: NodeJS.Signals) => void;
  }

  /** What `npm start` runs (`node dist/main.js`, one process; its chains and their watchdog run in sessions of their own). */
  function start(dataDir: string, port: number): Started {
    const [command, args] = serviceCommand;
    const child = spawn(command, args, {
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const started = { stdout: () => out, exited, signal: (s: NodeJS.Signals) => child.kill(s) };
    running.add(started);
    void exited.then(() => running.delete(started));
    return started;
  }

  // a test that failed half way leaves no service behind (a stopped one is killed: it cannot take SIGINT)
  const running = new Set<Started>();
  afterEach(async () => {
    for (const started of running) {
      started.signal('SIGKILL');
      await started.exited;
    }
  });

  async function waitHealthy(port: number, started: Started): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
      // the banner is printed before the first request is served, but may still be in the pipe
      if (res?.status === 200 && /testnet chain 11142220[\s\S]*multicall/.test(started.stdout())) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`not healthy in time:\n${started.stdout()}`);
  }

  const anvilPids = (dataDir: string): number[] =>
    ['mainnet', 'testnet'].map((n) => Number(readFileSync(join(dataDir, 'chains', n, 'anvil.pid'), 'utf8')));

  it('prints URL, chain ids and addresses, reuses them on restart, and leaves no anvil after SIGINT or SIGTERM', async () => {
    const dataDir = tempDir();
    const port = await freePort();

    const first = start(dataDir, port);
    await waitHealthy(port, first);
    const banner = first.stdout();
    expect(banner).toContain(`listening on http://127.0.0.1:${port}`);
    expect(banner).toMatch(/mainnet chain 42220 \(local anvil\)/);
    expect(banner).toMatch(/testnet chain 11142220 \(local anvil\)/);
    const registries = [...banner.matchAll(/registry\s+(0x[0-9a-fA-F]{40})/g)].map((m) => m[1]);
    expect(registries).toHaveLength(2);
    // every contract of each network, its chain's RPC, and where a program finds them all
    for (const row of [
      'rpc',
      'proofProvider',
      'hub',
      'demoVerifier',
      'demoVerifierEd25519',
      'multicall',
      'ed25519Verifier',
      'entryPoint',
      'paymaster',
    ]) {
      expect([...banner.matchAll(new RegExp(`^ {4}${row} +(0x[0-9a-fA-F]{40}|http://127\\.0\\.0\\.1:\\d+)`, 'gm'))], row).toHaveLength(2);
    }
    expect(banner).toContain(`discovery: http://127.0.0.1:${port}/.well-known/self-agent-id.json`);
    expect(banner).toContain(`requireAgent({ service: 'http://127.0.0.1:${port}', network: 'testnet' })`);
    const firstPids = anvilPids(dataDir);
    expect(firstPids.every(isAlive)).toBe(true);

    first.signal('SIGINT');
    expect(await first.exited).toBe(0);
    expect(firstPids.some(isAlive)).toBe(false);

    const second = start(dataDir, port);
    await waitHealthy(port, second);
    expect([...second.stdout().matchAll(/registry\s+(0x[0-9a-fA-F]{40})/g)].map((m) => m[1])).toEqual(registries);
    const secondPids = anvilPids(dataDir);

    second.signal('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(secondPids.some(isAlive)).toBe(false);
  }, 90_000);

  /** The testnet chain's RPC URL, from the service's start log. */
  const testnetRpc = (started: Started): string => /"network":"testnet","chainId":11142220,"rpcUrl":"([^"]+)"/.exec(started.stdout())![1]!;
  const registriesOf = (started: Started): string[] => [...started.stdout().matchAll(/registry\s+(0x[0-9a-fA-F]{40})/g)].map((m) => m[1]!);

  const waitGone = async (pids: number[]): Promise<boolean> => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && pids.some(isAlive); ) await new Promise((r) => setTimeout(r, 50));
    return !pids.some(isAlive);
  };
  const watchdogPid = (dataDir: string): number => Number(readFileSync(join(dataDir, 'chains', 'testnet', 'watchdog.pid'), 'utf8'));

  /** A second start on the same DATA_DIR: same contracts, and the agent registered before is there; then SIGINT. */
  async function expectKeptAfterRestart(dataDir: string, port: number, registries: string[], agent: Address, whenHealthy = () => {}) {
    const second = start(dataDir, port);
    await waitHealthy(port, second);
    whenHealthy();
    expect(registriesOf(second)).toEqual(registries);
    const client = createChainClient('testnet', { rpcUrl: testnetRpc(second) });
    expect(await new RegistryGateway(client, registries[1] as Address).agentIdOf(addressAgentKey(agent))).toBeGreaterThan(0n);
    const pids = anvilPids(dataDir);
    second.signal('SIGINT');
    await second.exited;
    expect(pids.some(isAlive)).toBe(false);
  }

  it('has its watchdog write the state of the chains of a service killed hard, then stop them', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const first = start(dataDir, port);
    await waitHealthy(port, first);
    const registries = registriesOf(first);
    // frozen, the service writes no state: the agent, sent straight to the chain, is kept only by the watchdog's dump
    first.signal('SIGSTOP');
    const { agent } = await registerAgent(dataDir, testnetRpc(first), registries[1] as Address);
    const chains = anvilPids(dataDir);
    first.signal('SIGKILL');
    await first.exited;
    expect(await waitGone(chains)).toBe(true);
    await expectKeptAfterRestart(dataDir, port, registries, agent);
  }, 90_000);

  it('stops the chains left behind when the watchdog died with the service, and keeps their state', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const first = start(dataDir, port);
    await waitHealthy(port, first);
    const registries = registriesOf(first);
    const { agent } = await registerAgent(dataDir, testnetRpc(first), registries[1] as Address);
    const orphans = anvilPids(dataDir);
    process.kill(watchdogPid(dataDir), 'SIGKILL');
    first.signal('SIGKILL');
    await first.exited;
    expect(orphans.every(isAlive)).toBe(true); // nobody was left to stop them
    await expectKeptAfterRestart(dataDir, port, registries, agent, () => expect(orphans.some(isAlive)).toBe(false));
  }, 90_000);
});
