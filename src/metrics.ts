// Prometheus metrics of the service (prom-client), in one registry per service instance so tests and
// several apps in one process do not share counters.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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
    help: 'HTTP round trips to the chain RPC, by network (a JSON-RPC batch or multicall counts once)',
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

  rpcRequest(network: string): void {
    this.rpcRequests.inc({ network });
  }
}
