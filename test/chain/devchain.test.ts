// A local chain keeps the states of its last blocks in memory and writes none to disk. anvil's default writes the
// states of older blocks to a folder of ~/.foundry/anvil/tmp that it never removes, so chains (killed or not) filled
// the disk with them. Here a chain mines far more blocks than anvil keeps in memory by default, is reorganised
// (anvil then makes a cache folder even when it writes no state) and is killed with SIGKILL: nothing may be left in
// ~/.foundry/anvil/tmp, nor of the chain's own cache folder.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http, numberToHex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { STATES_KEPT, startDevChain } from '../../src/devnet/devchain.js';

const anvilCache = join(homedir(), '.foundry', 'anvil', 'tmp');
const cached = (): Set<string> => new Set(existsSync(anvilCache) ? readdirSync(anvilCache) : []);
const stateDir = mkdtempSync(join(tmpdir(), 'devchain-'));

afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('local chain states', () => {
  it('keeps the recent states in memory, writes none to disk, and leaves nothing behind when killed', async () => {
    const before = cached();
    const chain = await startDevChain({ chainId: 11142220, stateDir });
    try {
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      const request = (method: string, params: unknown[]) => client.request({ method: method as 'eth_chainId', params: params as never });
      const blocks = 1_000; // anvil alone moves states beyond its first few hundred to disk
      await request('anvil_mine', [numberToHex(blocks)]);
      await request('anvil_reorg', [2, []]);
      const head = await client.getBlockNumber();
      expect(head).toBe(BigInt(blocks));

      const account = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
      expect(await client.getBalance({ address: account, blockNumber: head - BigInt(STATES_KEPT) + 1n })).toBeGreaterThan(0n);
      // an older state is refused as a non-archive node refuses it, while its block is still there
      await expect(client.getBalance({ address: account, blockNumber: 10n })).rejects.toThrow(/block height|out of range/i);
      expect((await client.getBlock({ blockNumber: 10n })).number).toBe(10n);
      expect(existsSync(join(stateDir, 'anvil-cache'))).toBe(true);
    } finally {
      process.kill(chain.pid, 'SIGKILL');
      await chain.exited;
    }
    expect([...cached()].filter((entry) => !before.has(entry))).toEqual([]);
    expect(readdirSync(stateDir)).not.toContain('anvil-cache');
  });
});
