// One real anvil per network for the whole run; each test file deploys its own contracts with its own
// funded account, so files can run in parallel without sharing nonces or state.
import type { TestProject } from 'vitest/node';
import { type DevChain, startDevChain } from '../../src/chain/devchain.js';

declare module 'vitest' {
  export interface ProvidedContext {
    rpc: { mainnet: string; testnet: string };
  }
}

let chains: DevChain[] = [];

export async function setup(project: TestProject): Promise<void> {
  chains = await Promise.all([startDevChain({ chainId: 42220 }), startDevChain({ chainId: 11142220 })]);
  project.provide('rpc', { mainnet: chains[0]!.rpcUrl, testnet: chains[1]!.rpcUrl });
}

export async function teardown(): Promise<void> {
  await Promise.all(chains.map((chain) => chain.stop()));
}
