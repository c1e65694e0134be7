import { Router } from 'express';
import type { ChainGateway } from '../../chain/gateway.js';

/** GET /api/health: per network, whether the chain answers; 503 when any does not. */
export function healthRoutes(chains: ChainGateway, version: string): Router {
  const router = Router();
  router.get('/api/health', async (_req, res) => {
    const networks = await chains.health();
    const up = networks.every((n) => n.up);
    res
      .status(up ? 200 : 503)
      .set('Cache-Control', 'no-store')
      .json({ status: up ? 'ok' : 'degraded', version, timestamp: new Date().toISOString(), networks });
  });
  return router;
}
