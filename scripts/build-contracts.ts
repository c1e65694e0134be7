// npm run contracts:build: compiles src/contracts/solidity into the typed artifacts under src/contracts/artifacts.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, compileContracts, renderArtifact, renderIndex } from './contracts-compiler.js';

const EIP170_LIMIT = 24_576;
const started = Date.now();
const contracts = compileContracts();

mkdirSync(artifactsDir, { recursive: true });
for (const file of readdirSync(artifactsDir)) rmSync(join(artifactsDir, file));
for (const contract of contracts) writeFileSync(join(artifactsDir, `${contract.name}.ts`), renderArtifact(contract));
writeFileSync(join(artifactsDir, 'index.ts'), renderIndex(contracts));

for (const c of contracts) {
  const flag = c.deployedSize > EIP170_LIMIT ? '  (over the EIP-170 limit)' : '';
  console.log(`${c.name.padEnd(28)} ${String(c.deployedSize).padStart(6)} bytes${flag}`);
}
console.log(`compiled ${contracts.length} contracts in ${Date.now() - started} ms`);
if (contracts.some((c) => c.deployedSize > EIP170_LIMIT)) process.exitCode = 1;
