// The express application: shared middleware once, then one router per resource.
import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { ChainGateway } from '../chain/gateway.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { healthRoutes } from './routes/health.js';

export interface AppDeps {
  chains: ChainGateway;
  logger: Logger;
  version: string;
}

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

  app.use(healthRoutes(deps.chains, deps.version));

  app.use('/api', notFoundHandler);
  app.use(errorHandler);
  return app;
}
