import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createNetworkGateway } from '../../src/chain/gateway.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';

describe('RegistryGateway', () => {
  let system: TestSystem;
  let registered: RegisteredAgent;

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    registered = await registerLinked(system, { minimumAge: 18, ofac: true });
  });

  it('reads everything about an agent in one RPC round trip', async () => {
    let requests = 0;
    const counted = createNetworkGateway('testnet', {
      clientOptions: { rpcUrl: inject('rpc').testnet, ...LOCAL, onRequest: () => requests++ },
      contracts: system.deployment.contracts,
      registryDeployBlock: system.deployment.registryDeployBlock,
      embedded: true,
    });
    const record = await counted.registry.readAgent(registered.agentId);
    expect(requests).toBe(1);

    const block = await system.client.getTransactionReceipt({ hash: registered.txHash });
    expect(record).toMatchObject({
      agentId: registered.agentId,
      owner: registered.human,
      agentKey: addressAgentKey(registered.agent.address),
      hasHumanProof: true,
      humanNullifier: registered.nullifier,
      proofProvider: system.deployment.contracts.proofProvider,
      registeredAtBlock: block.blockNumber,
      isProofFresh: true,
      metadata: '',
    });
    expect(record!.proofExpiresAt).toBeGreaterThan(BigInt(Math.floor(Date.now() / 1000)));
    expect(record!.credentials.olderThan).toBe(18n);
    expect(record!.credentials.ofac).toEqual([true, true, true]);
    const configIds = await system.gateway.registry.configIds();
    expect(record!.configId).toBe(configIds[4]);
  });

  it('finds the transaction that minted an agent in the block it was registered in, and only there', async () => {
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: registered.txHash });
    expect(await system.gateway.registry.registrationTransaction(registered.agentId, blockNumber)).toBe(registered.txHash);
    expect(await system.gateway.registry.registrationTransaction(registered.agentId, blockNumber - 1n)).toBeUndefined();
    expect(await system.gateway.registry.registrationTransaction(registered.agentId + 1n, blockNumber)).toBeUndefined();
  });

  it('answers null for an agent id that was never minted', async () => {
    expect(await system.gateway.registry.readAgent(999n)).toBeNull();
  });

  it('reads keys, nonces, counts and the provider', async () => {
    const { registry } = system.gateway;
    expect(await registry.agentIdOf(registered.agentKey)).toBe(registered.agentId);
    expect(await registry.isVerifiedAgent(registered.agentKey)).toBe(true);
    expect(await registry.registrationNonce(registered.agent.address)).toBe(1n);
    expect(await registry.agentsForNullifier(registered.nullifier)).toEqual([registered.agentId]);
    expect(await registry.agentCountForHuman(registered.nullifier)).toBe(1n);
    expect(await registry.maxAgentsPerHuman()).toBe(1n);
    const provider = await registry.selfProofProvider();
    expect(provider).toBe(system.deployment.contracts.proofProvider);
    expect(await registry.providerInfo(provider)).toEqual({ name: 'self', verificationStrength: 100 });
  });
});
