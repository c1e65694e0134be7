// Our Celo chain definitions are viem's own, and the service does not load 'viem/chains' (every chain viem knows,
// ~740 modules, a start's ~180 ms) to get them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Chain } from 'viem';
import * as viemChains from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { celo, celoSepolia } from '../../src/chain/celo-chains.js';

/** A chain without its `extend` helper, a closure made anew by each defineChain. */
const data = ({ extend: _, ...chain }: Chain & { extend?: unknown }) => chain;

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

describe('Celo chains', () => {
  it('are defined as viem defines them', () => {
    expect(data(celo)).toEqual(data(viemChains.celo));
    expect(data(celoSepolia)).toEqual(data(viemChains.celoSepolia));
  });

  it("are not imported from 'viem/chains' by the service (the client SDK may: its users load what they choose)", () => {
    const importers = sources('src')
      .filter((file) => !file.startsWith(join('src', 'client')))
      .filter((file) => /^import [^;]*from 'viem\/chains'/m.test(readFileSync(file, 'utf8')));
    expect(importers).toEqual([]);
  });
});
