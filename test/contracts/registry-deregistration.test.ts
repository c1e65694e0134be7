// Removing agents: hub deregistration (D by the human's own key, X naming the agent), Ed25519 agents found by
// their derived address, guardianRevoke and selfDeregister; plus the owner's updateAgentMetadata. A burned
// agent leaves nothing behind: no owner, no key mapping, no proof, no credentials, no count.
import { type Address, type Hex, zeroAddress, zeroHash } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { ed25519AgentAddress } from '../../src/core/ed25519-key.js';
import { advancedDeregisterUserData, deregisterUserData, registerUserData } from '../../src/core/user-data.js';
import { mockDocumentFor } from '../../src/identity-app/index.js';
import { ed25519Data, expectSubmitted, newAccount, newEd25519Agent, registerLinked, registerWalletFree, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import {
  deployConstantVerifier,
  EMPTY_CREDENTIALS,
  expectCallReverts,
  expectReverted,
  mined,
  nullifierOf,
  registryAs,
  registryEvents,
  registryOf,
  setMaxAgentsPerHuman,
} from '../support/registry.js';

interface Burned {
  agentId: bigint;
  agentKey: Hex;
  nullifier: bigint;
  owner: Address;
  txHash: Hex;
}

/** The agent is gone: NFT burned, key freed, proof and per-agent state cleared, Transfer + HumanProofRevoked. */
async function expectBurned(system: TestSystem, b: Burned): Promise<void> {
  const registry = registryOf(system);
  await expectCallReverts(registry.read.ownerOf([b.agentId]), 'ERC721NonexistentToken', [b.agentId]);
  await expectCallReverts(registry.read.tokenURI([b.agentId]), 'ERC721NonexistentToken', [b.agentId]);
  expect(await registry.read.getAgentId([b.agentKey])).toBe(0n);
  expect(await registry.read.isVerifiedAgent([b.agentKey])).toBe(false);
  expect(await registry.read.agentIdToAgentKey([b.agentId])).toBe(zeroHash);
  expect(await registry.read.hasHumanProof([b.agentId])).toBe(false);
  expect(await registry.read.isProofFresh([b.agentId])).toBe(false);
  expect(await registry.read.getHumanNullifier([b.agentId])).toBe(0n);
  expect(await registry.read.getProofProvider([b.agentId])).toBe(zeroAddress);
  expect(await registry.read.proofExpiresAt([b.agentId])).toBe(0n);
  expect(await registry.read.agentConfigId([b.agentId])).toBe(zeroHash);
  expect(await registry.read.agentRegisteredAt([b.agentId])).toBe(0n);
  expect(await registry.read.agentGuardian([b.agentId])).toBe(zeroAddress);
  expect(await registry.read.getAgentMetadata([b.agentId])).toBe('');
  expect(await registry.read.getAgentCredentials([b.agentId])).toEqual(EMPTY_CREDENTIALS);
  expect(await registry.read.getAgentsForNullifier([b.nullifier])).not.toContain(b.agentId);
  expect(await registry.read.sameHuman([b.agentId, b.agentId])).toBe(false);

  const events = await registryEvents(system, b.txHash);
  expect(events.map((e) => e.eventName)).toEqual(['Transfer', 'HumanProofRevoked']);
  expect(events[0]?.args).toEqual({ from: b.owner, to: zeroAddress, tokenId: b.agentId });
  expect(events[1]?.args).toEqual({ agentId: b.agentId, nullifier: b.nullifier });
}

describe('hub deregistration (D, X)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('D by the same human burns their R agent and clears its credentials and metadata', async () => {
    const human = await system.newWallet();
    const userId = human.account.address;
    expectSubmitted(await submitProof(system, { userId, userDefinedData: registerUserData(0), disclosures: { nationality: true } }));
    const agentKey = addressAgentKey(userId);
    const registry = registryOf(system);
    const agentId = await registry.read.getAgentId([agentKey]);
    const nullifier = await nullifierOf(system, userId);
    await mined(system, registryAs(system, human).write.updateAgentMetadata([agentId, '{"name":"r-agent"}']));
    expect((await registry.read.getAgentCredentials([agentId])).nationality).toBe('GBR');
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(1n);

    const result = await submitProof(system, { userId, userDefinedData: deregisterUserData(0) });
    expectSubmitted(result);
    await expectBurned(system, { agentId, agentKey, nullifier, owner: userId, txHash: result.txHash });
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(0n);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([]);
    expect(await registry.read.balanceOf([userId])).toBe(0n);

    // the human may register again: a new, higher id (ids are never reused)
    expectSubmitted(await submitProof(system, { userId, userDefinedData: registerUserData(0) }));
    const newId = await registry.read.getAgentId([agentKey]);
    expect(newId).toBeGreaterThan(agentId);
    expect(await registry.read.ownerOf([newId])).toBe(userId);
    expect(await registry.read.getAgentMetadata([newId])).toBe('');
  });

  it("X by the NFT owner's proof burns a K agent; the same key registered again gets a new, higher id", async () => {
    const agent = await registerLinked(system);
    const registry = registryOf(system);
    const result = await submitProof(system, {
      userId: agent.human,
      userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: agent.agent.address }),
    });
    expectSubmitted(result);
    await expectBurned(system, {
      agentId: agent.agentId,
      agentKey: agent.agentKey,
      nullifier: agent.nullifier,
      owner: agent.human,
      txHash: result.txHash,
    });
    expect(await registry.read.getAgentCountForHuman([agent.nullifier])).toBe(0n);

    const again = await registerLinked(system, { agent: agent.agent, human: agent.human });
    expect(again.agentId).toBeGreaterThan(agent.agentId);
    expect(again.agentKey).toBe(agent.agentKey);
    expect(await registry.read.agentNonces([agent.agent.address])).toBe(2n);
    expect(await registry.read.getAgentCountForHuman([agent.nullifier])).toBe(1n);
    expect(await registry.read.getAgentsForNullifier([agent.nullifier])).toEqual([again.agentId]);
    await expectCallReverts(registry.read.ownerOf([agent.agentId]), 'ERC721NonexistentToken', [agent.agentId]);
  });

  it('X with the agent address as userId burns a W agent (wallet-free deregistration)', async () => {
    const agent = await registerWalletFree(system, { guardian: newAccount().address });
    const result = await submitProof(system, {
      userId: agent.agent.address,
      userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: agent.agent.address }),
    });
    expectSubmitted(result);
    await expectBurned(system, {
      agentId: agent.agentId,
      agentKey: agent.agentKey,
      nullifier: agent.nullifier,
      owner: agent.agent.address,
      txHash: result.txHash,
    });
    expect(await registryOf(system).read.getAgentCountForHuman([agent.nullifier])).toBe(0n);
  });

  it('X by a different human reverts NotAgentOwner(stored, proof); so does D with another document for the same address', async () => {
    const agent = await registerLinked(system);
    const other = newAccount().address;
    const x = await submitProof(system, {
      userId: other,
      userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: agent.agent.address }),
    });
    expectReverted(x, 'NotAgentOwner', [agent.nullifier, await nullifierOf(system, other)]);
    expect(await registryOf(system).read.ownerOf([agent.agentId])).toBe(agent.human);

    const human = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: registerUserData(0) }));
    const otherPassport = mockDocumentFor(`${human}-second-passport`);
    const d = await submitProof(system, { userId: human, userDefinedData: deregisterUserData(0), document: otherPassport });
    expectReverted(d, 'NotAgentOwner', [await nullifierOf(system, human), await nullifierOf(system, otherPassport)]);
    expect(await registryOf(system).read.balanceOf([human])).toBe(1n);
  });

  it('X for an unknown agent and D for a human without agent revert AgentNotRegistered(padded key)', async () => {
    const stranger = newAccount().address;
    const human = newAccount().address;
    const x = await submitProof(system, { userId: human, userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: stranger }) });
    expectReverted(x, 'AgentNotRegistered', [addressAgentKey(stranger)]);
    const d = await submitProof(system, { userId: human, userDefinedData: deregisterUserData(0) });
    expectReverted(d, 'AgentNotRegistered', [addressAgentKey(human)]);
  });
});

describe('several agents of one human: counts and the nullifier list on removal', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    await setMaxAgentsPerHuman(system, 3n);
  });

  it('removing one agent decrements the count and swaps the last agent into its slot', async () => {
    const human = newAccount().address;
    const a = await registerLinked(system, { human });
    const b = await registerLinked(system, { human });
    const c = await registerLinked(system, { human });
    const registry = registryOf(system);
    const nullifier = a.nullifier;
    expect([b.nullifier, c.nullifier]).toEqual([nullifier, nullifier]);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([a.agentId, b.agentId, c.agentId]);
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(3n);

    const removeA = await submitProof(system, {
      userId: human,
      userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: a.agent.address }),
    });
    expectSubmitted(removeA);
    await expectBurned(system, { agentId: a.agentId, agentKey: a.agentKey, nullifier, owner: human, txHash: removeA.txHash });
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(2n);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([c.agentId, b.agentId]);

    const removeC = await submitProof(system, {
      userId: human,
      userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: c.agent.address }),
    });
    expectSubmitted(removeC);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([b.agentId]);
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(1n);
    expect(await registry.read.ownerOf([b.agentId])).toBe(human);
    expect(await registry.read.getHumanNullifier([b.agentId])).toBe(nullifier);
  });
});

describe('Ed25519 agents (signatures checked by the deployed Ed25519Verifier)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  async function registerEd25519(human: Address, guardian: Address | null) {
    const key = newEd25519Agent();
    const result = await submitProof(system, { userId: human, userDefinedData: await ed25519Data(system, key, human, { guardian }) });
    expectSubmitted(result);
    const agentId = await registryOf(system).read.getAgentId([key.pubkey]);
    expect(agentId).toBeGreaterThan(0n);
    return { key, agentId, owner: ed25519AgentAddress(key.pubkey), result };
  }

  it('E mints to the address derived from the key, keys the agent by the raw pubkey and consumes its nonce', async () => {
    const human = newAccount().address;
    const { key, agentId, owner, result } = await registerEd25519(human, human);
    const registry = registryOf(system);
    expect(await registry.read.ownerOf([agentId])).toBe(owner);
    expect(await registry.read.agentIdToAgentKey([agentId])).toBe(key.pubkey);
    expect(await registry.read.ed25519Nonce([key.pubkey])).toBe(1n);
    expect(await registry.read.agentGuardian([agentId])).toBe(human);
    expect(await registry.read.getHumanNullifier([agentId])).toBe(await nullifierOf(system, human));
    expect((await registryEvents(system, result.txHash)).map((e) => e.eventName)).toEqual([
      'Transfer',
      'AgentRegisteredWithHumanProof',
      'Registered',
      'AgentCredentialsStored',
      'GuardianSet',
    ]);

    // a valid signature (next nonce, challenge for another human) for a key that is already registered
    const otherHuman = newAccount().address;
    const again = await submitProof(system, { userId: otherHuman, userDefinedData: await ed25519Data(system, key, otherHuman) });
    expectReverted(again, 'AgentAlreadyRegistered', [key.pubkey]);
  });

  it('D with the derived address as userId deregisters a wallet-free Ed25519 agent', async () => {
    const key = newEd25519Agent();
    const derived = ed25519AgentAddress(key.pubkey);
    const registered = await submitProof(system, { userId: derived, userDefinedData: await ed25519Data(system, key, derived) });
    expectSubmitted(registered);
    const agentId = await registryOf(system).read.getAgentId([key.pubkey]);
    const result = await submitProof(system, { userId: derived, userDefinedData: deregisterUserData(0) });
    expectSubmitted(result);
    await expectBurned(system, { agentId, agentKey: key.pubkey, nullifier: registered.nullifier, owner: derived, txHash: result.txHash });
  });

  it('X naming the derived address deregisters an Ed25519 agent linked to a human; another human gets NotAgentOwner', async () => {
    const human = newAccount().address;
    const { key, agentId, owner } = await registerEd25519(human, human);
    const x = advancedDeregisterUserData({ configIndex: 0, agent: owner });
    const other = newAccount().address;
    expectReverted(await submitProof(system, { userId: other, userDefinedData: x }), 'NotAgentOwner', [
      await nullifierOf(system, human),
      await nullifierOf(system, other),
    ]);

    const result = await submitProof(system, { userId: human, userDefinedData: x });
    expectSubmitted(result);
    await expectBurned(system, { agentId, agentKey: key.pubkey, nullifier: await nullifierOf(system, human), owner, txHash: result.txHash });
    const afterwards = await submitProof(system, { userId: human, userDefinedData: x });
    expectReverted(afterwards, 'AgentNotRegistered', [addressAgentKey(owner)]);
  });

  it('a verifier (stand-in) that rejects the signature makes E revert InvalidAgentSignature without consuming the nonce', async () => {
    const rejecting = await deployConstantVerifier(system, false);
    const accepting = await registryOf(system).read.ed25519Verifier();
    await mined(system, registryAs(system, system.operator).write.setEd25519Verifier([rejecting]));
    try {
      const key = newEd25519Agent();
      const human = newAccount().address;
      expectReverted(await submitProof(system, { userId: human, userDefinedData: await ed25519Data(system, key, human) }), 'InvalidAgentSignature');
      expect(await registryOf(system).read.ed25519Nonce([key.pubkey])).toBe(0n);
    } finally {
      await mined(system, registryAs(system, system.operator).write.setEd25519Verifier([accepting]));
    }
  });
});

describe('guardianRevoke, selfDeregister and updateAgentMetadata', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('guardianRevoke: the guardian burns a W agent; anyone else, the owner included, gets NotGuardian', async () => {
    const guardian = await system.newWallet();
    const agentAccount = newAccount();
    const agent = await registerWalletFree(system, { guardian: guardian.account.address, agent: agentAccount });
    const registry = registryOf(system);
    const stranger = await system.newWallet();
    await expectCallReverts(registry.simulate.guardianRevoke([agent.agentId], { account: stranger.account.address }), 'NotGuardian', [agent.agentId]);
    await expectCallReverts(registry.simulate.guardianRevoke([agent.agentId], { account: agentAccount.address }), 'NotGuardian', [agent.agentId]);

    const receipt = await mined(system, registryAs(system, guardian).write.guardianRevoke([agent.agentId]));
    await expectBurned(system, { ...agent, owner: agent.agent.address, txHash: receipt.transactionHash });
    await expectCallReverts(registry.simulate.guardianRevoke([agent.agentId], { account: guardian.account.address }), 'NoGuardianSet', [
      agent.agentId,
    ]);
  });

  it('guardianRevoke reverts NoGuardianSet for a W agent without guardian, a K agent and an unknown id', async () => {
    const walletFree = await registerWalletFree(system);
    const linked = await registerLinked(system);
    const caller = await system.newWallet();
    const registry = registryOf(system);
    for (const agentId of [walletFree.agentId, linked.agentId, 999_999n]) {
      await expectCallReverts(registry.simulate.guardianRevoke([agentId], { account: caller.account.address }), 'NoGuardianSet', [agentId]);
    }
  });

  it('selfDeregister: only the NFT owner may (NotNftOwner otherwise); it burns and frees the key', async () => {
    const human = await system.newWallet();
    const agentAccount = newAccount();
    const linked = await registerLinked(system, { human: human.account.address, agent: agentAccount });
    const registry = registryOf(system);
    const stranger = await system.newWallet();
    // the agent key of a K agent does not own the NFT: the human does
    await expectCallReverts(registry.simulate.selfDeregister([linked.agentId], { account: agentAccount.address }), 'NotNftOwner', [linked.agentId]);
    await expectCallReverts(registry.simulate.selfDeregister([linked.agentId], { account: stranger.account.address }), 'NotNftOwner', [
      linked.agentId,
    ]);
    await expectCallReverts(registry.simulate.selfDeregister([999_999n], { account: stranger.account.address }), 'ERC721NonexistentToken', [
      999_999n,
    ]);

    const receipt = await mined(system, registryAs(system, human).write.selfDeregister([linked.agentId]));
    await expectBurned(system, { ...linked, owner: human.account.address, txHash: receipt.transactionHash });
    expect(await registry.read.getAgentCountForHuman([linked.nullifier])).toBe(0n);
  });

  it('selfDeregister by a wallet-free agent, which owns its NFT', async () => {
    const wallet = await system.newWallet();
    const agent = await registerWalletFree(system, { agent: wallet.account });
    const receipt = await mined(system, registryAs(system, wallet).write.selfDeregister([agent.agentId]));
    await expectBurned(system, { ...agent, owner: wallet.account.address, txHash: receipt.transactionHash });
  });

  it('updateAgentMetadata: owner only; getAgentMetadata returns the latest value; AgentMetadataUpdated(agentId)', async () => {
    const human = await system.newWallet();
    const linked = await registerLinked(system, { human: human.account.address });
    const registry = registryOf(system);
    expect(await registry.read.getAgentMetadata([linked.agentId])).toBe('');

    const first = await mined(system, registryAs(system, human).write.updateAgentMetadata([linked.agentId, '{"name":"first"}']));
    const events = await registryEvents(system, first.transactionHash);
    expect(events.map((e) => [e.eventName, e.args])).toEqual([['AgentMetadataUpdated', { agentId: linked.agentId }]]);
    expect(await registry.read.getAgentMetadata([linked.agentId])).toBe('{"name":"first"}');

    await mined(system, registryAs(system, human).write.updateAgentMetadata([linked.agentId, 'second']));
    expect(await registry.read.getAgentMetadata([linked.agentId])).toBe('second');
    expect(await registry.read.agentMetadata([linked.agentId])).toBe('second');

    const stranger = await system.newWallet();
    await expectCallReverts(
      registry.simulate.updateAgentMetadata([linked.agentId, 'hijacked'], { account: stranger.account.address }),
      'NotNftOwner',
      [linked.agentId],
    );
    await expectCallReverts(registry.simulate.updateAgentMetadata([linked.agentId, 'by the key'], { account: linked.agent.address }), 'NotNftOwner', [
      linked.agentId,
    ]);
    expect(await registry.read.getAgentMetadata([linked.agentId])).toBe('second');
  });
});
