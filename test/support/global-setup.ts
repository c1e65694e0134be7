// One real anvil per network for the whole run; each test file deploys its own contracts with its own
// funded account, so files can run in parallel without sharing nonces or state. And dist/ built from the current
// sources, as `npm start` does first: end-to-end tests run the service as users run it.
import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';

declare module 'vitest' {
  export interface ProvidedContext {
    rpc: { mainnet: string; testnet: string };
  }
}

let chains: DevChain[] = [];

export async function setup(project: TestProject): Promise<void> {
  // here, once: test files building side by side would rewrite dist/ under each other's services
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  chains = await Promise.all([startDevChain({ chainId: 42220 }), startDevChain({ chainId: 11142220 })]);
  project.provide('rpc', { mainnet: chains[0]!.rpcUrl, testnet: chains[1]!.rpcUrl });
}

export async function teardown(): Promise<void> {
  await Promise.all(chains.map((chain) => chain.stop()));
}
