// The registry log follower when its chain misbehaves: a poll that fails makes it not live at once (caches stop
// answering from what may have changed unheard), a chain known down likewise, and a chain that went back to an
// earlier state (a local chain restarted from its state file) makes it start over from the deploy block, and a
// reorganisation (a block it delivered is no longer the chain's) takes it back to the last block still on the chain.
import { BlockNotFoundError, type Hex, hexToBigInt, pad, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { ChainClient } from '../../src/chain/clients.js';
import { RegistryEventFollower } from '../../src/chain/registry-events.js';

const REGISTRY = '0x0000000000000000000000000000000000000001';

/**
 * A chain of `head` blocks with one registry log in each block from 3 on; `fail` makes every call throw, and
 * `failLogsFrom` every eth_getLogs whose range ends at or after that block. Blocks from `forkedFrom` on are those of
 * branch `branch` (their hashes differ from other branches'). `polls` counts the reads of the head.
 */
function fakeChain() {
  const chain = {
    head: 10n,
    fail: false,
    failLogsFrom: undefined as bigint | undefined,
    branch: 0,
    forkedFrom: 0n,
    polls: 0,
    /** Called after each eth_getLogs is answered, with the range's last block. */
    onLogs: undefined as ((toBlock: bigint) => void) | undefined,
    client: {
      getBlock: async ({ blockNumber, blockTag }: { blockNumber?: bigint; blockTag?: 'latest' }) => {
        if (chain.fail) throw new Error('testnet chain unreachable: connection refused');
        if (blockTag === 'latest') chain.polls++;
        const number = blockTag === 'latest' ? chain.head : (blockNumber as bigint);
        if (number > chain.head) throw new BlockNotFoundError({ blockNumber: number });
        const hashOf = (at: bigint) => pad(toHex(at * 1000n + BigInt(at >= chain.forkedFrom ? chain.branch : 0)));
        return { number, hash: hashOf(number), parentHash: hashOf(number - 1n) };
      },
      getBlockNumber: async () => {
        if (chain.fail) throw new Error('testnet chain unreachable: connection refused');
        return chain.head;
      },
      // eth_getLogs as the follower sends it (through request: a backfill filters topics)
      request: async ({ method, params }: { method: string; params: [{ fromBlock: Hex; toBlock: Hex }] }) => {
        if (chain.fail) throw new Error('testnet chain unreachable: connection refused');
        if (method !== 'eth_getLogs') throw new Error(`unexpected ${method}`);
        const [fromBlock, toBlock] = [hexToBigInt(params[0].fromBlock), hexToBigInt(params[0].toBlock)];
        if (chain.failLogsFrom !== undefined && toBlock >= chain.failLogsFrom) throw new Error('eth_getLogs: upstream timeout');
        const afterwards = chain.onLogs;
        const logs: object[] = [];
        for (let block = fromBlock < 3n ? 3n : fromBlock; block <= toBlock; block++) {
          const blockHash = pad(toHex(block * 1000n + BigInt(block >= chain.forkedFrom ? chain.branch : 0)));
          logs.push({ address: REGISTRY, topics: [], data: '0x', blockNumber: toHex(block), logIndex: '0x0', blockHash });
        }
        afterwards?.(toBlock);
        return logs;
      },
    } as unknown as ChainClient,
  };
  return chain;
}

/**
 * A follower of `chain` reading two blocks a window, with what it delivered (each block's hash, as a reorg listener
 * keeps them: dropped after the ancestor) and the ancestors it went back to.
 */
function windowsOfTwo(chain: ReturnType<typeof fakeChain>) {
  const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000, maxLogRange: 2n });
  const delivered = new Map<bigint, Hex>();
  const reorgs: bigint[] = [];
  follower.subscribe((logs) => {
    for (const log of logs) delivered.set(log.blockNumber, log.blockHash as Hex);
  });
  follower.onReorg((ancestor) => {
    reorgs.push(ancestor);
    for (const block of delivered.keys()) if (block > ancestor) delivered.delete(block);
  });
  return { follower, delivered, reorgs };
}

describe('RegistryEventFollower', () => {
  it('is not live from a failed poll until one succeeds', async () => {
    const chain = fakeChain();
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000 });
    await follower.start();
    expect(follower.isLive()).toBe(true);
    chain.fail = true;
    await expect(follower.syncNow()).rejects.toThrow(/unreachable/);
    expect(follower.isLive()).toBe(false);
    chain.fail = false;
    await follower.syncNow();
    expect(follower.isLive()).toBe(true);
    await follower.stop();
  });

  it('is not live while its chain is known down', async () => {
    const chain = fakeChain();
    let down = false;
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000, chainDown: () => down });
    await follower.start();
    down = true;
    expect(follower.isLive()).toBe(false);
    down = false;
    expect(follower.isLive()).toBe(true);
    await follower.stop();
  });

  it('starts over from the deploy block when the chain went back behind what it delivered', async () => {
    const chain = fakeChain();
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000 });
    const delivered: bigint[] = [];
    let rewinds = 0;
    follower.subscribe((logs) => delivered.push(...logs.map((log) => log.blockNumber)));
    follower.onRewind(() => {
      rewinds++;
      delivered.length = 0;
    });
    await follower.start();
    expect(delivered).toEqual([3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n]);

    await follower.rewind(12n); // a restart that lost nothing it had seen
    expect(rewinds).toBe(0);
    expect(follower.processedBlock).toBe(10n);

    chain.head = 8n; // blocks 9 and 10 were lost
    await follower.rewind(8n);
    expect(rewinds).toBe(1);
    expect(follower.processedBlock).toBe(0n);
    expect(follower.isLive()).toBe(false);
    await follower.syncNow();
    expect(delivered).toEqual([3n, 4n, 5n, 6n, 7n, 8n]);
    expect(follower.isLive()).toBe(true);
    await follower.stop();
  });

  it('goes back to the last block still on the chain after a reorganisation, and delivers the new branch from there', async () => {
    const chain = fakeChain();
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000 });
    const delivered: string[] = [];
    const reorgs: bigint[] = [];
    follower.subscribe((logs) => delivered.push(...logs.map((log) => `${log.blockNumber}:${log.blockHash}`)));
    follower.onReorg((ancestor) => reorgs.push(ancestor));
    await follower.start();
    chain.head = 12n;
    await follower.syncNow(); // polls ended at 10 and 12
    delivered.length = 0;

    // blocks 11 and 12 replaced by another branch of the same height
    chain.branch = 1;
    chain.forkedFrom = 11n;
    await follower.syncNow();
    expect(reorgs).toEqual([10n]);
    expect(delivered).toEqual([11n, 12n].map((n) => `${n}:${pad(toHex(n * 1000n + 1n))}`));
    expect(follower.processedBlock).toBe(12n);
    expect(follower.isLive()).toBe(true);

    // nothing changed: no reorg, nothing delivered again
    delivered.length = 0;
    await follower.syncNow();
    expect(reorgs).toEqual([10n]);
    expect(delivered).toEqual([]);
    await follower.stop();
  });

  it("checkpoints every window within a reorganisation's reach of the head: a poll that fails after some leaves none of them unchecked", async () => {
    const chain = fakeChain();
    const { follower, delivered, reorgs } = windowsOfTwo(chain);
    await follower.start();
    // twenty blocks more, read two at a time; the node times out from block 17 on, after 11-16 were delivered
    chain.head = 30n;
    chain.failLogsFrom = 17n;
    await expect(follower.syncNow()).rejects.toThrow(/upstream timeout/);
    expect(follower.processedBlock).toBe(16n);
    // blocks from 14 on are replaced by another branch, and the node answers again
    chain.branch = 1;
    chain.forkedFrom = 14n;
    chain.failLogsFrom = undefined;
    await follower.syncNow();
    expect(reorgs).toEqual([12n]);
    for (let block = 3n; block <= 30n; block++) expect(delivered.get(block)).toBe(pad(toHex(block * 1000n + (block >= 14n ? 1n : 0n))));
    await follower.stop();
  });

  it('sees a branch that forks below the windows a poll already delivered, and goes back under the fork', async () => {
    const chain = fakeChain();
    const { follower, delivered, reorgs } = windowsOfTwo(chain);
    await follower.start();
    chain.head = 30n;
    // once blocks 15-16 are read, the chain switches to a branch forked at block 12: the windows after them are read
    // from it, and their own hashes match it
    chain.onLogs = (toBlock) => {
      if (toBlock !== 16n || chain.branch === 1) return;
      chain.branch = 1;
      chain.forkedFrom = 12n;
    };
    await follower.syncNow();
    expect(reorgs).toEqual([10n]);
    for (let block = 3n; block <= 30n; block++) expect(delivered.get(block)).toBe(pad(toHex(block * 1000n + (block >= 12n ? 1n : 0n))));
    await follower.stop();
  });

  it('runs one poll loop after a stop() and start() while a poll is under way', async () => {
    const chain = fakeChain();
    let wake: (() => void) | undefined;
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, {
      intervalMs: 100,
      heads: (onHead) => {
        wake = onHead;
        return () => undefined;
      },
    });
    await follower.start();
    const stopped = follower.stop(); // the poll of start() may still be queued: not awaited
    await follower.start();
    await stopped;
    wake?.();
    chain.polls = 0;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // one loop polls at most ten times a second (every 100 ms, later on a busy machine); two would poll twenty
    expect(chain.polls).toBeLessThanOrEqual(12);
    expect(chain.polls).toBeGreaterThan(0);
    await follower.stop();
  });

  it('ready(signal): a waiter that gives up is let go, the others are resolved at the catch-up', async () => {
    const chain = fakeChain();
    chain.fail = true;
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000 });
    void follower.start().catch(() => undefined);
    const patient = follower.ready();
    await expect(follower.ready(AbortSignal.timeout(20))).rejects.toThrow(/timeout/i);
    const aborted = new AbortController();
    aborted.abort(new Error('the client went away'));
    await expect(follower.ready(aborted.signal)).rejects.toThrow(/went away/);
    chain.fail = false;
    await follower.syncNow();
    await patient;
    await follower.ready(AbortSignal.timeout(20));
    await follower.stop();
  });

  it('starts over from the deploy block when no block it kept a hash of is on the chain any more', async () => {
    const chain = fakeChain();
    const follower = new RegistryEventFollower(chain.client, REGISTRY, 1n, { intervalMs: 60_000 });
    let rewinds = 0;
    const reorgs: bigint[] = [];
    follower.onRewind(() => rewinds++);
    follower.onReorg((ancestor) => reorgs.push(ancestor));
    await follower.start();
    chain.branch = 2;
    chain.forkedFrom = 2n;
    await follower.syncNow();
    expect(rewinds).toBe(1);
    expect(reorgs).toEqual([]);
    expect(follower.processedBlock).toBe(10n);
    expect(follower.isLive()).toBe(true);
    await follower.stop();
  });
});
