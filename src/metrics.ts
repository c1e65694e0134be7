// Prometheus metrics of the service (prom-client), in one registry per service instance so tests and
// several apps in one process do not share counters.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { StoreSize } from './store/key-value-store.js';

/** Where one network's stored agents-by-human index stands, as one instance sees it. */
export interface IndexWriterState {
  network: string;
  /** This instance holds the writer's lease. */
  writing: boolean;
  /** The fencing token of that lease (undefined while it does not write). */
  token: number | undefined;
  /** The stored checkpoint (shared by every instance on the store): its block and the token it was written under. */
  checkpoint: { block: bigint; token: number } | undefined;
}

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
   * Which instance writes each network's stored index and where that index stands, read at each scrape: an operator
   * sees one writer per network across the instances of a store, its fencing token, and the checkpoint advance.
   */
  observeIndexWriters(read: () => Promise<IndexWriterState[]>): void {
    let pending: Promise<IndexWriterState[]> | undefined;
    const states = (): Promise<IndexWriterState[]> =>
      (pending ??= read().finally(() => {
        pending = undefined;
      }));
    const gauge = (name: string, help: string, value: (state: IndexWriterState) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['network'] as const,
        registers: [this.registry],
        async collect() {
          try {
            for (const state of await states()) {
              const now = value(state);
              if (now === undefined) this.remove({ network: state.network });
              else this.set({ network: state.network }, now);
            }
          } catch {
            // the store did not answer: its health says so; the gauges keep their last values
          }
        },
      });
    gauge('registry_index_writer', "1 while this instance holds the writer's lease of the network's stored agent index, else 0", (state) =>
      state.writing ? 1 : 0,
    );
    gauge(
      'registry_index_writer_token',
      "The fencing token of this instance's writer lease (absent while it does not write)",
      (state) => state.token,
    );
    gauge('registry_index_checkpoint_block', 'The block the stored agent index is valid at (shared by the instances of one store)', (state) =>
      state.checkpoint === undefined ? undefined : Number(state.checkpoint.block),
    );
    gauge('registry_index_checkpoint_token', 'The fencing token the stored checkpoint was written under', (state) => state.checkpoint?.token);
  }

  /** Where each network's agents-by-human index is held, read at each scrape: in memory while indexing, on disk once live. */
  observeIndexStorage(read: () => Record<string, 'memory' | 'disk'>): void {
    new Gauge({
      name: 'registry_index_on_disk',
      help: "1 once the network's agents-by-human index has moved to its temporary database (live), 0 while it is in memory",
      labelNames: ['network'] as const,
      registers: [this.registry],
      collect() {
        for (const [network, storage] of Object.entries(read())) this.set({ network }, storage === 'disk' ? 1 : 0);
      },
    });
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
