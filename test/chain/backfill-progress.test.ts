// A first backfill's progress, as health and the start log show it: blocks done and to go, pace and time left,
// window by window while the follower reads the registry's history, and nothing once it has caught up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetworkGateway } from '../../src/chain/gateway.js';
import type { Checkpoint, IndexingProgress, RegistryEventFollower } from '../../src/chain/registry-events.js';
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

  const followerOf = (options: { maxLogRange: bigint; checkpointEveryMs: number }) =>
    createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: system.rpcUrl, ...LOCAL },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    }).followRegistry({ intervalMs: 60_000, ...options });

  it('makes checkpoints within a backfill, each the hash the chain has at its block, and one where stop() ends it', async () => {
    // one block a window from the deploy block: the first windows hold the deployment's logs (hash from the log)
    const within = followerOf({ maxLogRange: 1n, checkpointEveryMs: 0 });
    const made: Checkpoint[] = [];
    within.onCheckpoint((checkpoints) => made.push(checkpoints.at(-1) as Checkpoint));
    await within.start();
    await within.stop();
    const head = await system.client.getBlockNumber({ cacheTime: 0 });
    const from = system.deployment.registryDeployBlock;
    expect(made.map((c) => c.number)).toEqual(Array.from({ length: Number(head - from + 1n) }, (_, i) => from + BigInt(i)));
    for (const checkpoint of made) expect(checkpoint.hash).toBe((await system.client.getBlock({ blockNumber: checkpoint.number })).hash);

    // a stop() mid-backfill: the last block delivered is a checkpoint, even before checkpointEveryMs
    const stopped = followerOf({ maxLogRange: 1n, checkpointEveryMs: 600_000 });
    const last: Checkpoint[] = [];
    stopped.onCheckpoint((checkpoints) => last.push(checkpoints.at(-1) as Checkpoint));
    stopped.subscribe((_, toBlock) => {
      if (toBlock === from + 10n) void stopped.stop();
    });
    void stopped.start();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await stopped.stop();
    expect(stopped.processedBlock).toBeLessThan(head);
    expect(last.map((c) => c.number)).toEqual([stopped.processedBlock]);
    expect(last[0]?.hash).toBe((await system.client.getBlock({ blockNumber: stopped.processedBlock })).hash);
  });

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
