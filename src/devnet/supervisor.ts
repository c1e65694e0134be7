// Keeps one embedded anvil running and its state on disk.
//
// - Restart: when anvil exits without being asked (killed, crashed), it is started again from its state file on the
//   same port, so every client, the local bundler and paymaster and the identity-app CLI (`rpc-url`) keep their URL.
//   Attempts follow `restartDelaysMs`; while none has succeeded the chain counts as down (downReason(): its clients
//   fail at once with the named error, health shows the network down and restarting). If every attempt fails,
//   onFatal is called: the service exits non-zero, so that whatever supervises the service starts it afresh.
// - Durability: the supervisor writes the state file itself (chain-state.ts) whenever the chain's head moved (a
//   watch every 250 ms), and makeDurable() lets a caller wait until what the chain holds now is in the file, so
//   the service reports nothing (a completed session, a relayed transaction, a UserOperation receipt) that a hard
//   kill could take back. `durableBlock` is that watermark: every block up to it is in the file. It is also written
//   to `durable-block` beside the state file, for programs outside the service (the identity-app CLI) that report
//   a transaction they sent to the chain.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainRunState } from '../chain/reachability.js';
import { chainUnreachable } from '../core/errors.js';
import { blockNumberOf, DURABLE_BLOCK_FILE, dumpState, writeAtomically } from './chain-state.js';
import { type AnvilLookup, type DevChain, startDevChain } from './devchain.js';

export type SupervisorEvent =
  | { kind: 'exited'; pid: number; code: number | null; signal: string | null }
  | { kind: 'restarted'; attempt: number; pid: number; downMs: number; head: bigint }
  | { kind: 'restart-failed'; attempt: number; error: unknown }
  | { kind: 'dump-failed'; error: unknown };

export interface SupervisorOptions {
  /** The network's name, for the errors callers see. */
  network: string;
  chainId: number;
  /** Where the anvil binary is found (default: this platform's package, else the PATH). */
  anvil?: AnvilLookup;
  /** Holds state.json, durable-block, anvil.pid and rpc-url. */
  stateDir: string;
  /** Wait before each restart attempt; as many attempts as entries. Default 0, 250, 500, 1000, 2000 ms. */
  restartDelaysMs?: readonly number[];
  /** How often the head is checked for blocks to write to the state file (default 250 ms). */
  watchIntervalMs?: number;
  onEvent?: (event: SupervisorEvent) => void;
  /** Every restart attempt failed: the chain stays down. */
  onFatal?: (error: Error) => void;
}

const DEFAULT_RESTART_DELAYS_MS = [0, 250, 500, 1_000, 2_000] as const;
const DEFAULT_WATCH_INTERVAL_MS = 250;
/** The head check of the watch and of makeDurable: a local anvil answers in a few ms. */
const HEAD_TIMEOUT_MS = 5_000;

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;

export class ChainSupervisor implements DevChain, ChainRunState {
  readonly #options: SupervisorOptions;
  readonly #stateFile: string;
  readonly #rpcUrlFile: string;
  readonly #durableBlockFile: string;
  readonly #restartListeners = new Set<(head: bigint) => void>();
  #chain: DevChain;
  #down: string | undefined;
  #stopping: Promise<void> | undefined;
  #durableBlock = -1n;
  #dumping: Promise<void> | undefined;
  #watch: NodeJS.Timeout | undefined;
  #restarts = 0;

  private constructor(chain: DevChain, options: SupervisorOptions) {
    this.#chain = chain;
    this.#options = options;
    this.#stateFile = join(options.stateDir, 'state.json');
    this.#rpcUrlFile = join(options.stateDir, 'rpc-url');
    this.#durableBlockFile = join(options.stateDir, DURABLE_BLOCK_FILE);
  }

  /** Starts anvil from the state file (if there is one) and supervises it. */
  static async start(options: SupervisorOptions): Promise<ChainSupervisor> {
    const chain = await startDevChain({ chainId: options.chainId, stateDir: options.stateDir, ...(options.anvil ? { anvil: options.anvil } : {}) });
    const supervisor = new ChainSupervisor(chain, options);
    try {
      // Tools such as the identity-app CLI find the running chain here, while it runs.
      writeFileSync(supervisor.#rpcUrlFile, `${chain.rpcUrl}\n`, { mode: 0o600 });
      await supervisor.#setDurable(await blockNumberOf(chain.rpcUrl, HEAD_TIMEOUT_MS));
    } catch (error) {
      await supervisor.stop();
      throw error;
    }
    supervisor.#follow(chain);
    supervisor.#scheduleWatch();
    return supervisor;
  }

  get chainId(): number {
    return this.#options.chainId;
  }

  /** Stays the same across restarts. */
  get rpcUrl(): string {
    return this.#chain.rpcUrl;
  }

  /** The current anvil's process id (a restart changes it). */
  get pid(): number {
    return this.#chain.pid;
  }

  get exited(): DevChain['exited'] {
    return this.#chain.exited;
  }

  /** Every block up to this one is in the state file. */
  get durableBlock(): bigint {
    return this.#durableBlock;
  }

  downReason(): string | undefined {
    return this.#down;
  }

  restarts(): number {
    return this.#restarts;
  }

  /** Calls `listener` with the chain's head after each restart (blocks after the last dump are gone). */
  onRestart(listener: (head: bigint) => void): () => void {
    this.#restartListeners.add(listener);
    return () => this.#restartListeners.delete(listener);
  }

  /**
   * Resolves once every block up to `block` (default: every block the chain holds now) is in the state file: at
   * once when the last dump holds it, else after one dump (tens of ms; concurrent callers share it, and a dump
   * asked for after the block was mined counts). Rejects with the named error while the chain is down.
   */
  async makeDurable(block?: bigint): Promise<void> {
    for (;;) {
      if (this.#down) throw chainUnreachable(this.#options.network, this.#down);
      if (block !== undefined && block <= this.#durableBlock) return;
      const rpcUrl = this.#chain.rpcUrl;
      let head: bigint;
      try {
        head = block ?? (await blockNumberOf(rpcUrl, HEAD_TIMEOUT_MS));
      } catch (error) {
        throw chainUnreachable(this.#options.network, this.#down ?? firstLine(error));
      }
      if (head <= this.#durableBlock) return;
      // a dump under way may have been asked for before the block was mined: then it does not count, and one more
      // is asked for (after it, so that the file is written in order)
      this.#dumping ??= this.#dump(rpcUrl).finally(() => {
        this.#dumping = undefined;
      });
      await this.#dumping;
      if (head <= this.#durableBlock) return;
      block = head;
    }
  }

  /** Writes the state left in the file, stops anvil (SIGINT) and stops supervising. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      clearTimeout(this.#watch);
      if (!this.#down) await this.makeDurable().catch((error: unknown) => this.#options.onEvent?.({ kind: 'dump-failed', error }));
      await this.#chain.stop();
      rmSync(this.#rpcUrlFile, { force: true });
    })();
    return this.#stopping;
  }

  async #dump(rpcUrl: string): Promise<void> {
    await this.#setDurable(await dumpState(rpcUrl, this.#stateFile));
  }

  /** The watermark moves (here and in its file) only forward, except after a restart: then it is what was loaded. */
  async #setDurable(block: bigint, restarted = false): Promise<void> {
    if (block <= this.#durableBlock && !restarted) return;
    this.#durableBlock = block;
    await writeAtomically(this.#durableBlockFile, `${block}\n`).catch((error: unknown) => this.#options.onEvent?.({ kind: 'dump-failed', error }));
  }

  #scheduleWatch(): void {
    if (this.#stopping) return;
    this.#watch = setTimeout(() => {
      const check = this.#down ? Promise.resolve() : this.makeDurable();
      void check.catch((error: unknown) => this.#options.onEvent?.({ kind: 'dump-failed', error })).finally(() => this.#scheduleWatch());
    }, this.#options.watchIntervalMs ?? DEFAULT_WATCH_INTERVAL_MS);
    this.#watch.unref();
  }

  #follow(chain: DevChain): void {
    void chain.exited.then(({ code, signal }) => {
      if (this.#stopping || chain !== this.#chain) return;
      this.#down = `the local chain stopped (${signal ?? `exit code ${code}`}) and is being restarted from its saved state`;
      this.#options.onEvent?.({ kind: 'exited', pid: chain.pid, code, signal });
      void this.#restart(Date.now());
    });
  }

  async #restart(downSince: number): Promise<void> {
    const delays = this.#options.restartDelaysMs ?? DEFAULT_RESTART_DELAYS_MS;
    const port = Number(new URL(this.#chain.rpcUrl).port);
    let lastError: unknown;
    for (const [index, delay] of delays.entries()) {
      const attempt = index + 1;
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.#stopping) return;
      this.#down = `the local chain is being restarted from its saved state (attempt ${attempt} of ${delays.length})`;
      try {
        const { chainId, stateDir, anvil } = this.#options;
        const chain = await startDevChain({ chainId, stateDir, port, ...(anvil ? { anvil } : {}) });
        if (this.#stopping) {
          await chain.stop();
          return;
        }
        const head = await blockNumberOf(chain.rpcUrl, HEAD_TIMEOUT_MS).catch(async (error: unknown) => {
          await chain.stop();
          throw error;
        });
        this.#chain = chain;
        // what the chain holds now is what the file holds; blocks mined from here on are new
        await this.#setDurable(head, true);
        this.#restarts++;
        this.#down = undefined;
        this.#follow(chain);
        this.#options.onEvent?.({ kind: 'restarted', attempt, pid: chain.pid, downMs: Date.now() - downSince, head });
        for (const listener of this.#restartListeners) listener(head);
        return;
      } catch (error) {
        lastError = error;
        this.#options.onEvent?.({ kind: 'restart-failed', attempt, error });
      }
    }
    this.#down = `the local chain stopped and could not be restarted: ${firstLine(lastError)}`;
    this.#options.onFatal?.(
      new Error(`anvil (chain ${this.#options.chainId}) could not be restarted after ${delays.length} attempts: ${firstLine(lastError)}`),
    );
  }
}

/** How the composition root logs a supervisor event: level, fields, message. */
export function describeSupervisorEvent(event: SupervisorEvent): { level: 'info' | 'warn'; fields: Record<string, unknown>; message: string } {
  switch (event.kind) {
    case 'exited':
      return {
        level: 'warn',
        fields: { anvilPid: event.pid, code: event.code, signal: event.signal },
        message: 'local chain stopped; restarting it from its saved state',
      };
    case 'restarted':
      return {
        level: 'info',
        fields: { anvilPid: event.pid, attempt: event.attempt, downMs: event.downMs, head: Number(event.head) },
        message: 'local chain restarted from its saved state',
      };
    case 'restart-failed':
      return { level: 'warn', fields: { attempt: event.attempt, err: event.error }, message: 'local chain restart failed' };
    case 'dump-failed':
      return { level: 'warn', fields: { err: event.error }, message: "could not write the local chain's state file" };
  }
}
