import { z } from 'zod';
import type { ChainGateway } from '../../chain/gateway.js';
import type { StoreHealth } from '../../services/store-health.js';
import type { Route } from '../route.js';

export const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']).describe('degraded when any network or the store does not answer'),
    version: z.string().describe('Version of the service'),
    timestamp: z.string().describe('When the check ran, ISO 8601'),
    networks: z.array(
      z
        .object({
          network: z.enum(['mainnet', 'testnet']),
          chainId: z.number().int(),
          up: z.boolean(),
          blockNumber: z.number().int().nullable().describe('Latest block; null when the chain does not answer'),
          registry: z.string().describe('Address of the agent registry on this network'),
          rpc: z.enum(['embedded', 'external']).describe('embedded: a local chain the service runs itself'),
          restarting: z.boolean().optional().describe('true while an embedded chain that stopped is restarted from its saved state'),
          error: z.string().optional().describe('Why the network is down'),
        })
        .meta({ id: 'NetworkHealth' }),
    ),
    store: z
      .object({
        up: z.boolean(),
        error: z.string().optional().describe('Why the store does not answer'),
      })
      .describe('The store of sessions, limits and tasks (sqlite, or the shared Redis)'),
  })
  .meta({ id: 'Health' });

/** GET /api/health: per network, whether the chain answers, and whether the store does; 503 when any does not. */
export function healthRoutes(chains: ChainGateway, version: string, storeHealth: () => Promise<StoreHealth>): Route[] {
  return [
    {
      method: 'get',
      path: '/api/health',
      summary: 'Health of the service and of each network',
      description: 'Asks each chain for its id and latest block, and the store for a key. Not cached.',
      tags: ['Service'],
      cors: 'public',
      responses: {
        200: { description: 'Every network answers', schema: healthSchema },
        503: { description: 'At least one network does not answer (or answers for the wrong chain), or the store does not', schema: healthSchema },
      },
      handler: async (_req, res) => {
        const [networks, store] = await Promise.all([chains.health(), storeHealth()]);
        const up = store.up && networks.every((n) => n.up);
        const body: z.output<typeof healthSchema> = { status: up ? 'ok' : 'degraded', version, timestamp: new Date().toISOString(), networks, store };
        res.status(up ? 200 : 503).json(body);
      },
    },
  ];
}
