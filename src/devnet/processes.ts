// Looking at and stopping a local chain's process by pid, for those who did not spawn it (a later start finding a
// leftover, the watchdog after the service died): the pid may meanwhile belong to another process, or to a zombie.
import { readFileSync } from 'node:fs';

/** Alive and not a zombie (an orphan's exit may never be reaped where PID 1 does not reap). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Whether `pid` runs a program whose command line holds `name` (false when it is gone or unreadable). */
export function runs(pid: number, name: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(name);
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `pid` has exited; false when it still runs after `timeoutMs`. */
export async function exitOf(pid: number, timeoutMs: number): Promise<boolean> {
  for (let waited = 0; waited < timeoutMs && isRunning(pid); waited += 50) await sleep(50);
  return !isRunning(pid);
}

/** SIGINT (an orderly stop), then SIGKILL if it has not exited after `graceMs`. */
export async function stopProcess(pid: number, graceMs = 5_000): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // already gone
  }
  if (await exitOf(pid, graceMs)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // exited meanwhile
  }
}
