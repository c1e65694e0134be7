import { z } from 'zod';
import type { PaymasterDepositStatus } from '../../aa/paymaster-deposits.js';
import type { ChainGateway } from '../../chain/gateway.js';
import type { IndexingProgress } from '../../chain/registry-events.js';
import type { NetworkName } from '../../core/networks.js';
import type { StoreHealth } from '../../services/store-health.js';
import type { Route } from '../route.js';

export const healthSchema = z
  .object({
    status: z
      .enum(['ok', 'indexing', 'degraded'])
      .describe(
        'degraded when any network or the store does not answer; indexing while a network backfills its registry index (answers read the chain meanwhile)',
      ),
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
          indexing: z
            .object({
              blocksDone: z.number().int(),
              blocksToGo: z.number().int(),
              blocksPerSecond: z.number().int(),
              etaSeconds: z.number().int().nullable().describe('null until the pace is known'),
            })
            .optional()
            .describe("While the registry's logs are read from its deploy block: how far, how fast, and how long is left"),
          paymaster: z
            .object({
              deposit: z.string().describe("The paymaster's deposit at the EntryPoint, in the native token (decimal)"),
              low: z.boolean().describe('true while the deposit is under the threshold: sponsorship will soon stop'),
              threshold: z.string().describe('AA_PAYMASTER_LOW_DEPOSIT, in the native token'),
            })
            .optional()
            .describe("The local paymaster's deposit, on a network whose ERC-4337 stack the service runs (absent if unread)"),
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

/**
 * GET /api/health: per network, whether the chain answers (and its local paymaster's deposit), and whether the store
 * does; 503 when a chain or the store does not. A low deposit does not make the service degraded: it still serves.
 */
export function healthRoutes(
  chains: ChainGateway,
  version: string,
  storeHealth: () => Promise<StoreHealth>,
  paymasterDeposits: () => Promise<Partial<Record<NetworkName, PaymasterDepositStatus>>>,
  indexing: () => Partial<Record<NetworkName, IndexingProgress>> = () => ({}),
): Route[] {
  return [
    {
      method: 'get',
      path: '/api/health',
      summary: 'Health of the service and of each network',
      description: "Asks each chain for its id and latest block (and the local paymaster's deposit), and the store for a key. Not cached.",
      tags: ['Service'],
      cors: 'public',
      responses: {
        200: { description: 'Every network answers', schema: healthSchema },
        503: { description: 'At least one network does not answer (or answers for the wrong chain), or the store does not', schema: healthSchema },
      },
      handler: async (_req, res) => {
        const [chainHealth, store, deposits] = await Promise.all([chains.health(), storeHealth(), paymasterDeposits()]);
        const progress = indexing();
        const networks = chainHealth.map((n) => {
          const paymaster = deposits[n.network];
          const backfill = progress[n.network];
          return { ...n, ...(paymaster ? { paymaster } : {}), ...(backfill ? { indexing: backfill } : {}) };
        });
        const up = store.up && networks.every((n) => n.up);
        const status = !up ? 'degraded' : networks.some((n) => n.indexing) ? 'indexing' : 'ok';
        const body: z.output<typeof healthSchema> = { status, version, timestamp: new Date().toISOString(), networks, store };
        res.status(up ? 200 : 503).json(body);
      },
    },
  ];
}
