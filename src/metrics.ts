// Prometheus metrics of the service (prom-client), in one registry per service instance so tests and
// several apps in one process do not share counters.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { StoreSize } from './store/key-value-store.js';

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status (and JSON-RPC method on the A2A endpoint)',
    labelNames: ['route', 'method', 'status', 'rpc_method'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route, method and status (and JSON-RPC method on the A2A endpoint)',
    labelNames: ['route', 'method', 'status', 'rpc_method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly rpcRequests = new Counter({
    name: 'rpc_requests_total',
    help: 'JSON-RPC calls to the chain RPC, by network and method (each call of a batch counts; a multicall is one eth_call): what a rate-limited provider counts',
    labelNames: ['network', 'method'] as const,
    registers: [this.registry],
  });

  readonly rpcRoundTrips = new Counter({
    name: 'rpc_round_trips_total',
    help: 'HTTP requests to the chain RPC, by network (a JSON-RPC batch is one)',
    labelNames: ['network'] as const,
    registers: [this.registry],
  });

  readonly cacheLookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Cache lookups by cache and result (hit or miss)',
    labelNames: ['cache', 'result'] as const,
    registers: [this.registry],
  });

  readonly paymasterDeposit = new Gauge({
    name: 'aa_paymaster_deposit',
    help: "The local paymaster's deposit at the EntryPoint, in the native token, by network (as last read)",
    labelNames: ['network'] as const,
    registers: [this.registry],
  });

  readonly paymasterDepositLow = new Gauge({
    name: 'aa_paymaster_deposit_low',
    help: "1 while the local paymaster's deposit is under AA_PAYMASTER_LOW_DEPOSIT, else 0, by network",
    labelNames: ['network'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  cacheHit(cache: string): void {
    this.cacheLookups.inc({ cache, result: 'hit' });
  }

  cacheMiss(cache: string): void {
    this.cacheLookups.inc({ cache, result: 'miss' });
  }

  paymasterDepositRead(network: string, deposit: number, low: boolean): void {
    this.paymasterDeposit.set({ network }, deposit);
    this.paymasterDepositLow.set({ network }, low ? 1 : 0);
  }

  /** One HTTP request to a network's RPC, carrying these JSON-RPC methods. */
  rpcRequest(network: string, methods: readonly string[] = []): void {
    this.rpcRoundTrips.inc({ network });
    for (const method of methods) this.rpcRequests.inc({ network, method });
  }

  /**
   * The store's size and live keys, read at each scrape: how fast clients make it grow is what an operator watches
   * for (a store that fills the disk stops every write). A failed reading (Redis away) leaves the last values.
   */
  observeStore(store: { size(): Promise<StoreSize> }): void {
    // a scrape collects every metric at once: both gauges share the reading under way
    let pending: Promise<StoreSize> | undefined;
    const read = (): Promise<StoreSize> =>
      (pending ??= store.size().finally(() => {
        pending = undefined;
      }));
    const gauge = (name: string, help: string, value: (size: StoreSize) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['backend'] as const,
        registers: [this.registry],
        async collect() {
          try {
            const size = await read();
            this.set({ backend: size.backend }, value(size));
          } catch {
            // the store did not answer: its health says so; the gauge keeps its last value
          }
        },
      });
    gauge(
      'store_size_bytes',
      'Size of the store: the sqlite file with its write-ahead log, Redis used_memory (the whole server), or the memory store',
      (size) => size.bytes,
    );
    gauge('store_keys', 'Live keys in the store (Redis: DBSIZE, the whole database)', (size) => size.keys);
  }
}
