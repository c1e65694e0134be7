// A local chain keeps the states of its last blocks in memory and writes none to disk: anvil's default cache of
// older states (~/.foundry/anvil/tmp) is removed only when anvil exits in order, so chains killed hard (tests, a
// crashed service) filled the disk with it. The chain here mines far more blocks than anvil's in-memory default
// and is then killed with SIGKILL; nothing new may be left in that folder.
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, numberToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { STATES_KEPT, startDevChain } from '../../src/chain/devchain.js';

const anvilCache = join(homedir(), '.foundry', 'anvil', 'tmp');
const cached = (): Set<string> => new Set(existsSync(anvilCache) ? readdirSync(anvilCache) : []);

describe('local chain states', () => {
  it('keeps the recent states in memory, writes none to disk, and leaves nothing behind when killed', async () => {
    const before = cached();
    const chain = await startDevChain({ chainId: 11142220 });
    try {
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      const blocks = 1_000; // anvil alone moves states beyond its first few hundred to disk
      await client.request({ method: 'anvil_mine' as 'eth_chainId', params: [numberToHex(blocks)] as never });
      const head = await client.getBlockNumber();
      expect(head).toBe(BigInt(blocks));

      const account = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
      expect(await client.getBalance({ address: account, blockNumber: head - BigInt(STATES_KEPT) + 1n })).toBeGreaterThan(0n);
      // an older state is refused as a non-archive node refuses it, while its block is still there
      await expect(client.getBalance({ address: account, blockNumber: 10n })).rejects.toThrow(/block height|out of range/i);
      expect((await client.getBlock({ blockNumber: 10n })).number).toBe(10n);
    } finally {
      process.kill(chain.pid, 'SIGKILL');
      await chain.exited;
    }
    expect([...cached()].filter((entry) => !before.has(entry))).toEqual([]);
  });
});
