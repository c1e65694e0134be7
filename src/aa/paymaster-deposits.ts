// Watches the local paymasters' deposits at the EntryPoint: once a deposit is under the threshold nobody will be
// sponsored for long, so an operator must hear of it before wallets start failing. Each read updates the gauges;
// a network going under the threshold is reported once (onLow), again only after it was topped up above it. Health
// reads on every request; a timer reads in between, so the report comes even when nobody asks.
import { formatEther } from 'viem';
import type { ChainGateway } from '../chain/gateway.js';
import type { NetworkName } from '../core/networks.js';
import type { Metrics } from '../metrics.js';
import { type PaymasterOnChain, readPaymasterDeposit } from './paymaster-deposit.js';

/** What health shows of a network's paymaster; amounts in the native token, as decimal text. */
export interface PaymasterDepositStatus {
  deposit: string;
  low: boolean;
  threshold: string;
}

export interface LowDepositReport {
  network: NetworkName;
  /** Wei. */
  deposit: bigint;
  threshold: bigint;
}

export interface PaymasterDepositOptions {
  chains: ChainGateway;
  /** The networks whose paymaster the service runs itself (a provider's is the provider's to watch). */
  paymasters: Partial<Record<NetworkName, PaymasterOnChain>>;
  /** Wei; under it a deposit is low. */
  lowThreshold: bigint;
  metrics?: Metrics;
  onLow?: (report: LowDepositReport) => void;
}

const READ_TIMEOUT_MS = 2_000;

export class PaymasterDeposits {
  readonly #options: PaymasterDepositOptions;
  readonly #low = new Set<NetworkName>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PaymasterDepositOptions) {
    this.#options = options;
  }

  /** Reads every local paymaster's deposit; a network whose chain does not answer in time is left out. */
  async check(): Promise<Partial<Record<NetworkName, PaymasterDepositStatus>>> {
    const { chains, paymasters, lowThreshold, metrics, onLow } = this.#options;
    const entries = await Promise.all(
      (Object.entries(paymasters) as [NetworkName, PaymasterOnChain][]).map(async ([network, paymaster]) => {
        let timer: NodeJS.Timeout | undefined;
        const deposit = await Promise.race([
          readPaymasterDeposit(chains.get(network).client, paymaster),
          new Promise<undefined>((resolve) => {
            timer = setTimeout(() => resolve(undefined), READ_TIMEOUT_MS);
          }),
        ])
          .catch(() => undefined)
          .finally(() => clearTimeout(timer));
        if (deposit === undefined) return [];
        const low = deposit < lowThreshold;
        metrics?.paymasterDepositRead(network, Number(formatEther(deposit)), low);
        if (low && !this.#low.has(network)) onLow?.({ network, deposit, threshold: lowThreshold });
        if (low) this.#low.add(network);
        else this.#low.delete(network);
        return [[network, { deposit: formatEther(deposit), low, threshold: formatEther(lowThreshold) }] as const];
      }),
    );
    return Object.fromEntries(entries.flat());
  }

  /** Reads now and every `intervalMs` until stop(); does nothing without a local paymaster. */
  start(intervalMs: number): void {
    if (this.#timer || Object.keys(this.#options.paymasters).length === 0) return;
    void this.check();
    this.#timer = setInterval(() => void this.check(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
