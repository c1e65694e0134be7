// Re-proving an agent in place (F, hex and binary agentId forms), proof freshness over chain time, the
// read-only identify action (I) and the per-human views (sameHuman, getAgentsForNullifier, counts).
import { hexToBytes } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { advancedDeregisterUserData, identifyUserData, refreshUserData, userDefinedDataBytes } from '../../src/core/user-data.js';
import { type MockDocument, mockDocumentFor } from '../../src/identity-app/index.js';
import { expectSubmitted, linkedData, newAccount, type RegisteredAgent, registerLinked, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import {
  blockTimestamp,
  DAY,
  expectReverted,
  isoDate,
  latestTimestamp,
  nullifierOf,
  registryEvents,
  registryOf,
  setMaxAgentsPerHuman,
  setMaxProofAge,
  utcMidnight,
  YEAR,
} from '../support/registry.js';

/** A K agent under config 1 (18+) whose human holds `document`. */
async function registerWithDocument(
  system: TestSystem,
  document: (human: string) => MockDocument,
): Promise<RegisteredAgent & { document: MockDocument }> {
  const human = newAccount().address;
  const doc = document(human);
  const agent = await registerLinked(system, { human, document: doc, minimumAge: 18 });
  return { ...agent, document: doc };
}

describe('refresh (F)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('hex form: same agentId and owner, new credentials and expiry, HumanProofRefreshed(agentId, nullifier, newExpiresAt, configId)', async () => {
    const now = await latestTimestamp(system);
    const [soon, later] = [isoDate(now + 100n * DAY), isoDate(now + 200n * DAY)];
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h, { expiryDate: soon }));
    const registry = registryOf(system);
    const configId = await registry.read.configIds([1n]);
    const registeredAt = await registry.read.agentRegisteredAt([agent.agentId]);
    expect(await registry.read.proofExpiresAt([agent.agentId])).toBe(utcMidnight(soon));

    const userDefinedData = refreshUserData({ configIndex: 1, agentId: agent.agentId });
    expect(userDefinedData).toBe(`F1${agent.agentId.toString(16).padStart(64, '0')}`);
    const renewed = { ...agent.document, expiryDate: later };
    const result = await submitProof(system, {
      userId: agent.human,
      userDefinedData,
      document: renewed,
      disclosures: { minimumAge: 18, nationality: true },
    });
    expectSubmitted(result);

    const events = await registryEvents(system, result.txHash);
    expect(events.map((e) => e.eventName)).toEqual(['AgentCredentialsStored', 'HumanProofRefreshed']);
    expect(events[1]?.args).toEqual({ agentId: agent.agentId, nullifier: agent.nullifier, newExpiresAt: utcMidnight(later), configId });

    expect(await registry.read.proofExpiresAt([agent.agentId])).toBe(utcMidnight(later));
    expect(await registry.read.ownerOf([agent.agentId])).toBe(agent.human);
    expect(await registry.read.getAgentId([agent.agentKey])).toBe(agent.agentId);
    expect(await registry.read.agentRegisteredAt([agent.agentId])).toBe(registeredAt);
    expect(await registry.read.agentConfigId([agent.agentId])).toBe(configId);
    expect(await registry.read.getHumanNullifier([agent.agentId])).toBe(agent.nullifier);
    expect(await registry.read.getAgentCountForHuman([agent.nullifier])).toBe(1n);
    expect(await registry.read.getAgentsForNullifier([agent.nullifier])).toEqual([agent.agentId]);
    const credentials = await registry.read.getAgentCredentials([agent.agentId]);
    expect(credentials.expiryDate).toBe(`${later.slice(8, 10)}-${later.slice(5, 7)}-${later.slice(2, 4)}`);
    expect(credentials.nationality).toBe('GBR');
    expect(credentials.olderThan).toBe(18n);
  });

  it('binary form (32 raw big-endian bytes, as deployed): refreshes to now + maxProofAge for a long-lived document', async () => {
    const longLived = isoDate((await latestTimestamp(system)) + 3n * YEAR);
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h, { expiryDate: longLived }));
    const userDefinedData = refreshUserData({ configIndex: 1, agentId: agent.agentId, encoding: 'binary' });
    const bytes = hexToBytes(userDefinedDataBytes(userDefinedData));
    expect(bytes).toHaveLength(34);
    expect(bytes[33]).toBe(Number(agent.agentId));

    const result = await submitProof(system, { userId: agent.human, userDefinedData, document: agent.document, disclosures: { minimumAge: 18 } });
    expectSubmitted(result);
    const refreshedAt = await blockTimestamp(system, result.blockNumber);
    const events = await registryEvents(system, result.txHash);
    expect(events.map((e) => e.eventName)).toEqual(['AgentCredentialsStored', 'HumanProofRefreshed']);
    expect(events[1]?.args).toEqual({
      agentId: agent.agentId,
      nullifier: agent.nullifier,
      newExpiresAt: refreshedAt + YEAR,
      configId: await registryOf(system).read.configIds([1n]),
    });
    expect(await registryOf(system).read.proofExpiresAt([agent.agentId])).toBe(refreshedAt + YEAR);
    expect(await registryOf(system).read.ownerOf([agent.agentId])).toBe(agent.human);
  });

  it('ConfigMismatch(stored, requested) under another digit, weaker or stronger', async () => {
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h));
    const registry = registryOf(system);
    const [c0, c1, c4] = await Promise.all([0n, 1n, 4n].map((i) => registry.read.configIds([i])));
    const weaker = await submitProof(system, { userId: agent.human, userDefinedData: refreshUserData({ configIndex: 0, agentId: agent.agentId }) });
    expectReverted(weaker, 'ConfigMismatch', [c1, c0]);
    const stronger = await submitProof(system, {
      userId: agent.human,
      userDefinedData: refreshUserData({ configIndex: 4, agentId: agent.agentId }),
      disclosures: { minimumAge: 18, ofac: true },
    });
    expectReverted(stronger, 'ConfigMismatch', [c1, c4]);
    expect(await registry.read.agentConfigId([agent.agentId])).toBe(c1);
  });

  it('NotAgentOwner(stored, proof) when another human refreshes', async () => {
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h));
    const other = newAccount().address;
    const before = await registryOf(system).read.proofExpiresAt([agent.agentId]);
    const result = await submitProof(system, {
      userId: other,
      userDefinedData: refreshUserData({ configIndex: 1, agentId: agent.agentId }),
      disclosures: { minimumAge: 18 },
    });
    expectReverted(result, 'NotAgentOwner', [agent.nullifier, await nullifierOf(system, other)]);
    expect(await registryOf(system).read.proofExpiresAt([agent.agentId])).toBe(before);
  });

  it('AgentHasNoHumanProof after deregistration and for an id never minted; InvalidUserData when shorter than 34 bytes', async () => {
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h));
    const x = advancedDeregisterUserData({ configIndex: 1, agent: agent.agent.address });
    expectSubmitted(
      await submitProof(system, { userId: agent.human, userDefinedData: x, document: agent.document, disclosures: { minimumAge: 18 } }),
    );

    const refresh = refreshUserData({ configIndex: 1, agentId: agent.agentId });
    const gone = await submitProof(system, {
      userId: agent.human,
      userDefinedData: refresh,
      document: agent.document,
      disclosures: { minimumAge: 18 },
    });
    expectReverted(gone, 'AgentHasNoHumanProof', [agent.agentId]);

    const never = await submitProof(system, {
      userId: agent.human,
      userDefinedData: refreshUserData({ configIndex: 1, agentId: 4242n }),
      disclosures: { minimumAge: 18 },
    });
    expectReverted(never, 'AgentHasNoHumanProof', [4242n]);

    const short = await submitProof(system, { userId: agent.human, userDefinedData: refresh.slice(0, 33), disclosures: { minimumAge: 18 } });
    expectReverted(short, 'InvalidUserData');
  });
});

describe('proof freshness over chain time (mainnet chain id, non-mock documents, small time moves)', () => {
  let system: TestSystem;
  const maxAge = 30n;
  beforeAll(async () => {
    system = await deployTestSystem('mainnet');
    await setMaxProofAge(system, maxAge);
  });

  /** Mines blocks, moving time forward by just enough, until the latest block is at or after `timestamp`. */
  async function mineUntil(timestamp: bigint): Promise<bigint> {
    for (let latest = await latestTimestamp(system); ; latest = await latestTimestamp(system)) {
      if (latest >= timestamp) return (await system.client.getBlock()).number;
      await system.client.request({ method: 'evm_increaseTime' as never, params: [Number(timestamp - latest)] as never });
      await system.client.request({ method: 'evm_mine' as never, params: [] as never });
    }
  }

  it('isProofFresh turns false at proofExpiresAt (hasHumanProof stays true); a refresh makes the proof fresh again', async () => {
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h, { mock: false }));
    const registry = registryOf(system);
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: agent.txHash });
    const registeredAt = await blockTimestamp(system, blockNumber);
    const expiresAt = await registry.read.proofExpiresAt([agent.agentId]);
    expect(expiresAt).toBe(registeredAt + maxAge);
    expect(await registry.read.isProofFresh([agent.agentId], { blockNumber })).toBe(true);

    const expiredBlock = await mineUntil(expiresAt);
    expect(await registry.read.isProofFresh([agent.agentId], { blockNumber: expiredBlock })).toBe(false);
    expect(await registry.read.hasHumanProof([agent.agentId], { blockNumber: expiredBlock })).toBe(true);
    expect(await registry.read.isVerifiedAgent([agent.agentKey], { blockNumber: expiredBlock })).toBe(true);

    const result = await submitProof(system, {
      userId: agent.human,
      userDefinedData: refreshUserData({ configIndex: 1, agentId: agent.agentId }),
      document: agent.document,
      disclosures: { minimumAge: 18 },
    });
    expectSubmitted(result);
    const refreshedAt = await blockTimestamp(system, result.blockNumber);
    expect(await registry.read.proofExpiresAt([agent.agentId])).toBe(refreshedAt + maxAge);
    expect(await registry.read.isProofFresh([agent.agentId], { blockNumber: result.blockNumber })).toBe(true);
  });

  it('changing maxProofAge leaves existing expiries as they are', async () => {
    const agent = await registerWithDocument(system, (h) => mockDocumentFor(h, { mock: false }));
    const registry = registryOf(system);
    const before = await registry.read.proofExpiresAt([agent.agentId]);
    await setMaxProofAge(system, YEAR);
    try {
      expect(await registry.read.maxProofAge()).toBe(YEAR);
      expect(await registry.read.proofExpiresAt([agent.agentId])).toBe(before);
    } finally {
      await setMaxProofAge(system, maxAge);
    }
  });
});

describe('identify (I) and the per-human views', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    await setMaxAgentsPerHuman(system, 2n);
  });

  async function twoAgentsOfOneHuman() {
    const human = newAccount().address;
    const a = await registerLinked(system, { human });
    const b = await registerLinked(system, { human });
    return { human, a, b, nullifier: a.nullifier };
  }

  it('I emits NullifierIdentified(nullifier, agentCount) and changes nothing', async () => {
    const { human, a, b, nullifier } = await twoAgentsOfOneHuman();
    const registry = registryOf(system);
    const expiries = await Promise.all([a, b].map((x) => registry.read.proofExpiresAt([x.agentId])));

    const result = await submitProof(system, { userId: human, userDefinedData: identifyUserData(0) });
    expectSubmitted(result);
    const events = await registryEvents(system, result.txHash);
    expect(events.map((e) => [e.eventName, e.args])).toEqual([['NullifierIdentified', { nullifier, agentCount: 2n }]]);

    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(2n);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([a.agentId, b.agentId]);
    expect(await Promise.all([a, b].map((x) => registry.read.proofExpiresAt([x.agentId])))).toEqual(expiries);
    expect(await registry.read.balanceOf([human])).toBe(2n);
    expect(await registry.read.getAgentId([addressAgentKey(human)])).toBe(0n);
  });

  it('I counts 1 after one of two agents is removed and 0 for a human without agents', async () => {
    const { human, a, nullifier } = await twoAgentsOfOneHuman();
    expectSubmitted(
      await submitProof(system, { userId: human, userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: a.agent.address }) }),
    );
    const one = await submitProof(system, { userId: human, userDefinedData: identifyUserData(0) });
    expectSubmitted(one);
    expect((await registryEvents(system, one.txHash)).map((e) => e.args)).toEqual([{ nullifier, agentCount: 1n }]);

    const nobody = newAccount().address;
    const zero = await submitProof(system, { userId: nobody, userDefinedData: identifyUserData(1), disclosures: { minimumAge: 18 } });
    expectSubmitted(zero);
    expect((await registryEvents(system, zero.txHash)).map((e) => e.args)).toEqual([
      { nullifier: await nullifierOf(system, nobody), agentCount: 0n },
    ]);
  });

  it('I still needs a proof that satisfies its config digit', async () => {
    const result = await submitProof(system, { userId: newAccount().address, userDefinedData: identifyUserData(2), disclosures: { minimumAge: 0 } });
    expectReverted(result, 'InvalidOlderThan');
  });

  it('sameHuman is true only for two live agents of one human', async () => {
    const { human, a, b } = await twoAgentsOfOneHuman();
    const c = await registerLinked(system);
    const registry = registryOf(system);
    expect(await registry.read.sameHuman([a.agentId, b.agentId])).toBe(true);
    expect(await registry.read.sameHuman([b.agentId, a.agentId])).toBe(true);
    expect(await registry.read.sameHuman([a.agentId, a.agentId])).toBe(true);
    expect(await registry.read.sameHuman([a.agentId, c.agentId])).toBe(false);
    expect(await registry.read.sameHuman([a.agentId, 987_654n])).toBe(false);
    expect(await registry.read.sameHuman([987_654n, 987_655n])).toBe(false);

    expectSubmitted(
      await submitProof(system, { userId: human, userDefinedData: advancedDeregisterUserData({ configIndex: 0, agent: b.agent.address }) }),
    );
    expect(await registry.read.sameHuman([a.agentId, b.agentId])).toBe(false);
  });

  it('getAgentsForNullifier (full and paginated) and getAgentCountForHuman', async () => {
    const { a, b, nullifier } = await twoAgentsOfOneHuman();
    const registry = registryOf(system);
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(2n);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([a.agentId, b.agentId]);
    const page = (offset: bigint, limit: bigint) => registry.read.getAgentsForNullifier([nullifier, offset, limit]);
    expect(await page(0n, 1n)).toEqual([a.agentId]);
    expect(await page(1n, 1n)).toEqual([b.agentId]);
    expect(await page(0n, 10n)).toEqual([a.agentId, b.agentId]);
    expect(await page(1n, 10n)).toEqual([b.agentId]);
    expect(await page(0n, 0n)).toEqual([]);
    expect(await page(2n, 1n)).toEqual([]);
    expect(await page(50n, 2n ** 256n - 1n)).toEqual([]);
    expect(await page(1n, 2n ** 256n - 1n)).toEqual([b.agentId]);

    const unknown = await nullifierOf(system, newAccount().address);
    expect(await registry.read.getAgentCountForHuman([unknown])).toBe(0n);
    expect(await registry.read.getAgentsForNullifier([unknown])).toEqual([]);
    expect(await registry.read.getAgentsForNullifier([unknown, 0n, 5n])).toEqual([]);
  });

  it('a third agent is refused at the raised cap of 2 with the new max in the error', async () => {
    const { human, nullifier } = await twoAgentsOfOneHuman();
    const result = await submitProof(system, { userId: human, userDefinedData: await linkedData(system, newAccount(), human) });
    expectReverted(result, 'TooManyAgentsForHuman', [nullifier, 2n]);
  });
});
