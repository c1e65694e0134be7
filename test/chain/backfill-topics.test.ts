// A backfill reads only the events that change what outlives it (the stored index, credentials' status): on a real
// registry, a registration's Registered and AgentCredentialsStored logs are left out until the follower has caught
// up, and from then on every log of the registry is delivered.
import { decodeEventLog, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetworkGateway } from '../../src/chain/gateway.js';
import type { RegistryEventFollower, RegistryLog } from '../../src/chain/registry-events.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import { registerWalletFree } from '../support/agents.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

const eventNames = (logs: readonly RegistryLog[]): string[] =>
  logs.map((log) => decodeEventLog({ abi: agentRegistryAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]] }).eventName);

describe('backfill topics', () => {
  let system: TestSystem;
  let follower: RegistryEventFollower;

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    await registerWalletFree(system);
    follower = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: system.rpcUrl, ...LOCAL },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    }).followRegistry({ intervalMs: 60_000 });
  });
  afterAll(() => follower?.stop());

  it('backfills ownership, nullifier and provider events only, then follows every event', async () => {
    const delivered: string[][] = [];
    follower.subscribe((logs) => delivered.push(eventNames(logs)));
    await follower.start();
    const backfilled = delivered.flat();
    expect(backfilled).toEqual(expect.arrayContaining(['ProofProviderAdded', 'Transfer', 'AgentRegisteredWithHumanProof']));
    expect(backfilled).not.toContain('Registered');
    expect(backfilled).not.toContain('AgentCredentialsStored');
    expect(backfilled).not.toContain('RoleGranted');

    delivered.length = 0;
    await registerWalletFree(system);
    await follower.syncNow();
    expect(delivered.flat()).toEqual(expect.arrayContaining(['Transfer', 'Registered', 'AgentRegisteredWithHumanProof', 'AgentCredentialsStored']));
  });
});
