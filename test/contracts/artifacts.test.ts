import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { artifactsDir, type CompiledContract, compileContracts, renderArtifact, renderIndex } from '../../scripts/contracts-compiler.js';

describe('committed contract artifacts', () => {
  let contracts: CompiledContract[];
  beforeAll(() => {
    contracts = compileContracts();
  }, 120_000);

  it('are exactly what a fresh build of src/contracts/solidity produces', () => {
    const expected = new Map(contracts.map((c) => [`${c.name}.ts`, renderArtifact(c)]));
    expected.set('index.ts', renderIndex(contracts));

    const committed = readdirSync(artifactsDir).sort();
    expect(committed, 'run `npm run contracts:build` and commit the result').toEqual([...expected.keys()].sort());
    for (const [file, text] of expected) {
      expect(readFileSync(join(artifactsDir, file), 'utf8') === text, `${file} is stale: run \`npm run contracts:build\``).toBe(true);
    }
  });

  it('keep every contract within the EIP-170 size limit, so they deploy on Celo too', () => {
    for (const contract of contracts) expect(contract.deployedSize, contract.name).toBeLessThanOrEqual(24_576);
  });
});
