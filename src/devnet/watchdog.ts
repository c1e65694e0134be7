// The local chains run in sessions of their own (devchain.ts), out of reach of the signals a terminal sends to the
// service's process group: the service alone decides when they stop, after its last dump. The price: a service
// killed with -9 would leave them running. So each process that starts chains also starts one small watchdog,
// itself in a session of its own, holding the read end of a pipe whose write end only this process has. When this
// process ends, however it ends, the pipe closes and the watchdog writes the state of every chain still running
// and stops it (watchdog-process.ts). A chain stopped in order is unwatched first. Linux's PR_SET_PDEATHSIG would do
// without a process, but Node cannot set it for a child.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface WatchedChain {
  pid: number;
  rpcUrl: string;
  /** Where the chain's state goes before it is stopped; none for a chain kept in memory only. */
  stateFile?: string;
}

export type WatchdogMessage = { watch: WatchedChain } | { unwatch: number };

/** The watchdog's entry: the compiled file beside this one, or the TypeScript source run through tsx. */
function watchdogCommand(): string[] {
  const self = fileURLToPath(import.meta.url);
  if (!self.endsWith('.ts')) return [fileURLToPath(new URL('./watchdog-process.js', import.meta.url))];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, fileURLToPath(new URL('./watchdog-process.ts', import.meta.url))];
}

let watchdog: ChildProcess | undefined;

const alive = (child: ChildProcess | undefined): child is ChildProcess => child !== undefined && child.exitCode === null && child.signalCode === null;

function running(): ChildProcess {
  if (alive(watchdog)) return watchdog;
  const child = spawn(process.execPath, watchdogCommand(), { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  // neither the watchdog nor its pipe keeps this process alive
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
  child.stdin?.on('error', () => undefined); // a watchdog killed by hand: its chains are then stopped by the next start
  watchdog = child;
  return child;
}

const send = (message: WatchdogMessage): void => {
  running().stdin?.write(`${JSON.stringify(message)}\n`);
};

/**
 * Has the watchdog stop `chain` if this process ends without unwatching it. With `stateDir`, the watchdog's pid is
 * left there, so that a later start waits for it instead of stopping the same leftover chain at the same time.
 */
export function watchChain(chain: WatchedChain, stateDir?: string): void {
  send({ watch: chain });
  if (stateDir && watchdog?.pid) writeFileSync(`${stateDir}/watchdog.pid`, String(watchdog.pid), { mode: 0o600 });
}

/** The chain stopped in order: nothing left for the watchdog to do. */
export function unwatchChain(pid: number): void {
  if (alive(watchdog)) send({ unwatch: pid });
}

/** This process's watchdog, if it has one (it never stops this process's own chains while this process runs). */
export const ownWatchdogPid = (): number | undefined => watchdog?.pid;
