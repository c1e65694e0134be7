// The log follower woken by new blocks over the node's WebSocket (anvil serves it on its HTTP port): with a poll
// interval of a minute, a registration still reaches the follower's subscribers, since the block that holds it wakes
// the follower; each log the node announces reaches every listener of the registry's logs; and a follower stopped
// unsubscribes, so later blocks wake nothing.
import { isAddressEqual, type Log } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredAgentId } from '../../src/chain/actions/registry-logs.js';
import { createNetworkGateway, type NetworkGateway } from '../../src/chain/gateway.js';
import { localWebSocketUrl, nodeSubscriptions } from '../../src/chain/new-heads.js';
import type { RegistryEventFollower, RegistryLog } from '../../src/chain/registry-events.js';
import { registerWalletFree } from '../support/agents.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';
import { eventually } from '../support/queries.js';

/** Far longer than the test waits: only a wake can deliver a block's logs in time. */
const ONE_MINUTE = 60_000;

describe('the log follower on new heads (WebSocket)', () => {
  let system: TestSystem;
  let gateway: NetworkGateway;
  let follower: RegistryEventFollower;
  const seen: RegistryLog[] = [];

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    gateway = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: system.rpcUrl, ...LOCAL },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
      newHeadsUrl: localWebSocketUrl(system.rpcUrl),
    });
    follower = gateway.followRegistry({ intervalMs: ONE_MINUTE });
    follower.subscribe((logs) => seen.push(...logs));
    await follower.start();
  });
  afterAll(() => follower?.stop());

  it('derives the WebSocket URL of a local node from its HTTP one', () => {
    expect(localWebSocketUrl('http://127.0.0.1:8545')).toBe('ws://127.0.0.1:8545');
    expect(localWebSocketUrl('https://node.example/rpc')).toBe('wss://node.example/rpc');
  });

  it('delivers a registration at its block, without waiting for the poll interval', async () => {
    const before = follower.processedBlock;
    const agent = await registerWalletFree(system);
    // bounded by far less than the poll interval: a wait that ends only if a new head woke the follower
    const { value: delivered } = await eventually(
      async () => seen.some((log) => log.transactionHash === agent.txHash),
      (found) => found,
      10_000,
    );
    expect(delivered).toBe(true);
    expect(follower.processedBlock).toBeGreaterThan(before);
  });

  it("hands each listener every log the registry's WebSocket announces, with its transaction", async () => {
    const registry = system.deployment.contracts.registry;
    const logs = nodeSubscriptions('testnet', localWebSocketUrl(system.rpcUrl)).logs(registry);
    const first: Log[] = [];
    const second: Log[] = [];
    const stopFirst = logs((batch) => first.push(...batch));
    const stopSecond = logs((batch) => second.push(...batch));
    try {
      // the node's subscription is in place once it announces a registration (subscribing does not wait for it)
      const warmUp = await registerWalletFree(system);
      const heard = await eventually(
        async () => first.some((log) => log.transactionHash === warmUp.txHash),
        (found) => found,
        10_000,
      );
      expect(heard.value).toBe(true);
      const agent = await registerWalletFree(system);
      const receipt = await system.client.getTransactionReceipt({ hash: agent.txHash });
      const expected = receipt.logs.filter((log) => isAddressEqual(log.address, registry)).map((log) => log.logIndex);
      expect(expected.length).toBeGreaterThan(1);
      const ofTransaction = (seen: Log[]) => seen.filter((log) => log.transactionHash === agent.txHash).map((log) => log.logIndex);
      await eventually(
        async () => ofTransaction(second).length,
        (count) => count === expected.length,
        10_000,
      );
      // a registration logs several events in its block: each reaches both listeners once
      expect(ofTransaction(first)).toEqual(expected);
      expect(ofTransaction(second)).toEqual(expected);
      expect(first.some((log) => registeredAgentId(log) === agent.agentId)).toBe(true);
    } finally {
      stopFirst();
      stopSecond();
    }
  });

  it('a stopped follower hears no more blocks', async () => {
    await follower.stop();
    const stoppedAt = follower.processedBlock;
    await registerWalletFree(system);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(follower.processedBlock).toBe(stoppedAt);
  });
});
