// Builds the use cases from their ports; shared by the composition root and the tests.
import type { ChainGateway } from '../chain/gateway.js';
import { SessionRepository } from '../sessions/session-repository.js';
import { SessionTokens } from '../sessions/session-token.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { RegistrationService } from './registration.js';

export interface ServiceOptions {
  chains: ChainGateway;
  store: KeyValueStore;
  sessionSecret: Uint8Array;
  publicUrl: string;
  deepLinkScheme: string;
  appName: string;
  clock?: Clock;
}

export interface Services {
  registration: RegistrationService;
}

export function createServices(options: ServiceOptions): Services {
  const clock = options.clock ?? Date.now;
  const tokens = new SessionTokens(options.sessionSecret, clock);
  const sessions = new SessionRepository(options.store, clock);
  return {
    registration: new RegistrationService({
      chains: options.chains,
      sessions,
      tokens,
      clock,
      publicUrl: options.publicUrl,
      deepLinkScheme: options.deepLinkScheme,
      appName: options.appName,
    }),
  };
}
