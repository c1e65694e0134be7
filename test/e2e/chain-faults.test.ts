// Chain faults as they happen to a running service: an embedded anvil killed (and restarted by the service from
// its saved state), one that cannot be restarted, the whole process group killed right after a registration
// completed, a configured RPC that stops answering and comes back. Real service processes, real anvil chains.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createChainClient, createChainWallet } from '../../src/chain/clients.js';
import { dumpState } from '../../src/devnet/chain-state.js';
import { deployContracts } from '../../src/devnet/deploy.js';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';
import { fund } from '../../src/devnet/embedded.js';
import { approve } from '../../src/identity-app/app.js';
import { mockDocumentFor } from '../../src/identity-app/document.js';
import { legacySend } from '../support/a2a.js';
import { freePort, serviceCommand } from '../support/service-process.js';

const TESTNET = 11142220;
const MAINNET = 42220;

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'chain-faults-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface ServiceRun {
  base: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ServiceRun[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  // whatever a failed test left: the service and its chains share its process group
  for (const run of running.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      try {
        process.kill(-(run.child.pid as number), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
      await run.exited;
    }
  }
});

/**
 * The service as `npm start` runs it (one node process, so its pid is the service's) leading its own process group,
 * which its anvils join: killing the group kills service and chains at once, as a crash of the host would.
 */
async function startService(dataDir: string, env: Record<string, string> = {}): Promise<ServiceRun> {
  const port = await freePort();
  const child = spawn(serviceCommand[0], serviceCommand[1], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-200_000)));
  child.stderr?.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-200_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const run = { base: `http://127.0.0.1:${port}`, child, output: () => out, exited };
  running.push(run);
  return run;
}

interface NetworkHealth {
  network: string;
  up: boolean;
  restarting?: boolean;
  error?: string;
}

async function health(base: string): Promise<{ status: number; networks: NetworkHealth[] } | undefined> {
  const res = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  if (!res) return undefined;
  const body = (await res.json()) as { networks: NetworkHealth[] };
  return { status: res.status, networks: body.networks };
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const waitHealthy = (run: ServiceRun, timeoutMs = 90_000): Promise<true> =>
  waitFor(
    'a healthy service',
    async () => {
      if (run.child.exitCode !== null) throw new Error(`the service exited:\n${run.output()}`);
      return (await health(run.base))?.status === 200 ? true : undefined;
    },
    timeoutMs,
    100,
  );

const chainFile = (dataDir: string, network: string, name: string): string => join(dataDir, 'chains', network, name);
/** The running anvil's pid; undefined while a restart replaces it. */
function anvilPid(dataDir: string, network: string): number | undefined {
  try {
    return Number(readFileSync(chainFile(dataDir, network, 'anvil.pid'), 'utf8'));
  } catch {
    return undefined;
  }
}
/**
 * Until the service has written the chain's state file for what it holds (the file unchanged over three rounds of
 * its 250 ms watch): a dump still under way when the service turns healthy would replace a file the test writes.
 */
async function waitStateWritten(dataDir: string, network: string): Promise<void> {
  const file = chainFile(dataDir, network, 'state.json');
  let written = statSync(file).mtimeMs;
  for (let unchangedSince = Date.now(); Date.now() - unchangedSince < 750; ) {
    await sleep(50);
    const mtime = statSync(file).mtimeMs;
    if (mtime !== written) [written, unchangedSince] = [mtime, Date.now()];
  }
}
const rpcUrlOf = (dataDir: string, network: string): string => readFileSync(chainFile(dataDir, network, 'rpc-url'), 'utf8').trim();

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, ms: performance.now() - started };
}

/** Opens a linked registration on testnet and has the mock identity app prove it (a new human each time). */
async function register(run: ServiceRun, dataDir: string): Promise<{ sessionToken: string; agentAddress: string; human: string }> {
  const human = privateKeyToAccount(generatePrivateKey()).address;
  const opened = await fetch(`${run.base}/api/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'linked', network: 'testnet', humanAddress: human }),
  });
  expect(opened.status).toBe(200);
  const session = (await opened.json()) as { sessionToken: string; deepLink: string; agentAddress: string };
  const approval = await approve({ deepLink: session.deepLink, dataDir, document: mockDocumentFor(`chain-faults:${human}`) });
  expect(approval.status).toBe('submitted');
  return { sessionToken: session.sessionToken, agentAddress: session.agentAddress, human };
}

const statusOf = async (run: ServiceRun, sessionToken: string): Promise<{ stage: string; agentId?: number }> =>
  (await getJson(`${run.base}/api/agent/register/status?token=${encodeURIComponent(sessionToken)}`)).body as { stage: string; agentId?: number };

const completed = (run: ServiceRun, sessionToken: string): Promise<{ stage: string; agentId?: number }> =>
  waitFor('a completed registration', async () => {
    const status = await statusOf(run, sessionToken);
    return status.stage === 'completed' ? status : undefined;
  });

/** Listens on a port a killed anvil is letting go of, before its supervisor restarts it there. */
async function holdPort(port: number, timeoutMs = 2_000): Promise<Server | undefined> {
  const sockets = new Set<Socket>();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.destroy();
    });
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) return server;
    await sleep(1);
  }
  return undefined;
}

const closeServer = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('an embedded chain killed under a running service', () => {
  it('is restarted from its saved state on the same port; meanwhile health shows it down and its calls fail fast', async () => {
    const dataDir = tempDir();
    const run = await startService(dataDir);
    await waitHealthy(run);
    const before = await register(run, dataDir);
    const { agentId } = await completed(run, before.sessionToken);
    const rpcUrl = rpcUrlOf(dataDir, 'testnet');

    // 1. SIGKILL: the service notices, restarts anvil from its state file, and answers again by itself
    const killedPid = anvilPid(dataDir, 'testnet') as number;
    const killedAt = performance.now();
    process.kill(killedPid, 'SIGKILL');
    await waitFor(
      'the testnet chain restarted',
      async () => {
        const pid = anvilPid(dataDir, 'testnet');
        return pid !== undefined && pid !== killedPid && (await health(run.base))?.status === 200 ? true : undefined;
      },
      30_000,
      10,
    );
    const recoveryMs = performance.now() - killedAt;
    console.info(`anvil killed -> health 200 again: ${recoveryMs.toFixed(0)} ms`);
    expect(rpcUrlOf(dataDir, 'testnet')).toBe(rpcUrl);
    const info = await getJson(`${run.base}/api/agent/info/${TESTNET}/${agentId}`);
    expect(info).toMatchObject({ status: 200, body: { agentAddress: before.agentAddress } });

    // 2. Killed again, and its port taken meanwhile: the restart attempts fail until the port is free again
    let held: Server | undefined;
    for (let tries = 0; tries < 5 && !held; tries++) {
      const pid = await waitFor('a running testnet anvil', async () =>
        (await health(run.base))?.status === 200 ? anvilPid(dataDir, 'testnet') : undefined,
      );
      process.kill(pid, 'SIGKILL');
      held = await holdPort(Number(new URL(rpcUrl).port));
    }
    expect(held, 'the port of the killed chain could not be held').toBeDefined();
    try {
      const degraded = await waitFor('health showing testnet restarting', async () => {
        const h = await health(run.base);
        return h?.status === 503 ? h : undefined;
      });
      expect(degraded.networks).toEqual([
        expect.objectContaining({ network: 'mainnet', up: true }),
        expect.objectContaining({ network: 'testnet', up: false, restarting: true, error: expect.stringMatching(/^testnet chain unreachable: /) }),
      ]);
      const failed = await getJson(`${run.base}/api/agent/info/${TESTNET}/${agentId}`);
      expect(failed.status).toBe(500);
      expect(failed.body.error).toMatch(/^testnet chain unreachable: the local chain is being restarted/);
      expect(failed.ms).toBeLessThan(2_000);
      // the other network is not affected
      expect((await getJson(`${run.base}/api/agent/info/${MAINNET}/1`)).status).toBe(404);
    } finally {
      await closeServer(held as Server);
    }
    await waitHealthy(run, 30_000);
    expect((await getJson(`${run.base}/api/agent/info/${TESTNET}/${agentId}`)).status).toBe(200);

    // the log follower and the caches carried on: a registration after the restarts is seen and indexed
    const after = await register(run, dataDir);
    const next = await completed(run, after.sessionToken);
    expect(next.agentId).toBe((agentId as number) + 1);
    const byHuman = await waitFor('the agents-by-human index', async () => {
      const res = await getJson(`${run.base}/api/agent/agents/${TESTNET}/${after.human}`);
      return (res.body.agents as number[] | undefined)?.length ? res.body : undefined;
    });
    expect(byHuman.agents).toEqual([next.agentId]);
    expect(run.output()).toMatch(/local chain restarted from its saved state/);

    run.child.kill('SIGINT');
    expect((await run.exited).code).toBe(0);
  }, 180_000);

  it('makes the service exit non-zero when the chain cannot be restarted', async () => {
    const dataDir = tempDir();
    const run = await startService(dataDir);
    await waitHealthy(run);
    await waitStateWritten(dataDir, 'testnet');
    // a state file that no longer loads: every restart attempt fails the same way
    writeFileSync(chainFile(dataDir, 'testnet', 'state.json'), 'not a chain state');
    process.kill(anvilPid(dataDir, 'testnet') as number, 'SIGKILL');
    const exit = await Promise.race([run.exited, sleep(60_000).then(() => undefined)]);
    expect(exit, run.output()).toBeDefined();
    expect(exit?.code).toBe(1);
    expect(run.output()).toMatch(/could not be restarted/);
  }, 120_000);
});

describe('the whole service killed hard right after a registration completed', () => {
  it('keeps the agent under its id and the session completed with it; the next agent gets a new id', async () => {
    const dataDir = tempDir();
    const first = await startService(dataDir);
    await waitHealthy(first);
    const registration = await register(first, dataDir);
    const { agentId } = await completed(first, registration.sessionToken);
    expect(agentId).toBeGreaterThan(0);
    const chainPids = [anvilPid(dataDir, 'mainnet'), anvilPid(dataDir, 'testnet')] as number[];

    // SIGKILL to the process group: the service and both anvils, with no chance to write anything
    process.kill(-(first.child.pid as number), 'SIGKILL');
    await first.exited;
    await waitFor('the chains to be gone', async () => (chainPids.every((pid) => !isAlive(pid)) ? true : undefined), 10_000);

    const second = await startService(dataDir);
    await waitHealthy(second);
    const info = await getJson(`${second.base}/api/agent/info/${TESTNET}/${agentId}`);
    expect(info).toMatchObject({ status: 200, body: { agentAddress: registration.agentAddress } });
    expect(await statusOf(second, registration.sessionToken)).toMatchObject({ stage: 'completed', agentId });

    const another = await register(second, dataDir);
    expect((await completed(second, another.sessionToken)).agentId).toBe((agentId as number) + 1);

    second.child.kill('SIGINT');
    expect((await second.exited).code).toBe(0);
  }, 180_000);
});

describe('sessions checked against the chain at start', () => {
  it('reopens a completed registration whose agent the chain no longer holds (a state file restored from before it)', async () => {
    const dataDir = tempDir();
    const first = await startService(dataDir);
    await waitHealthy(first);
    const backup = readFileSync(chainFile(dataDir, 'testnet', 'state.json'));
    const registration = await register(first, dataDir);
    const { agentId } = await completed(first, registration.sessionToken);
    first.child.kill('SIGINT');
    expect((await first.exited).code).toBe(0);

    writeFileSync(chainFile(dataDir, 'testnet', 'state.json'), backup);
    const second = await startService(dataDir);
    await waitHealthy(second);
    // log lines reach the output in batches, at least once a second (logger.ts)
    const warned = await waitFor('the reconciliation warning', async () =>
      /sessions claimed what the chain does not hold/.test(second.output()) ? true : undefined,
    );
    expect(warned).toBe(true);
    expect((await getJson(`${second.base}/api/agent/info/${TESTNET}/${agentId}`)).status).toBe(404);
    const reopened = await statusOf(second, registration.sessionToken);
    expect(reopened.stage).toBe('qr-ready');
    expect(reopened.agentId).toBeUndefined();

    // the human can prove again with the same deep link, and the session completes with what the chain holds
    const qr = await getJson(`${second.base}/api/agent/register/qr?token=${encodeURIComponent(registration.sessionToken)}`);
    expect(qr.status).toBe(200);
    const again = await approve({ deepLink: qr.body.deepLink as string, dataDir, document: mockDocumentFor(`chain-faults:${registration.human}`) });
    expect(again.status).toBe('submitted');
    const done = await completed(second, registration.sessionToken);
    // the 404 read above may be answered from the cache until the log follower's next poll: wait for it
    const info = await waitFor('the agent', async () => {
      const res = await getJson(`${second.base}/api/agent/info/${TESTNET}/${done.agentId}`);
      return res.status === 200 ? res.body : undefined;
    });
    expect(info).toMatchObject({ agentAddress: registration.agentAddress });

    second.child.kill('SIGINT');
    expect((await second.exited).code).toBe(0);
  }, 180_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('configured RPCs that stop answering', () => {
  it('answers 500 "<network> chain unreachable" within 2 s, reports each network, and recovers when the RPC is back', async () => {
    // mainnet: our contracts on an anvil of our own, configured by RPC URL and addresses, stopped and started again
    const stateDir = tempDir();
    let rpc: DevChain = await startDevChain({ chainId: MAINNET, stateDir });
    cleanups.push(() => rpc.stop());
    const client = createChainClient('mainnet', { rpcUrl: rpc.rpcUrl, timeoutMs: 10_000 });
    const deployer = privateKeyToAccount(generatePrivateKey());
    await fund(client, deployer.address);
    const { contracts, registryDeployBlock } = await deployContracts({
      client,
      wallet: createChainWallet('mainnet', deployer, { rpcUrl: rpc.rpcUrl, timeoutMs: 10_000, pollingIntervalMs: 20 }),
      attester: privateKeyToAccount(generatePrivateKey()).address,
    });
    await dumpState(rpc.rpcUrl, join(stateDir, 'state.json'));
    const port = Number(new URL(rpc.rpcUrl).port);

    // testnet: an RPC that accepts connections and never answers
    const silent = createServer(() => undefined);
    const silentSockets = new Set<Socket>();
    silent.on('connection', (socket) => silentSockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    cleanups.push(() => {
      for (const socket of silentSockets) socket.destroy();
      return closeServer(silent);
    });

    const run = await startService(tempDir(), {
      MAINNET_RPC_URL: rpc.rpcUrl,
      MAINNET_REGISTRY_ADDRESS: contracts.registry,
      MAINNET_PROOF_PROVIDER_ADDRESS: contracts.proofProvider,
      MAINNET_HUB_ADDRESS: contracts.hub,
      MAINNET_DEMO_VERIFIER_ADDRESS: contracts.demoVerifier,
      MAINNET_MULTICALL_ADDRESS: contracts.multicall,
      MAINNET_REGISTRY_DEPLOY_BLOCK: String(registryDeployBlock),
      TESTNET_RPC_URL: `http://127.0.0.1:${silentPort}`,
    });
    const mainnetUp = await waitFor('mainnet up', async () => {
      if (run.child.exitCode !== null) throw new Error(`the service exited:\n${run.output()}`);
      const h = await health(run.base);
      return h?.networks.find((n) => n.network === 'mainnet')?.up ? h : undefined;
    });
    expect(mainnetUp.status).toBe(503);
    expect(mainnetUp.networks[1]).toMatchObject({
      network: 'testnet',
      up: false,
      error: expect.stringMatching(/^testnet chain unreachable: no answer/),
    });
    // an answer of the chain: no agent 1 in this registry yet
    expect((await getJson(`${run.base}/api/agent/info/${MAINNET}/1`)).status).toBe(404);

    // a request on the silent network: the named error within 2 s (2.5 s allowed for a busy machine)
    const silentAnswer = await getJson(`${run.base}/api/agent/info/${TESTNET}/1`);
    expect(silentAnswer).toMatchObject({ status: 500, body: { error: expect.stringMatching(/^testnet chain unreachable: no answer within/) } });
    expect(silentAnswer.ms).toBeLessThan(2_500);

    // mainnet's RPC stops: refused connections, the named error at once, on REST and on A2A
    await rpc.stop();
    const stopped = await getJson(`${run.base}/api/agent/info/${MAINNET}/2`);
    expect(stopped).toMatchObject({ status: 500, body: { error: expect.stringMatching(/^mainnet chain unreachable: connection refused/) } });
    expect(stopped.ms).toBeLessThan(2_000);
    // what was cached before is no longer answered from the cache once the log follower cannot hear of changes
    await waitFor(
      'the cached agent read to fail too',
      async () => ((await getJson(`${run.base}/api/agent/info/${MAINNET}/1`)).status === 500 ? true : undefined),
      5_000,
    );
    const a2a = await fetch(`${run.base}/api/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(legacySend({ intent: 'lookup', agentId: 1 })),
    });
    // a failed task: its status message carries the REST error
    const a2aBody = (await a2a.json()) as {
      result: { status: { state: string; message: { parts: { kind: string; data?: { error?: string; status?: number } }[] } } };
    };
    expect(a2aBody.result.status.state).toBe('failed');
    expect(a2aBody.result.status.message.parts.find((p) => p.kind === 'data')?.data).toMatchObject({
      error: expect.stringMatching(/^mainnet chain unreachable: connection refused/),
      status: 500,
    });
    const bothDown = await health(run.base);
    expect(bothDown?.status).toBe(503);
    expect(bothDown?.networks.map((n) => [n.network, n.up])).toEqual([
      ['mainnet', false],
      ['testnet', false],
    ]);

    // the RPC comes back (same port, same state): the service recovers by itself
    rpc = await startDevChain({ chainId: MAINNET, stateDir, port });
    await waitFor(
      'mainnet up again',
      async () => ((await health(run.base))?.networks.find((n) => n.network === 'mainnet')?.up ? true : undefined),
      30_000,
    );
    expect((await getJson(`${run.base}/api/agent/info/${MAINNET}/1`)).status).toBe(404);
    // a client of its own confirms the chain kept the contracts the service reads
    const code = await createPublicClient({ transport: http(rpc.rpcUrl) }).getCode({ address: contracts.registry });
    expect(code?.length).toBeGreaterThan(2);

    run.child.kill('SIGINT');
    expect((await run.exited).code).toBe(0);
  }, 120_000);
});
