// A first backfill's progress, as health and the start log show it: blocks done and to go, pace and time left,
// window by window while the follower reads the registry's history, and nothing once it has caught up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetworkGateway } from '../../src/chain/gateway.js';
import type { IndexingProgress, RegistryEventFollower } from '../../src/chain/registry-events.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

describe('backfill progress', () => {
  let system: TestSystem;
  let follower: RegistryEventFollower;

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    // a history of 400 blocks past the deploy block, read 50 at a time
    // in four calls: one long anvil_mine may outlast the client's timeout on a loaded machine
    for (let i = 0; i < 4; i++) await system.client.request({ method: 'anvil_mine' as never, params: ['0x64'] as never });
    const gateway = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: system.rpcUrl, ...LOCAL },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    });
    follower = gateway.followRegistry({ intervalMs: 60_000, maxLogRange: 50n });
  });
  afterAll(() => follower?.stop());

  it('reports each window of the first backfill, then nothing once caught up', async () => {
    const seen: IndexingProgress[] = [];
    // subscribers run as each window is delivered: the progress then is the one health would show
    follower.subscribe(() => {
      const progress = follower.indexing();
      if (progress) seen.push(progress);
    });
    expect(follower.indexing()).toBeUndefined();
    await follower.start();
    expect(seen.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]?.blocksDone).toBeGreaterThan(seen[i - 1]?.blocksDone as number);
      expect(seen[i]?.blocksToGo).toBeLessThan(seen[i - 1]?.blocksToGo as number);
    }
    const first = seen[0] as IndexingProgress;
    expect(first.blocksDone + first.blocksToGo).toBeGreaterThanOrEqual(400);
    expect(follower.indexing()).toBeUndefined();
  });
});
