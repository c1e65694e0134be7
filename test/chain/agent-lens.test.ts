// AgentLens as a deployless call against a real registry, and the registry log follower.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Address, type Hex, hexToBigInt, toFunctionSelector, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentLens } from '../../src/chain/agent-lens.js';
import { type ChainClient, createChainClient } from '../../src/chain/clients.js';
import { RegistryEventFollower, type RegistryLog } from '../../src/chain/registry-events.js';
import { agentLensAbi } from '../../src/contracts/artifacts/index.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { newAccount, type RegisteredAgent, registerLinked, registerWalletFree } from '../support/agents.js';
import { deployTestSystem, LOCAL, type TestSystem } from '../support/chain.js';
import { deregisterByProof } from '../support/queries.js';
import { hasSharedFile, sharedPath, unlessShared } from '../support/shared.js';

describe('AgentLens', () => {
  let system: TestSystem;
  let linked: RegisteredAgent;
  let walletFree: RegisteredAgent;
  let burned: RegisteredAgent;
  let guardian: Address;

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    guardian = newAccount().address;
    linked = await registerLinked(system, { minimumAge: 18, ofac: true });
    walletFree = await registerWalletFree(system, { guardian });
    burned = await registerLinked(system);
    await deregisterByProof(system, { human: burned.human, agent: burned.agent.address });
  });

  const countingLens = () => {
    let requests = 0;
    const client = createChainClient('testnet', { rpcUrl: inject('rpc').testnet, ...LOCAL, onRequest: () => requests++ });
    return { lens: new AgentLens(client, system.deployment.contracts.registry), requests: () => requests };
  };

  it('reads everything about an agent, its human count and its provider in one RPC round trip, at a known block', async () => {
    const { lens, requests } = countingLens();
    const latest = await system.client.getBlockNumber({ cacheTime: 0 });
    const { blockNumber, value } = await lens.agent(linked.agentId);
    expect(requests()).toBe(1);
    expect(blockNumber).toBeGreaterThanOrEqual(latest);
    const receipt = await system.client.getTransactionReceipt({ hash: linked.txHash });
    expect(value).toMatchObject({
      agentId: linked.agentId,
      exists: true,
      owner: linked.human,
      agentKey: addressAgentKey(linked.agent.address),
      hasHumanProof: true,
      nullifier: linked.nullifier,
      proofProvider: system.deployment.contracts.proofProvider,
      providerName: 'self',
      verificationStrength: 100,
      isSelfProvider: true,
      agentCountForHuman: 1n,
      registeredAtBlock: receipt.blockNumber,
      isProofFresh: true,
      guardian: zeroAddress,
      metadata: '',
    });
    expect(value.credentials).toMatchObject({ olderThan: 18n, ofac: [true, true, true] });
    expect(value.proofExpiresAt).toBeGreaterThan(BigInt(Math.floor(Date.now() / 1000)));
  });

  it('reads the guardian of a wallet-free agent, which owns itself', async () => {
    const { value } = await countingLens().lens.agent(walletFree.agentId);
    expect(value).toMatchObject({ owner: walletFree.agent.address, guardian, exists: true });
  });

  it('answers exists: false, and nothing else, for an id never minted and for a burned agent', async () => {
    const { lens } = countingLens();
    for (const agentId of [987_654n, burned.agentId]) {
      const { value } = await lens.agent(agentId);
      expect(value).toMatchObject({ agentId, exists: false, owner: zeroAddress, hasHumanProof: false, nullifier: 0n, metadata: '' });
    }
  });

  it('reads an agent by its key in one round trip, the same as by its id; a key never registered is agent 0', async () => {
    const { lens, requests } = countingLens();
    const byKey = await lens.agentOfKey(addressAgentKey(linked.agent.address));
    expect(requests()).toBe(1);
    expect(byKey.value).toEqual((await lens.agent(linked.agentId)).value);
    const { value } = await lens.agentOfKey(addressAgentKey(newAccount().address));
    expect(value).toMatchObject({ agentId: 0n, exists: false, owner: zeroAddress, registeredAtBlock: 0n });
  });

  it('reads several agents and a nullifier list in one round trip each', async () => {
    const { lens, requests } = countingLens();
    const { value } = await lens.agents([linked.agentId, 987_654n, walletFree.agentId]);
    expect(value.map((v) => [v.agentId, v.exists])).toEqual([
      [linked.agentId, true],
      [987_654n, false],
      [walletFree.agentId, true],
    ]);
    expect(requests()).toBe(1);
    expect((await lens.agentsForNullifier(linked.nullifier)).value).toEqual([linked.agentId]);
    expect(requests()).toBe(2);
    expect((await lens.agentsForNullifier(burned.nullifier)).value).toEqual([]);
  });

  it.skipIf(!hasSharedFile('reference/onchain-facts.md'))(
    unlessShared(
      'reference/onchain-facts.md',
      'calls only registry functions whose selectors onchain-facts documents for the Celo deployment (ownerOf: ERC-721)',
    ),
    () => {
      const facts = readFileSync(sharedPath('reference/onchain-facts.md'), 'utf8').toLowerCase();
      const source = readFileSync(join(import.meta.dirname, '../../src/contracts/solidity/AgentLens.sol'), 'utf8');
      const registryInterface = /interface ILensRegistry \{([\s\S]*?)\n\}/.exec(source)![1]!;
      const signatures = [...registryInterface.matchAll(/function (\w+)\(([^)]*)\)/g)].map(
        ([, name, params]) =>
          `${name}(${params!
            .split(',')
            .map((p) => p.trim().split(' ')[0])
            .filter(Boolean)
            .join(',')})`,
      );
      expect(signatures.length).toBeGreaterThan(10);
      const undocumented = signatures.filter(
        (signature) => signature !== 'ownerOf(uint256)' && !facts.includes(toFunctionSelector(`function ${signature}`).toLowerCase()),
      );
      expect(undocumented).toEqual([]);
      expect(agentLensAbi.filter((item) => item.type === 'function').every((item) => item.stateMutability === 'view')).toBe(true);
    },
  );
});

describe('RegistryEventFollower', () => {
  let system: TestSystem;
  const followers: RegistryEventFollower[] = [];

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  afterAll(async () => {
    await Promise.all(followers.map((f) => f.stop()));
  });

  /** A client whose eth_getLogs (the follower sends it through request) refuses ranges of more than `maxRange` blocks, as public nodes do. */
  function rangeLimited(client: ChainClient, maxRange: bigint, calls: { from: bigint; to: bigint; ok: boolean }[]): ChainClient {
    return new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'request') return Reflect.get(target, property, receiver) as unknown;
        return async (args: { method: string; params: [{ fromBlock: Hex; toBlock: Hex }] }) => {
          if (args.method === 'eth_getLogs') {
            const [from, to] = [hexToBigInt(args.params[0].fromBlock), hexToBigInt(args.params[0].toBlock)];
            const ok = to - from + 1n <= maxRange;
            calls.push({ from, to, ok });
            if (!ok) throw new Error('query exceeds the block range limit');
          }
          return target.request(args as Parameters<ChainClient['request']>[0]);
        };
      },
    });
  }

  it('backfills from the deploy block in windows it halves on range errors, then follows new blocks in order', async () => {
    const first = await registerLinked(system);
    const second = await registerWalletFree(system);
    const calls: { from: bigint; to: bigint; ok: boolean }[] = [];
    const follower = new RegistryEventFollower(
      rangeLimited(system.client, 3n, calls),
      system.deployment.contracts.registry,
      system.deployment.registryDeployBlock,
      { intervalMs: 50, maxLogRange: 16n },
    );
    followers.push(follower);
    const seen: RegistryLog[] = [];
    const ranges: bigint[] = [];
    follower.subscribe((logs, toBlock) => {
      seen.push(...logs);
      ranges.push(toBlock);
    });
    expect(follower.isLive()).toBe(false);
    await follower.start();
    expect(follower.isLive()).toBe(true);
    const latest = await system.client.getBlockNumber({ cacheTime: 0 });
    expect(follower.processedBlock).toBeGreaterThanOrEqual(latest);
    expect(calls.some((c) => !c.ok)).toBe(true);
    expect(calls.filter((c) => c.ok).every((c) => c.to - c.from < 3n)).toBe(true);
    expect(ranges).toEqual([...ranges].sort((a, b) => (a < b ? -1 : 1)));
    const txs = new Set(seen.map((log) => log.transactionHash));
    expect(txs.has(first.txHash) && txs.has(second.txHash)).toBe(true);

    const third = await registerLinked(system);
    const deadline = Date.now() + 3_000;
    while (!seen.some((log) => log.transactionHash === third.txHash) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen.some((log) => log.transactionHash === third.txHash)).toBe(true);
    expect(seen.every((log) => log.address.toLowerCase() === system.deployment.contracts.registry.toLowerCase())).toBe(true);

    await follower.stop();
    expect(follower.running).toBe(false);
    expect(follower.isLive()).toBe(false);
  });

  it('syncNow delivers up to the latest block at once; stop() is safe twice', async () => {
    const follower = new RegistryEventFollower(system.client, system.deployment.contracts.registry, system.deployment.registryDeployBlock, {
      intervalMs: 60_000,
    });
    followers.push(follower);
    await follower.start();
    const agent = await registerLinked(system);
    const hashes: Hex[] = [];
    follower.subscribe((logs) => hashes.push(...logs.map((log) => log.transactionHash)));
    await follower.syncNow();
    expect(hashes).toContain(agent.txHash);
    await follower.stop();
    await follower.stop();
  });
});
