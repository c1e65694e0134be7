// Where a start spends its time: main logs the phases once the service is up (the `startup` field, read by
// npm run bench:startup). performance.now() counts from the start of the process, so a timer created at 0 puts
// Node's own start and the imports in the first phase.

/** One embedded chain: anvil spawned until its RPC answers, then our contracts deployed (first start) or checked. */
export interface ChainTimings {
  rpcMs: number;
  contractsMs: number;
  deployed: boolean;
}

export interface StartupTimings {
  /** When the process started (epoch ms): a launcher can tell its own share (npm, the build check) from ours. */
  processStartedAt: number;
  /** Consecutive phases, in order, in ms. */
  phases: Record<string, number>;
  /** The embedded chains, which start side by side within the `chains` phase. */
  chains: Record<string, ChainTimings>;
  /** From the timer's origin to the last phase's end. */
  totalMs: number;
}

const ms = (value: number): number => Math.round(value * 10) / 10;

export class StartupTimer {
  readonly #origin: number;
  #last: number;
  readonly #phases: Record<string, number> = {};
  readonly #chains: Record<string, ChainTimings> = {};

  /** `origin` 0: from the start of the process; default: from now. */
  constructor(origin = performance.now()) {
    this.#origin = origin;
    this.#last = origin;
  }

  /** Ends the phase `name`: the time since the previous phase ended. */
  end(name: string): void {
    const now = performance.now();
    this.#phases[name] = ms(now - this.#last);
    this.#last = now;
  }

  chain(network: string, timings: ChainTimings): void {
    this.#chains[network] = { ...timings, rpcMs: ms(timings.rpcMs), contractsMs: ms(timings.contractsMs) };
  }

  summary(): StartupTimings {
    return {
      processStartedAt: ms(performance.timeOrigin),
      phases: { ...this.#phases },
      chains: { ...this.#chains },
      totalMs: ms(this.#last - this.#origin),
    };
  }
}
