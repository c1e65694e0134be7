// Where no @foundry-rs/anvil-<platform> package is installed (a Mac: only linux-amd64 is in the lockfile), the local
// chains run the `anvil` on the PATH, as Foundry's installer puts it there. Here the machine's package is hidden by
// ANVIL_PLATFORM naming a platform whose package is not installed, and the PATH holds a folder with a symlink named
// anvil to the real binary: the lookup finds it, a chain runs on it, and so does the service; without it on the PATH,
// the error names both ways to get one.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { ANVIL_PLATFORM, anvilBinaryPath, startDevChain } from '../../src/devnet/devchain.js';
import { startServiceProcess } from '../support/service-process.js';

const ELSEWHERE = ANVIL_PLATFORM === 'darwin-arm64' ? 'linux-arm64' : 'darwin-arm64';
const dir = mkdtempSync(join(tmpdir(), 'anvil-path-'));
const onPath = join(dir, 'bin');
const empty = join(dir, 'empty');
mkdirSync(onPath);
mkdirSync(empty);
symlinkSync(anvilBinaryPath(), join(onPath, 'anvil'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('anvil from the PATH', () => {
  it("is found where the platform's package is missing, and runs a chain", async () => {
    const lookup = { platform: ELSEWHERE, searchPath: `${empty}:${onPath}` };
    expect(anvilBinaryPath(lookup)).toBe(join(onPath, 'anvil'));
    const chain = await startDevChain({ chainId: 11142220, anvil: lookup });
    try {
      expect(readFileSync(`/proc/${chain.pid}/cmdline`, 'utf8').split('\0')[0]).toBe(join(onPath, 'anvil'));
      expect(await createPublicClient({ transport: http(chain.rpcUrl) }).getChainId()).toBe(11142220);
    } finally {
      await chain.stop();
    }
  });

  it('without one, the error names the package and Foundry', () => {
    expect(() => anvilBinaryPath({ platform: ELSEWHERE, searchPath: empty })).toThrow(
      new RegExp(`No anvil binary for ${ELSEWHERE}: install @foundry-rs/anvil-${ELSEWHERE}@1\\.7\\.1 .*foundryup, so that anvil is on the PATH`),
    );
  });

  it('the service starts its chains with it (ANVIL_PLATFORM, PATH)', async () => {
    const service = await startServiceProcess(join(dir, 'data'), { ANVIL_PLATFORM: ELSEWHERE, PATH: `${onPath}:${process.env['PATH'] ?? ''}` });
    try {
      const health = (await (await fetch(`${service.base}/api/health`)).json()) as { networks: { rpc: string; up: boolean }[] };
      expect(health.networks).toEqual([
        expect.objectContaining({ rpc: 'embedded', up: true }),
        expect.objectContaining({ rpc: 'embedded', up: true }),
      ]);
      const pid = Number(readFileSync(join(dir, 'data', 'chains', 'testnet', 'anvil.pid'), 'utf8'));
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]).toBe(join(onPath, 'anvil'));
    } finally {
      await service.stop();
    }
  }, 60_000);
});
