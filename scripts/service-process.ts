// The service as `npm start` runs it (package.json's start script), against local chains as its external RPCs: what the
// benchmarks that measure a real process start and stop.
import { type ChildProcess, spawn } from 'node:child_process';
import type { LocalSystem } from './local-system.js';
import { freePort, serviceEnv } from './registry-history.js';
import { startArguments } from './start-command.js';

export interface Started {
  child: ChildProcess;
  base: string;
  healthyMs: number;
}

export interface ServiceChains {
  testnet: LocalSystem;
  mainnet: LocalSystem;
}

/**
 * Starts the service on `dataDir` against the local chains; resolves once health says ok (the index is live).
 * `env` adds or overrides variables (e.g. <NETWORK>_WS_URL); `main` is the build started (another build's, to compare).
 */
export async function startService(chains: ServiceChains, dataDir: string, env: Record<string, string> = {}, main?: string): Promise<Started> {
  const port = await freePort();
  const variables = { ...serviceEnv(chains, dataDir, port), ...env };
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, startArguments(main), { env: variables, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (const deadline = spawnedAt + 600_000; performance.now() < deadline; ) {
    const status = await fetch(`${base}/api/health`)
      .then((res) => res.json() as Promise<{ status: string }>)
      .then((body) => body.status)
      .catch(() => undefined);
    if (status === 'ok') return { child, base, healthyMs: performance.now() - spawnedAt };
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error('the service did not become healthy within 10 minutes');
}

export async function stopService(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
}
