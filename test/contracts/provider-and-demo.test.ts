// HumanProofProvider (the Self provider record) and AgentDemoVerifier (EIP-712 meta-transaction demo) on a
// real anvil, with agents registered through the real hub path (onchain-facts 3, 9.1).
import { type Address, domainSeparator, type Hex, keccak256, type LocalAccount, parseEventLogs, stringToHex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { agentDemoVerifierAbi, agentRegistryAbi, humanProofProviderAbi } from '../../src/contracts/artifacts/index.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { newAccount, type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { expectCallReverts, latestTimestamp, mined } from '../support/registry.js';

// ------------------------------------------------------------------------------------------------------------

describe('HumanProofProvider', () => {
  let system: TestSystem;
  let caller: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    caller = await system.newWallet();
  });

  const provider = () => ({ address: system.deployment.contracts.proofProvider, abi: humanProofProviderAbi }) as const;

  it('is named "self" with verification strength 100', async () => {
    expect(await system.client.readContract({ ...provider(), functionName: 'providerName' })).toBe('self');
    expect(await system.client.readContract({ ...provider(), functionName: 'verificationStrength' })).toBe(100);
  });

  it("exposes the hub and the registry's scope it was deployed with", async () => {
    expect(await system.client.readContract({ ...provider(), functionName: 'hubV2' })).toBe(system.deployment.contracts.hub);
    const registryScope = await system.client.readContract({
      address: system.deployment.contracts.registry,
      abi: agentRegistryAbi,
      functionName: 'scope',
    });
    expect(registryScope).toBeGreaterThan(0n);
    expect(await system.client.readContract({ ...provider(), functionName: 'scope' })).toBe(registryScope);
  });

  it('verifyHumanProof always reverts DirectVerificationNotSupported', async () => {
    for (const [proof, data] of [
      ['0x', '0x'],
      ['0x1234', `0x${'ab'.repeat(32)}`],
    ] as const) {
      await expectCallReverts(
        system.client.simulateContract({ ...provider(), account: caller.account, functionName: 'verifyHumanProof', args: [proof, data] }),
        'DirectVerificationNotSupported',
      );
    }
  });

  it('is the approved Self provider of the registry, and hub registrations record it with strength 100', async () => {
    const registry = { address: system.deployment.contracts.registry, abi: agentRegistryAbi } as const;
    expect(await system.client.readContract({ ...registry, functionName: 'selfProofProvider' })).toBe(system.deployment.contracts.proofProvider);
    const agent = await registerLinked(system);
    expect(await system.client.readContract({ ...registry, functionName: 'getProofProvider', args: [agent.agentId] })).toBe(
      system.deployment.contracts.proofProvider,
    );
    const receipt = await system.client.getTransactionReceipt({ hash: agent.txHash });
    const [registered] = parseEventLogs({ abi: agentRegistryAbi, logs: receipt.logs, eventName: 'AgentRegisteredWithHumanProof' });
    expect(registered?.args).toEqual({
      agentId: agent.agentId,
      proofProvider: system.deployment.contracts.proofProvider,
      nullifier: agent.nullifier,
      verificationStrength: 100,
    });
  });
});

// ------------------------------------------------------------------------------------------------------------

const META_VERIFY_TYPEHASH = '0x641a0f0470260cc9df53194dc0e05990059eb0a538249cee024d5ed6e2f3095e';

const metaVerifyTypes = {
  MetaVerify: [
    { name: 'agentKey', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

describe('AgentDemoVerifier', () => {
  let system: TestSystem;
  let relayer: ChainWallet;
  let human: ChainWallet;
  let agent: RegisteredAgent;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    [relayer, human] = await Promise.all([system.newWallet(), system.newWallet()]);
    agent = await registerLinked(system, { human: human.account.address });
  });

  const demo = () => ({ address: system.deployment.contracts.demoVerifier, abi: agentDemoVerifierAbi }) as const;
  const domain = () =>
    ({
      name: 'AgentDemoVerifier',
      version: '1',
      chainId: system.deployment.chainId,
      verifyingContract: system.deployment.contracts.demoVerifier,
    }) as const;
  const nonceOf = (agentKey: Hex) => system.client.readContract({ ...demo(), functionName: 'nonces', args: [agentKey] });

  function sign(signer: LocalAccount, message: { agentKey: Hex; nonce: bigint; deadline: bigint }): Promise<Hex> {
    return signer.signTypedData({ domain: domain(), types: metaVerifyTypes, primaryType: 'MetaVerify', message });
  }

  function simulate(agentKey: Hex, nonce: bigint, deadline: bigint, signature: Hex, from: ChainWallet = relayer) {
    return system.client.simulateContract({
      ...demo(),
      account: from.account,
      functionName: 'metaVerifyAgent',
      args: [agentKey, nonce, deadline, signature],
    });
  }

  it('points at the registry; its EIP-712 domain is "AgentDemoVerifier" / "1" and MetaVerify has the documented typehash', async () => {
    expect(await system.client.readContract({ ...demo(), functionName: 'registry' })).toBe(system.deployment.contracts.registry);
    const [, name, version, chainId, verifyingContract] = await system.client.readContract({ ...demo(), functionName: 'eip712Domain' });
    expect({ name, version, chainId: Number(chainId), verifyingContract }).toEqual(domain());
    expect(await system.client.readContract({ ...demo(), functionName: 'DOMAIN_SEPARATOR' })).toBe(domainSeparator({ domain: domain() }));
    expect(keccak256(stringToHex('MetaVerify(bytes32 agentKey,uint256 nonce,uint256 deadline)'))).toBe(META_VERIFY_TYPEHASH);
  });

  it("metaVerifyAgent with the agent key's signature, sent by a relayer: returns the agentId, counts, three events", async () => {
    const agentKey = agent.agentKey;
    const nonce = await nonceOf(agentKey);
    expect(nonce).toBe(0n);
    const totalBefore = await system.client.readContract({ ...demo(), functionName: 'totalVerifications' });
    const deadline = (await latestTimestamp(system)) + 600n;
    const signature = await sign(agent.agent, { agentKey, nonce, deadline });

    const { result, request } = await simulate(agentKey, nonce, deadline, signature);
    expect(result).toBe(agent.agentId);
    const receipt = await mined(system, await relayer.writeContract(request));
    expect(parseEventLogs({ abi: agentDemoVerifierAbi, logs: receipt.logs }).map((e) => [e.eventName, e.args])).toEqual([
      ['AgentChainVerified', { agentKey, agentId: agent.agentId }],
      ['VerificationCompleted', { agentKey, agentCount: 1n, totalCount: totalBefore + 1n }],
      ['GasSponsored', { relayer: relayer.account.address, agentKey }],
    ]);
    expect(await nonceOf(agentKey)).toBe(1n);
    expect(await system.client.readContract({ ...demo(), functionName: 'hasVerified', args: [agentKey] })).toBe(true);
    expect(await system.client.readContract({ ...demo(), functionName: 'verificationCount', args: [agentKey] })).toBe(1n);
    expect(await system.client.readContract({ ...demo(), functionName: 'totalVerifications' })).toBe(totalBefore + 1n);

    // the next nonce verifies again
    const again = await sign(agent.agent, { agentKey, nonce: 1n, deadline });
    const second = await simulate(agentKey, 1n, deadline, again);
    const secondReceipt = await mined(system, await relayer.writeContract(second.request));
    const [completed] = parseEventLogs({ abi: agentDemoVerifierAbi, logs: secondReceipt.logs, eventName: 'VerificationCompleted' });
    expect(completed?.args).toEqual({ agentKey, agentCount: 2n, totalCount: totalBefore + 2n });
    expect(await nonceOf(agentKey)).toBe(2n);
  });

  it('MetaTxExpired for a deadline in the past', async () => {
    const nonce = await nonceOf(agent.agentKey);
    const deadline = (await latestTimestamp(system)) - 10n;
    const signature = await sign(agent.agent, { agentKey: agent.agentKey, nonce, deadline });
    await expectCallReverts(simulate(agent.agentKey, nonce, deadline, signature), 'MetaTxExpired');
  });

  it('MetaTxInvalidNonce for a used (replayed) or a future nonce', async () => {
    const nonce = await nonceOf(agent.agentKey);
    expect(nonce).toBeGreaterThan(0n);
    const deadline = (await latestTimestamp(system)) + 600n;
    for (const wrong of [nonce - 1n, nonce + 1n]) {
      const signature = await sign(agent.agent, { agentKey: agent.agentKey, nonce: wrong, deadline });
      await expectCallReverts(simulate(agent.agentKey, wrong, deadline, signature), 'MetaTxInvalidNonce');
    }
  });

  it('MetaTxInvalidSignature when someone other than the agent key signs, or the signed fields differ', async () => {
    const nonce = await nonceOf(agent.agentKey);
    const deadline = (await latestTimestamp(system)) + 600n;
    const byOther = await sign(newAccount(), { agentKey: agent.agentKey, nonce, deadline });
    await expectCallReverts(simulate(agent.agentKey, nonce, deadline, byOther), 'MetaTxInvalidSignature');
    // the human owning the NFT is not the agent key either
    const human2 = newAccount();
    const byHumanKey = await sign(human2, { agentKey: agent.agentKey, nonce, deadline });
    await expectCallReverts(simulate(agent.agentKey, nonce, deadline, byHumanKey), 'MetaTxInvalidSignature');
    const otherDeadline = await sign(agent.agent, { agentKey: agent.agentKey, nonce, deadline: deadline + 1n });
    await expectCallReverts(simulate(agent.agentKey, nonce, deadline, otherDeadline), 'MetaTxInvalidSignature');
    await expectCallReverts(simulate(agent.agentKey, nonce, deadline, '0x1234'), 'MetaTxInvalidSignature');
  });

  it('NotVerifiedAgent for a key the registry does not know, and that reverted attempt does not consume the nonce', async () => {
    const stranger = newAccount();
    const agentKey = addressAgentKey(stranger.address);
    const deadline = (await latestTimestamp(system)) + 600n;
    const signature = await sign(stranger, { agentKey, nonce: 0n, deadline });
    await expectCallReverts(simulate(agentKey, 0n, deadline, signature), 'NotVerifiedAgent');

    // send it for real (explicit gas skips estimation): mined, reverted, nonce unchanged
    const hash = await relayer.writeContract({
      ...demo(),
      functionName: 'metaVerifyAgent',
      args: [agentKey, 0n, deadline, signature],
      gas: 300_000n,
    });
    const receipt = await system.client.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(await nonceOf(agentKey)).toBe(0n);
    expect(await system.client.readContract({ ...demo(), functionName: 'hasVerified', args: [agentKey] })).toBe(false);
  });

  it('checkAccess returns the agentId of a verified agent and reverts NotVerifiedAgent otherwise, also after deregistration', async () => {
    const checkAccess = (agentKey: Hex) => system.client.readContract({ ...demo(), functionName: 'checkAccess', args: [agentKey] });
    expect(await checkAccess(agent.agentKey)).toBe(agent.agentId);
    await expectCallReverts(checkAccess(addressAgentKey(newAccount().address)), 'NotVerifiedAgent');

    // a second agent of a second human, removed by its owner: access ends with it
    const owner = await system.newWallet();
    const leaving = await registerLinked(system, { human: owner.account.address });
    expect(await checkAccess(leaving.agentKey)).toBe(leaving.agentId);
    await mined(
      system,
      await owner.writeContract({
        address: system.deployment.contracts.registry,
        abi: agentRegistryAbi,
        functionName: 'selfDeregister',
        args: [leaving.agentId],
      }),
    );
    await expectCallReverts(checkAccess(leaving.agentKey), 'NotVerifiedAgent');
    const deadline = (await latestTimestamp(system)) + 600n;
    const signature = await sign(leaving.agent, { agentKey: leaving.agentKey, nonce: 0n, deadline });
    await expectCallReverts(simulate(leaving.agentKey, 0n, deadline, signature), 'NotVerifiedAgent');
  });

  it('the agent may also relay its own verification (GasSponsored names it as relayer)', async () => {
    const self = await system.newWallet();
    const own = await registerLinked(system, { agent: self.account });
    const deadline = (await latestTimestamp(system)) + 600n;
    const signature = await sign(self.account, { agentKey: own.agentKey, nonce: 0n, deadline });
    const { result, request } = await simulate(own.agentKey, 0n, deadline, signature, self);
    expect(result).toBe(own.agentId);
    const receipt = await mined(system, await self.writeContract(request));
    const [sponsored] = parseEventLogs({ abi: agentDemoVerifierAbi, logs: receipt.logs, eventName: 'GasSponsored' });
    expect(sponsored?.args.relayer).toBe(self.account.address as Address);
  });
});
