// Hub registration (R, K, W) end to end on a real anvil: the identity app proves, the local hub verifies and
// calls back, and the registry mints. State is read back from chain and events are decoded from receipts.
// Also: the credentials and proof expiry stored at registration, and the soulbound rule.
import { zeroAddress } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { type ConfigIndex, VERIFICATION_CONFIG_IDS } from '../../src/core/disclosures.js';
import { registerUserData } from '../../src/core/user-data.js';
import { type MockDocument, mockDocumentFor } from '../../src/identity-app/index.js';
import { expectSubmitted, linkedData, newAccount, registerLinked, registerWalletFree, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import {
  blockTimestamp,
  DAY,
  expectCallReverts,
  isoDate,
  latestTimestamp,
  mined,
  nullifierOf,
  registryAs,
  registryEvents,
  registryOf,
  setMaxProofAge,
  utcMidnight,
  YEAR,
} from '../support/registry.js';

/** "DD-MM-YY", as the hub formats document dates. */
const hubDate = (iso: string): string => `${iso.slice(8, 10)}-${iso.slice(5, 7)}-${iso.slice(2, 4)}`;

describe('hub registration (R, K, W)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('registers its six verification configs on the hub, in config-digit order', async () => {
    expect(await system.gateway.registry.configIds()).toEqual(VERIFICATION_CONFIG_IDS);
  });

  it('numbers agents from 1 upwards across R, K and W and mints to the human (R, K) or to the agent (W)', async () => {
    const registry = registryOf(system);
    const human = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: registerUserData(0) }));
    const linked = await registerLinked(system);
    const walletFree = await registerWalletFree(system);

    expect(await registry.read.getAgentId([addressAgentKey(human)])).toBe(1n);
    expect([linked.agentId, walletFree.agentId]).toEqual([2n, 3n]);
    expect(await registry.read.ownerOf([1n])).toBe(human);
    expect(await registry.read.ownerOf([2n])).toBe(linked.human);
    expect(await registry.read.ownerOf([3n])).toBe(walletFree.agent.address);
    expect(await registry.read.balanceOf([linked.agent.address])).toBe(0n);
  });

  it('R: keys the agent by the human, records the proof and emits Transfer, AgentRegisteredWithHumanProof, Registered, AgentCredentialsStored', async () => {
    const registry = registryOf(system);
    const human = newAccount().address;
    const result = await submitProof(system, { userId: human, userDefinedData: registerUserData(2), disclosures: { minimumAge: 21 } });
    expectSubmitted(result);
    const key = addressAgentKey(human);
    const agentId = await registry.read.getAgentId([key]);
    const nullifier = await nullifierOf(system, human);
    const provider = system.deployment.contracts.proofProvider;

    expect(result.nullifier).toBe(nullifier);
    expect(agentId).toBeGreaterThan(3n);
    expect(await registry.read.ownerOf([agentId])).toBe(human);
    expect(await registry.read.agentIdToAgentKey([agentId])).toBe(key);
    expect(await registry.read.hasHumanProof([agentId])).toBe(true);
    expect(await registry.read.isVerifiedAgent([key])).toBe(true);
    expect(await registry.read.getHumanNullifier([agentId])).toBe(nullifier);
    expect(await registry.read.selfProofProvider()).toBe(provider);
    expect(await registry.read.getProofProvider([agentId])).toBe(provider);
    expect(await registry.read.agentConfigId([agentId])).toBe(await registry.read.configIds([2n]));
    expect(await registry.read.agentConfigId([agentId])).toBe(VERIFICATION_CONFIG_IDS[2]);
    expect(await registry.read.agentRegisteredAt([agentId])).toBe(result.blockNumber);
    expect(await registry.read.agentGuardian([agentId])).toBe(zeroAddress);
    expect(await registry.read.tokenURI([agentId])).toBe('');
    expect(await registry.read.getAgentCountForHuman([nullifier])).toBe(1n);
    expect(await registry.read.getAgentsForNullifier([nullifier])).toEqual([agentId]);

    const events = await registryEvents(system, result.txHash);
    expect(events.map((e) => e.eventName)).toEqual(['Transfer', 'AgentRegisteredWithHumanProof', 'Registered', 'AgentCredentialsStored']);
    expect(events[0]?.args).toEqual({ from: zeroAddress, to: human, tokenId: agentId });
    expect(events[1]?.args).toEqual({ agentId, proofProvider: provider, nullifier, verificationStrength: 100 });
    expect(events[2]?.args).toEqual({ agentId, agentURI: '', owner: human });
    expect(events[3]?.args).toEqual({ agentId });
  });

  it('K: keys the agent by its own address, mints to the human, consumes the agent nonce', async () => {
    const registry = registryOf(system);
    const agent = await registerLinked(system, { minimumAge: 18, ofac: true });
    const nullifier = await nullifierOf(system, agent.human);
    const provider = system.deployment.contracts.proofProvider;

    expect(agent.agentKey).toBe(addressAgentKey(agent.agent.address));
    expect(await registry.read.ownerOf([agent.agentId])).toBe(agent.human);
    expect(await registry.read.agentIdToAgentKey([agent.agentId])).toBe(agent.agentKey);
    expect(await registry.read.getAgentId([addressAgentKey(agent.human)])).toBe(0n);
    expect(await registry.read.agentNonces([agent.agent.address])).toBe(1n);
    expect(await registry.read.hasHumanProof([agent.agentId])).toBe(true);
    expect(await registry.read.getHumanNullifier([agent.agentId])).toBe(nullifier);
    expect(agent.nullifier).toBe(nullifier);
    expect(await registry.read.getProofProvider([agent.agentId])).toBe(provider);
    expect(await registry.read.agentConfigId([agent.agentId])).toBe(await registry.read.configIds([4n]));

    const events = await registryEvents(system, agent.txHash);
    expect(events.map((e) => e.eventName)).toEqual(['Transfer', 'AgentRegisteredWithHumanProof', 'Registered', 'AgentCredentialsStored']);
    expect(events[0]?.args).toEqual({ from: zeroAddress, to: agent.human, tokenId: agent.agentId });
    expect(events[1]?.args).toEqual({ agentId: agent.agentId, proofProvider: provider, nullifier, verificationStrength: 100 });
    expect(events[2]?.args).toEqual({ agentId: agent.agentId, agentURI: '', owner: agent.human });
    expect(events[3]?.args).toEqual({ agentId: agent.agentId });
  });

  it('W with a guardian: mints to the agent, sets the guardian and emits GuardianSet last', async () => {
    const registry = registryOf(system);
    const guardian = newAccount().address;
    const agent = await registerWalletFree(system, { guardian, minimumAge: 18 });
    const nullifier = await nullifierOf(system, agent.agent.address);
    const provider = system.deployment.contracts.proofProvider;

    expect(await registry.read.ownerOf([agent.agentId])).toBe(agent.agent.address);
    expect(await registry.read.agentIdToAgentKey([agent.agentId])).toBe(addressAgentKey(agent.agent.address));
    expect(await registry.read.agentGuardian([agent.agentId])).toBe(guardian);
    expect(await registry.read.agentNonces([agent.agent.address])).toBe(1n);
    expect(await registry.read.getHumanNullifier([agent.agentId])).toBe(nullifier);
    expect(await registry.read.getProofProvider([agent.agentId])).toBe(provider);
    expect(await registry.read.agentConfigId([agent.agentId])).toBe(await registry.read.configIds([1n]));

    const events = await registryEvents(system, agent.txHash);
    expect(events.map((e) => e.eventName)).toEqual([
      'Transfer',
      'AgentRegisteredWithHumanProof',
      'Registered',
      'AgentCredentialsStored',
      'GuardianSet',
    ]);
    expect(events[0]?.args).toEqual({ from: zeroAddress, to: agent.agent.address, tokenId: agent.agentId });
    expect(events[1]?.args).toEqual({ agentId: agent.agentId, proofProvider: provider, nullifier, verificationStrength: 100 });
    expect(events[2]?.args).toEqual({ agentId: agent.agentId, agentURI: '', owner: agent.agent.address });
    expect(events[4]?.args).toEqual({ agentId: agent.agentId, guardian });
  });

  it('W without a guardian leaves agentGuardian unset and emits no GuardianSet', async () => {
    const agent = await registerWalletFree(system);
    expect(await registryOf(system).read.agentGuardian([agent.agentId])).toBe(zeroAddress);
    expect((await registryEvents(system, agent.txHash)).map((e) => e.eventName)).not.toContain('GuardianSet');
  });
});

describe('credentials and proof expiry', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  /** Registers a K agent for a new human with this document and these disclosures. */
  async function registerWith(
    document: (human: string) => MockDocument,
    disclosures: Parameters<typeof submitProof>[1]['disclosures'],
    configIndex: ConfigIndex,
  ) {
    const human = newAccount().address;
    const agent = newAccount();
    const result = await submitProof(system, {
      userId: human,
      userDefinedData: await linkedData(system, agent, human, configIndex),
      disclosures,
      document: document(human),
    });
    expectSubmitted(result);
    const agentId = await registryOf(system).read.getAgentId([addressAgentKey(agent.address)]);
    return { agentId, result, credentials: await registryOf(system).read.getAgentCredentials([agentId]) };
  }

  it('stores every disclosed field verbatim from the hub output', async () => {
    const expiry = isoDate((await latestTimestamp(system)) + 3n * YEAR);
    const overrides = {
      nationality: 'DEU',
      issuingState: 'FRA',
      firstNames: 'JEAN PAUL',
      lastName: 'DUPONT',
      gender: 'M',
      dateOfBirth: '1980-07-15',
      expiryDate: expiry,
    };
    let documentNumber = '';
    const { credentials } = await registerWith(
      (human) => {
        const doc = mockDocumentFor(human, overrides);
        documentNumber = doc.documentNumber;
        return doc;
      },
      { minimumAge: 21, ofac: true, nationality: true, name: true, dateOfBirth: true, gender: true, issuingState: true, idNumber: true },
      5,
    );
    expect(credentials).toEqual({
      issuingState: 'FRA',
      name: ['JEAN PAUL', 'DUPONT'],
      idNumber: documentNumber,
      nationality: 'DEU',
      dateOfBirth: '15-07-80',
      gender: 'M',
      expiryDate: hubDate(expiry),
      olderThan: 21n,
      ofac: [true, true, true],
    });
  });

  it('keeps undisclosed fields empty; olderThan is the config threshold, ofac flags as the hub reports them', async () => {
    const { credentials } = await registerWith((human) => mockDocumentFor(human, { documentType: 'eu-id-card' }), { minimumAge: 18, ofac: true }, 4);
    expect(credentials).toEqual({
      issuingState: '',
      name: ['', ''],
      idNumber: '',
      nationality: '',
      dateOfBirth: '',
      gender: '',
      expiryDate: hubDate('2035-01-01'),
      olderThan: 18n,
      ofac: [false, true, true], // an EU id card has no document-number OFAC check
    });

    const plain = await registerWith((human) => mockDocumentFor(human), { minimumAge: 0, ofac: false, nationality: true }, 0);
    expect(plain.credentials.nationality).toBe('GBR');
    expect(plain.credentials.name).toEqual(['', '']);
    expect(plain.credentials.olderThan).toBe(0n);
    expect(plain.credentials.ofac).toEqual([false, false, false]);
  });

  it('caps the proof at the document expiry (hub format DD-MM-YY) when it comes before now + maxProofAge', async () => {
    const expiry = isoDate((await latestTimestamp(system)) + 100n * DAY);
    const { agentId, result, credentials } = await registerWith((h) => mockDocumentFor(h, { expiryDate: expiry }), { minimumAge: 0, ofac: false }, 0);
    const registry = registryOf(system);
    const minted = await blockTimestamp(system, result.blockNumber);

    expect(credentials.expiryDate).toBe(hubDate(expiry));
    expect(await registry.read.maxProofAge()).toBe(YEAR);
    expect(await registry.read.proofExpiresAt([agentId])).toBe(utcMidnight(expiry));
    expect(utcMidnight(expiry)).toBeLessThan(minted + YEAR);
    expect(await registry.read.isProofFresh([agentId])).toBe(true);
  });

  it('uses now + maxProofAge when the document outlives it', async () => {
    const expiry = isoDate((await latestTimestamp(system)) + 3n * YEAR);
    const { agentId, result } = await registerWith((h) => mockDocumentFor(h, { expiryDate: expiry }), { minimumAge: 0, ofac: false }, 0);
    const minted = await blockTimestamp(system, result.blockNumber);
    expect(await registryOf(system).read.proofExpiresAt([agentId])).toBe(minted + YEAR);
    expect(await registryOf(system).read.isProofFresh([agentId])).toBe(true);
  });

  it('uses now + maxProofAge for a document without expiry date (Aadhaar: "UNAVAILABLE")', async () => {
    const { agentId, result, credentials } = await registerWith(
      (h) => mockDocumentFor(h, { documentType: 'aadhaar' }),
      { minimumAge: 0, ofac: false },
      0,
    );
    expect(credentials.expiryDate).toBe('UNAVAILABLE');
    expect(credentials.nationality).toBe('IND');
    const minted = await blockTimestamp(system, result.blockNumber);
    expect(await registryOf(system).read.proofExpiresAt([agentId])).toBe(minted + YEAR);
  });
});

describe('document expiry dates as the registry parses them (maxProofAge 40 years, so any valid date caps)', () => {
  let system: TestSystem;
  const maxAge = 40n * YEAR;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    await setMaxProofAge(system, maxAge);
  });

  async function expiresAtFor(expiryDate: string): Promise<{ expiresAt: bigint; minted: bigint }> {
    const human = newAccount().address;
    const result = await submitProof(system, {
      userId: human,
      userDefinedData: registerUserData(0),
      disclose: (output) => ({ ...output, expiryDate }),
    });
    expectSubmitted(result);
    const registry = registryOf(system);
    const agentId = await registry.read.getAgentId([addressAgentKey(human)]);
    expect((await registry.read.getAgentCredentials([agentId])).expiryDate).toBe(expiryDate);
    return { expiresAt: await registry.read.proofExpiresAt([agentId]), minted: await blockTimestamp(system, result.blockNumber) };
  }

  it.each([
    ['01-01-27', '2027-01-01'],
    ['270101', '2027-01-01'],
    ['29-02-28', '2028-02-29'],
    ['280229', '2028-02-29'],
    ['01-03-28', '2028-03-01'],
    ['31-12-30', '2030-12-31'],
    ['31-12-49', '2049-12-31'],
    ['01-01-00', '2000-01-01'],
    ['29-02-00', '2000-02-29'],
    ['31-12-99', '1999-12-31'],
    ['01-03-70', '1970-03-01'],
  ])('%s caps the proof at %s (UTC midnight)', async (expiryDate, iso) => {
    const { expiresAt } = await expiresAtFor(expiryDate);
    expect(expiresAt).toBe(utcMidnight(iso));
  });

  it.each([
    ['29-02-27', 'no 29 February in 2027'],
    ['31-04-27', 'April has 30 days'],
    ['00-01-27', 'day 0'],
    ['01-00-27', 'month 0'],
    ['01-13-27', 'month 13'],
    ['271301', 'YYMMDD month 13'],
    ['270230', 'YYMMDD 30 February'],
    ['27011', 'five characters'],
    ['01-01-50', '1950 (two-digit years from 50 are 19YY)'],
    ['01-01-69', '1969 (before the epoch)'],
    ['01/01/27', 'wrong separators'],
    ['1-01-027', 'misplaced separators'],
    ['0a-01-27', 'a letter'],
    ['01-01-2027', 'four-digit year'],
    ['UNAVAILABLE', 'no date'],
    ['', 'empty'],
  ])('%s (%s) is no cap: now + maxProofAge', async (expiryDate) => {
    const { expiresAt, minted } = await expiresAtFor(expiryDate);
    expect(expiresAt).toBe(minted + maxAge);
  });
});

describe('soulbound agent NFTs', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('transferFrom and both safeTransferFrom overloads revert TransferNotAllowed, even for the owner', async () => {
    const owner = await system.newWallet();
    const agent = await registerLinked(system, { human: owner.account.address });
    const registry = registryOf(system);
    const to = newAccount().address;
    const from = owner.account.address;
    const account = owner.account.address;

    await expectCallReverts(registry.simulate.transferFrom([from, to, agent.agentId], { account }), 'TransferNotAllowed');
    await expectCallReverts(registry.simulate.safeTransferFrom([from, to, agent.agentId], { account }), 'TransferNotAllowed');
    await expectCallReverts(registry.simulate.safeTransferFrom([from, to, agent.agentId, '0x1234'], { account }), 'TransferNotAllowed');
    expect(await registry.read.ownerOf([agent.agentId])).toBe(from);
  });

  it('approvals still work, but an approved operator cannot transfer either', async () => {
    const owner = await system.newWallet();
    const operator = await system.newWallet();
    const agent = await registerLinked(system, { human: owner.account.address });
    const registry = registryOf(system);
    await mined(system, registryAs(system, owner).write.approve([operator.account.address, agent.agentId]));
    await mined(system, registryAs(system, owner).write.setApprovalForAll([operator.account.address, true]));
    expect(await registry.read.getApproved([agent.agentId])).toBe(operator.account.address);

    const args = [owner.account.address, operator.account.address, agent.agentId] as const;
    await expectCallReverts(registry.simulate.transferFrom(args, { account: operator.account.address }), 'TransferNotAllowed');
    await expectCallReverts(registry.simulate.safeTransferFrom(args, { account: operator.account.address }), 'TransferNotAllowed');
    expect(await registry.read.ownerOf([agent.agentId])).toBe(owner.account.address);
  });
});
