// Starts and stops the local anvil chains of the embedded default. The platform binary is spawned
// directly (not through npx) so that stopping it really stops it. A chain with a state folder starts from the state
// file found there; anvil never writes it: the chain's supervisor does, atomically (supervisor.ts, chain-state.ts).
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable } from 'node:stream';
import { dumpState } from './chain-state.js';
import { isRunning, runs, stopProcess } from './processes.js';
import { ownWatchdogPid, unwatchChain, watchChain } from './watchdog.js';

const require = createRequire(import.meta.url);

/** The recent block states a local chain keeps (eth_call at older blocks is refused, as by a non-archive node). */
export const STATES_KEPT = 128;

/** How long a start waits for a dead service's watchdog to write and stop the chain it left. */
const LEFTOVER_WAIT_MS = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ChainExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DevChain {
  readonly chainId: number;
  readonly rpcUrl: string;
  readonly pid: number;
  /** Resolves when anvil exits, asked to or not. */
  readonly exited: Promise<ChainExit>;
  /** Resolves when anvil has exited. */
  stop(): Promise<void>;
}

export interface DevChainOptions {
  chainId: number;
  /**
   * Folder of the state file (loaded if present, written by the chain's owner, not by anvil) and of the pid file;
   * without it the chain lives in memory only.
   */
  stateDir?: string;
  /** Default 0: a free port. A restart passes the port of the chain it replaces. */
  port?: number;
  startTimeoutMs?: number;
  /** Where the anvil binary is found (default: this platform's package, else the PATH). */
  anvil?: AnvilLookup;
  /** Recent block states kept in memory (default STATES_KEPT); a chain with a large state keeps fewer. */
  statesKept?: number;
}

/** Where the anvil binary is looked for. */
export interface AnvilLookup {
  /**
   * The platform whose @foundry-rs/anvil-<platform> package is used, as `<os>-<arch>` (linux-amd64, darwin-arm64...);
   * default this machine's. ANVIL_PLATFORM sets it (a machine whose package is not installed falls back to the PATH).
   */
  platform?: string;
  /** The folders searched for `anvil` when there is no package (default $PATH). */
  searchPath?: string;
}

/** This machine's platform as the @foundry-rs/anvil-* packages name theirs. */
export const ANVIL_PLATFORM = `${process.platform}-${({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch] ?? process.arch}`;

/** An executable `name` in one of `searchPath`'s folders. */
function onPath(name: string, searchPath: string): string | undefined {
  for (const folder of searchPath.split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The anvil binary: from the platform package of @foundry-rs/anvil (an optional dependency: only linux-amd64 is in the
 * lockfile), else `anvil` on the PATH (Foundry's own installer, foundryup, puts it there), else an error naming both.
 */
export function anvilBinaryPath(lookup: AnvilLookup = {}): string {
  const target = lookup.platform ?? ANVIL_PLATFORM;
  const exe = target.startsWith('win32') ? 'anvil.exe' : 'anvil';
  try {
    return require.resolve(`@foundry-rs/anvil-${target}/bin/${exe}`);
  } catch {
    const found = onPath(exe, lookup.searchPath ?? process.env['PATH'] ?? '');
    if (found) return found;
    throw new Error(
      `No anvil binary for ${target}: install @foundry-rs/anvil-${target}@1.7.1 (npm install --no-save @foundry-rs/anvil-${target}@1.7.1), ` +
        'or install Foundry with its installer, foundryup, so that anvil is on the PATH; ' +
        'or set MAINNET_RPC_URL and TESTNET_RPC_URL to run without local chains',
    );
  }
}

/**
 * A previous run that was killed hard may have left its anvil behind, with blocks its state file may not have yet
 * (sent by another process after the service died). Its watchdog (watchdog.ts) writes that state and stops it: a
 * watchdog still at work is waited for. A chain it did not stop gets the same here: its state is written first (its
 * URL is in `rpc-url`), then it is stopped, SIGINT first and SIGKILL if it does not exit.
 */
async function stopLeftover(stateDir: string, pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0 || !runs(pid, 'anvil')) {
    rmSync(pidFile, { force: true }); // not running any more, or the pid was reused by an unrelated process
    return;
  }
  const watchdogFile = join(stateDir, 'watchdog.pid');
  const watchdog = existsSync(watchdogFile) ? Number(readFileSync(watchdogFile, 'utf8')) : 0;
  if (watchdog > 0 && watchdog !== ownWatchdogPid() && runs(watchdog, 'watchdog-process')) {
    for (let waited = 0; waited < LEFTOVER_WAIT_MS && isRunning(pid) && isRunning(watchdog); waited += 50) await sleep(50);
  }
  if (isRunning(pid) && runs(pid, 'anvil')) {
    const rpcUrlFile = join(stateDir, 'rpc-url');
    if (existsSync(rpcUrlFile)) {
      // a leftover that does not answer keeps the state file as it is
      await dumpState(readFileSync(rpcUrlFile, 'utf8').trim(), join(stateDir, 'state.json')).catch(() => undefined);
    }
    await stopProcess(pid);
  }
  rmSync(pidFile, { force: true });
}

/**
 * Whatever anvil writes gets the mode a new file gets from the umask (0644 under the usual 022); it inherits the
 * umask of the moment it is spawned, so 077 is set for the spawn alone: anything it writes is the owner's only
 * (0600), like everything under DATA_DIR. Worker threads cannot change the umask: there the chain starts with the
 * process's own.
 */
function spawnPrivately(command: string, args: string[]): ChildProcessByStdio<null, Readable, Readable> {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    previous = undefined;
  }
  try {
    // detached: a session and process group of its own, so Ctrl-C (SIGINT to the terminal's foreground group),
    // SIGHUP and signals sent to the service's group reach the service, which writes the chain's state and then
    // stops it; the chain never exits before that last dump. watchdog.ts stops it if the service is killed.
    return spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}

function waitForExit(child: ChildProcess): Promise<ChainExit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

export async function startDevChain(options: DevChainOptions): Promise<DevChain> {
  const binary = anvilBinaryPath(options.anvil);
  const args = ['--chain-id', String(options.chainId), '--host', '127.0.0.1', '--port', String(options.port ?? 0)];
  let pidFile: string | undefined;
  let cacheDir: string;
  if (options.stateDir) {
    mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    pidFile = join(options.stateDir, 'anvil.pid');
    await stopLeftover(options.stateDir, pidFile);
    const stateFile = join(options.stateDir, 'state.json');
    if (existsSync(stateFile)) args.push('--load-state', stateFile);
    cacheDir = join(options.stateDir, 'anvil-cache');
    rmSync(cacheDir, { recursive: true, force: true }); // a killed service's
    mkdirSync(cacheDir, { mode: 0o700 });
  } else {
    cacheDir = mkdtempSync(join(tmpdir(), 'anvil-cache-'));
  }
  // Block states: those of the last blocks in memory only, as many as a full node keeps. By default anvil also
  // writes the states of thousands of older blocks to a folder of ~/.foundry/anvil/tmp and never removes it (not
  // even on an orderly exit): every chain left its megabytes to gigabytes there until the disk was full. anvil still
  // makes a folder (empty) at a reorganisation: in the chain's own cache folder, removed when it exits.
  args.push('--prune-history', String(options.statesKept ?? STATES_KEPT), '--cache-path', cacheDir);

  const child = spawnPrivately(binary, args);
  const exited = waitForExit(child).then((exit) => {
    rmSync(cacheDir, { recursive: true, force: true });
    return exit;
  });
  let output = '';
  let onEarlyExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};

  const rpcUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`anvil (chain ${options.chainId}) did not start in time:\n${output}`)),
      options.startTimeoutMs ?? 15_000,
    );
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      // anvil prints dev account keys before the listening line: keep only what is needed to report failure
      output = (output + chunk.toString()).slice(-4_000);
      const match = /Listening on ([\d.]+):(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(`http://${match[1]}:${match[2]}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', fail);
    onEarlyExit = (code, signal) => fail(new Error(`anvil (chain ${options.chainId}) exited during start (${signal ?? code}):\n${output}`));
    child.once('exit', onEarlyExit);
  });
  // Once listening, keep draining its output so anvil never blocks on a full pipe.
  child.stdout.removeAllListeners('data').resume();
  child.stderr.removeAllListeners('data').resume();
  child.off('exit', onEarlyExit);
  const pid = child.pid ?? -1;
  if (pidFile) writeFileSync(pidFile, String(pid), { mode: 0o600 });
  const stateFile = options.stateDir ? join(options.stateDir, 'state.json') : undefined;
  watchChain({ pid, rpcUrl, ...(stateFile ? { stateFile } : {}) }, options.stateDir);
  void exited.then(() => unwatchChain(pid));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // SIGINT lets anvil shut down in order; SIGKILL only if it does not finish in time.
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      if (pidFile) rmSync(pidFile, { force: true });
    })();
    return stopping;
  };

  return { chainId: options.chainId, rpcUrl, pid, exited, stop };
}
