// The service's express app over test chains, built the way the composition root builds it, with an
// in-memory store and (optionally) a controlled clock.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import type { ChainGateway } from '../../src/chain/gateway.js';
import { type AppDeps, createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { createServices, type Services } from '../../src/services/index.js';
import type { Clock, KeyValueStore } from '../../src/store/key-value-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';

export interface TestApp {
  app: Express;
  services: Services;
  store: KeyValueStore;
  sessionSecret: Uint8Array;
  metrics: Metrics;
}

export interface TestAppOptions {
  store?: KeyValueStore;
  sessionSecret?: Uint8Array;
  clock?: Clock;
  publicUrl?: string;
  version?: string;
  /** Default: a registry of this app's own. */
  metrics?: Metrics;
  pushPolicy?: AppDeps['pushPolicy'];
  a2a?: AppDeps['a2a'];
}

export function testApp(chains: ChainGateway, options: TestAppOptions = {}): TestApp {
  const store = options.store ?? new MemoryStore(options.clock);
  const sessionSecret = options.sessionSecret ?? randomBytes(32);
  const metrics = options.metrics ?? new Metrics();
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:3000';
  const services = createServices({
    chains,
    store,
    sessionSecret,
    publicUrl,
    metrics,
    deepLinkScheme: 'selfapp',
    appName: 'Agent Identity Registry',
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const app = createApp({
    chains,
    services,
    store,
    logger: createLogger('silent'),
    version: options.version ?? '0.0.0-test',
    ...(options.clock ? { clock: options.clock } : {}),
    metrics,
    publicUrl,
    secret: sessionSecret,
    ...(options.pushPolicy ? { pushPolicy: options.pushPolicy } : {}),
    ...(options.a2a ? { a2a: options.a2a } : {}),
  });
  return { app, services, store, sessionSecret, metrics };
}
