// The chain watchdog's own process (spawned by watchdog.ts, in a session of its own): it reads the chains to watch
// from its stdin, one JSON line each, and when stdin ends, the service that spawned it has ended. If it ended
// without stopping a chain (killed with -9, crashed), the chain is still running: its state is written to its
// state file (what another program sent it after the service's last dump is kept too), then it is stopped.
import { createInterface } from 'node:readline';
import { dumpState } from './chain-state.js';
import { isRunning, runs, stopProcess } from './processes.js';
import type { WatchdogMessage, WatchedChain } from './watchdog.js';

const watched = new Map<number, WatchedChain>();

async function reap(chain: WatchedChain): Promise<void> {
  // the pid may have been reused by another program once the chain exited
  if (!isRunning(chain.pid) || !runs(chain.pid, 'anvil')) return;
  if (chain.stateFile) await dumpState(chain.rpcUrl, chain.stateFile).catch(() => undefined);
  await stopProcess(chain.pid);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let message: WatchdogMessage;
  try {
    message = JSON.parse(line) as WatchdogMessage;
  } catch {
    return;
  }
  if ('watch' in message) watched.set(message.watch.pid, message.watch);
  else watched.delete(message.unwatch);
});
lines.once('close', () => {
  void Promise.all([...watched.values()].map(reap)).finally(() => process.exit(0));
});
