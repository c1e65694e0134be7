// The express application: shared middleware once, then one router per resource.
import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { ChainGateway } from '../chain/gateway.js';
import type { Services } from '../services/index.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { perIpLimit } from './middleware/rate-limit.js';
import { healthRoutes } from './routes/health.js';
import { registrationRoutes } from './routes/registration.js';

export interface AppDeps {
  chains: ChainGateway;
  services: Services;
  /** Where rate-limit counters live. */
  store: KeyValueStore;
  logger: Logger;
  version: string;
  clock?: Clock;
}

/** Session creations per client address and minute (register and its challenges). */
export const SESSION_CREATION_LIMIT = 10;

const REQUEST_ID = /^[\w.-]{1,64}$/;

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('x-request-id', id);
        return id;
      },
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      // Session tokens travel in the query string: log the path only, and no headers.
      serializers: {
        req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
          id: req.id,
          method: req.method,
          path: req.url.split('?')[0],
          remoteAddress: req.remoteAddress,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(express.json({ limit: '200kb' }));

  const sessionLimit = perIpLimit({
    store: deps.store,
    name: 'session-creation',
    what: 'session creations',
    limit: SESSION_CREATION_LIMIT,
    windowMs: 60_000,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });

  app.use(healthRoutes(deps.chains, deps.version));
  app.use(registrationRoutes(deps.services.registration, sessionLimit));

  app.use('/api', notFoundHandler);
  app.use(errorHandler);
  return app;
}
