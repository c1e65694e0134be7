// Every way a hub registration is refused, with the exact error (registry or hub) and its arguments. Each case
// also checks that nothing was minted where that is observable.
import { type Address, encodeAbiParameters, zeroAddress } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentRegistryAbi, agentRegistryBytecode } from '../../src/contracts/artifacts/index.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { registrationChallengeHash, signRegistrationChallenge } from '../../src/core/challenge.js';
import { ed25519AgentAddress } from '../../src/core/ed25519-key.js';
import { advancedDeregisterUserData, registerUserData, walletFreeRegisterUserData } from '../../src/core/user-data.js';
import { buildDisclosureOutput, encodeDiscloseOutput, mockDocumentFor } from '../../src/identity-app/index.js';
import { ed25519Data, expectSubmitted, linkedData, newAccount, newEd25519Agent, registerLinked, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import {
  expectCallReverts,
  expectReverted,
  latestTimestamp,
  mined,
  nullifierOf,
  registryOf,
  scopeOf,
  setMaxAgentsPerHuman,
} from '../support/registry.js';

/** The date `years` years (plus `days` days) before the chain's current day, YYYY-MM-DD. */
const isoYearsAgo = (chainNow: bigint, years: number, days = 0): string => {
  const d = new Date(Number(chainNow) * 1000);
  d.setUTCFullYear(d.getUTCFullYear() - years);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
};

describe('refused registrations (registry errors)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('AgentAlreadyRegistered: the same key twice (R by one human; K of one agent key for another human)', async () => {
    const human = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: registerUserData(0) }));
    const again = await submitProof(system, { userId: human, userDefinedData: registerUserData(0) });
    expectReverted(again, 'AgentAlreadyRegistered', [addressAgentKey(human)]);

    const linked = await registerLinked(system);
    const otherHuman = newAccount().address;
    const second = await submitProof(system, { userId: otherHuman, userDefinedData: await linkedData(system, linked.agent, otherHuman) });
    expectReverted(second, 'AgentAlreadyRegistered', [linked.agentKey]);
    expect(await registryOf(system).read.balanceOf([otherHuman])).toBe(0n);
    expect(await registryOf(system).read.agentNonces([linked.agent.address])).toBe(1n);
  });

  it('TooManyAgentsForHuman at the default cap of 1; a second agent is accepted once the operator raises the cap', async () => {
    const registry = registryOf(system);
    expect(await registry.read.maxAgentsPerHuman()).toBe(1n);
    const first = await registerLinked(system);
    const agent = newAccount();
    const userDefinedData = await linkedData(system, agent, first.human);
    expectReverted(await submitProof(system, { userId: first.human, userDefinedData }), 'TooManyAgentsForHuman', [first.nullifier, 1n]);
    expect(await registry.read.getAgentCountForHuman([first.nullifier])).toBe(1n);

    await setMaxAgentsPerHuman(system, 2n);
    try {
      expectSubmitted(await submitProof(system, { userId: first.human, userDefinedData }));
      expect(await registry.read.getAgentCountForHuman([first.nullifier])).toBe(2n);
      const third = await linkedData(system, newAccount(), first.human);
      expectReverted(await submitProof(system, { userId: first.human, userDefinedData: third }), 'TooManyAgentsForHuman', [first.nullifier, 2n]);

      await setMaxAgentsPerHuman(system, 0n); // 0 = no limit
      expectSubmitted(await submitProof(system, { userId: first.human, userDefinedData: third }));
      expect(await registry.read.getAgentCountForHuman([first.nullifier])).toBe(3n);
    } finally {
      await setMaxAgentsPerHuman(system, 1n);
    }
  });

  it('InvalidAgentSignature: K signed for another human', async () => {
    const human = newAccount().address;
    const agent = newAccount();
    const userDefinedData = await linkedData(system, agent, newAccount().address);
    expectReverted(await submitProof(system, { userId: human, userDefinedData }), 'InvalidAgentSignature');
    expect(await registryOf(system).read.agentNonces([agent.address])).toBe(0n);
  });

  it('InvalidAgentSignature: W naming one agent but signed by another key', async () => {
    const agent = newAccount();
    const impostor = newAccount();
    const hash = registrationChallengeHash({
      human: agent.address,
      chainId: system.deployment.chainId,
      registry: system.deployment.contracts.registry,
      nonce: 0n,
    });
    const userDefinedData = walletFreeRegisterUserData({
      configIndex: 0,
      agent: agent.address,
      signature: await signRegistrationChallenge(impostor, hash),
    });
    expectReverted(await submitProof(system, { userId: agent.address, userDefinedData }), 'InvalidAgentSignature');
    expect(await registryOf(system).read.getAgentId([addressAgentKey(agent.address)])).toBe(0n);
  });

  it('a consumed nonce cannot be replayed: the userDefinedData of a registered-then-deregistered agent is refused', async () => {
    const human = newAccount().address;
    const agent = newAccount();
    const userDefinedData = await linkedData(system, agent, human);
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData }));
    const deregister = advancedDeregisterUserData({ configIndex: 0, agent: agent.address });
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: deregister }));
    expect(await registryOf(system).read.getAgentId([addressAgentKey(agent.address)])).toBe(0n);

    expectReverted(await submitProof(system, { userId: human, userDefinedData }), 'InvalidAgentSignature');
    expect(await registryOf(system).read.agentNonces([agent.address])).toBe(1n);
    expect(await registryOf(system).read.getAgentId([addressAgentKey(agent.address)])).toBe(0n);
  });

  it('InvalidConfigIndex for config digit 9 (and for the byte 0x06), InvalidAction for an unknown action byte', async () => {
    const human = newAccount().address;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: 'R9' }), 'InvalidConfigIndex', [0x39]);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: 'R\u0006' }), 'InvalidConfigIndex', [6]);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: 'Z0' }), 'InvalidAction', [0x5a]);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: 'r0' }), 'InvalidAction', [0x72]);
    expect(await registryOf(system).read.balanceOf([human])).toBe(0n);
  });

  it('a binary config byte 0..5 selects that config like its ASCII digit; no digit at all means config 0', async () => {
    const human = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: 'R\u0001', disclosures: { minimumAge: 18 } }));
    const registry = registryOf(system);
    const agentId = await registry.read.getAgentId([addressAgentKey(human)]);
    expect(await registry.read.agentConfigId([agentId])).toBe(await registry.read.configIds([1n]));

    const bare = newAccount().address;
    expectSubmitted(await submitProof(system, { userId: bare, userDefinedData: 'R' }));
    const bareId = await registry.read.getAgentId([addressAgentKey(bare)]);
    expect(await registry.read.agentConfigId([bareId])).toBe(await registry.read.configIds([0n]));
  });

  it('InvalidUserData: empty data, a short K, non-hex characters in K fields', async () => {
    const human = newAccount().address;
    const agent = newAccount();
    const valid = await linkedData(system, agent, human);
    expect(valid).toHaveLength(172);

    expectReverted(await submitProof(system, { userId: human, userDefinedData: '' }), 'InvalidUserData');
    expectReverted(await submitProof(system, { userId: human, userDefinedData: valid.slice(0, 171) }), 'InvalidUserData');
    expectReverted(await submitProof(system, { userId: human, userDefinedData: `K0${'a'.repeat(100)}` }), 'InvalidUserData');
    const nonHexAgent = `${valid.slice(0, 10)}g${valid.slice(11)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: nonHexAgent }), 'InvalidUserData');
    const nonHexSignature = `${valid.slice(0, 100)}z${valid.slice(101)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: nonHexSignature }), 'InvalidUserData');
    const shortX = advancedDeregisterUserData({ configIndex: 0, agent: agent.address }).slice(0, 41);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: shortX }), 'InvalidUserData');
    expect(await registryOf(system).read.agentNonces([agent.address])).toBe(0n);

    // the untouched data still registers (uppercase hex is accepted too)
    const upper = `K0${valid.slice(2).toUpperCase()}`;
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: upper }));
  });

  it('UnauthorizedCaller: only the hub may call onVerificationSuccess', async () => {
    const caller = await system.newWallet();
    const human = caller.account.address;
    const output = buildDisclosureOutput({
      document: mockDocumentFor(human),
      requested: { minimumAge: 0, ofac: false },
      scope: await scopeOf(system),
      userIdentifier: BigInt(human),
      now: new Date(),
    });
    await expectCallReverts(
      registryOf(system).simulate.onVerificationSuccess([encodeDiscloseOutput(output), '0x5230'], { account: caller.account.address }),
      'UnauthorizedCaller',
    );
    await expectCallReverts(
      registryOf(system).simulate.onVerificationSuccess([encodeAbiParameters([{ type: 'uint256' }], [1n]), '0x5230'], {
        account: caller.account.address,
      }),
      'UnauthorizedCaller',
    );
  });

  it('E on a registry that has no Ed25519 verifier configured reverts Ed25519VerifierNotConfigured', async () => {
    // deployContracts configures one; a registry deployed on its own starts without
    const args = [system.deployment.contracts.hub, system.operator.account.address] as const;
    const receipt = await mined(system, system.operator.deployContract({ abi: agentRegistryAbi, bytecode: agentRegistryBytecode, args }));
    const registry = receipt.contractAddress as Address;
    const bare: TestSystem = { ...system, deployment: { ...system.deployment, contracts: { ...system.deployment.contracts, registry } } };
    expect(await registryOf(bare).read.ed25519Verifier()).toBe(zeroAddress);

    const key = newEd25519Agent();
    const human = newAccount().address;
    const userDefinedData = await ed25519Data(bare, key, human, { guardian: human });
    expect(userDefinedData).toHaveLength(554);
    expectReverted(await submitProof(bare, { userId: human, userDefinedData }), 'Ed25519VerifierNotConfigured');
    expect(await registryOf(bare).read.ed25519Nonce([key.pubkey])).toBe(0n);
    expect(await registryOf(bare).read.getAgentId([key.pubkey])).toBe(0n);
    expect(await registryOf(bare).read.balanceOf([ed25519AgentAddress(key.pubkey)])).toBe(0n);
  });

  it('E whose extKpub[4] is not the registered pubkey reverts InvalidUserData (layout checks come first)', async () => {
    const key = newEd25519Agent();
    const other = newEd25519Agent();
    const human = newAccount().address;
    const [a, b, c, d] = key.extKpub;
    const mismatched = await ed25519Data(system, key, human, { extKpub: [a, b, c, d, other.extKpub[4]] });
    expectReverted(await submitProof(system, { userId: human, userDefinedData: mismatched }), 'InvalidUserData');

    const valid = await ed25519Data(system, key, human);
    expectReverted(await submitProof(system, { userId: human, userDefinedData: valid.slice(0, 553) }), 'InvalidUserData');
    const nonHexGuardian = `${valid.slice(0, 540)}x${valid.slice(541)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: nonHexGuardian }), 'InvalidUserData');
    const nonHexExtKpub = `${valid.slice(0, 200)}x${valid.slice(201)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: nonHexExtKpub }), 'InvalidUserData');
    const zero = '0'.repeat(64);
    const zeroKey = `${valid.slice(0, 2)}${zero}${valid.slice(66, 450)}${zero}${valid.slice(514)}`;
    expectReverted(await submitProof(system, { userId: human, userDefinedData: zeroKey }), 'InvalidUserData');
  });
});

describe('refused registrations (hub checks of the disclosure against the config digit)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  it('digit 1 (18+) but no minimum age requested: the proof fails the age check', async () => {
    const human = newAccount().address;
    const result = await submitProof(system, { userId: human, userDefinedData: registerUserData(1), disclosures: { minimumAge: 0 } });
    expectReverted(result, 'InvalidOlderThan');
    expect(await registryOf(system).read.balanceOf([human])).toBe(0n);
  });

  it('digit 3 (OFAC) but OFAC not requested: the proof fails the OFAC check', async () => {
    const human = newAccount().address;
    const result = await submitProof(system, { userId: human, userDefinedData: registerUserData(3), disclosures: { ofac: false } });
    expectReverted(result, 'InvalidOfac');
  });

  it('an under-age human is refused by the 18+ and 21+ configs, accepted from the 18th birthday', async () => {
    const human = newAccount().address;
    const now = await latestTimestamp(system);
    const seventeen = mockDocumentFor(human, { dateOfBirth: isoYearsAgo(now, 18, 2) });
    const under18 = await submitProof(system, {
      userId: human,
      userDefinedData: registerUserData(1),
      disclosures: { minimumAge: 18 },
      document: seventeen,
    });
    expectReverted(under18, 'InvalidOlderThan');

    const twenty = mockDocumentFor(human, { dateOfBirth: isoYearsAgo(now, 20) });
    const under21 = await submitProof(system, {
      userId: human,
      userDefinedData: registerUserData(2),
      disclosures: { minimumAge: 21 },
      document: twenty,
    });
    expectReverted(under21, 'InvalidOlderThan');

    const adult = mockDocumentFor(human, { dateOfBirth: isoYearsAgo(now, 18, -2) });
    expectSubmitted(
      await submitProof(system, { userId: human, userDefinedData: registerUserData(1), disclosures: { minimumAge: 18 }, document: adult }),
    );
  });

  it('a sanctioned human is refused when OFAC is requested, accepted by a config without OFAC', async () => {
    const human = newAccount().address;
    const sanctioned = mockDocumentFor(human, { sanctioned: true });
    const refused = await submitProof(system, {
      userId: human,
      userDefinedData: registerUserData(3),
      disclosures: { ofac: true },
      document: sanctioned,
    });
    expectReverted(refused, 'InvalidOfac');
    const refused18 = await submitProof(system, {
      userId: human,
      userDefinedData: registerUserData(4),
      disclosures: { ofac: true, minimumAge: 18 },
      document: sanctioned,
    });
    expectReverted(refused18, 'InvalidOfac');
    expect(await registryOf(system).read.balanceOf([human])).toBe(0n);

    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: registerUserData(0), document: sanctioned }));
    const agentId = await registryOf(system).read.getAgentId([addressAgentKey(human)]);
    expect(await registryOf(system).read.getHumanNullifier([agentId])).toBe(await nullifierOf(system, sanctioned));
  });
});

describe('mock documents on the Celo mainnet chain id (42220)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('mainnet');
  });

  it('refuses a mock document and accepts a non-mock one', async () => {
    expect(system.deployment.chainId).toBe(42220);
    const human = newAccount().address;
    const mock = await submitProof(system, { userId: human, userDefinedData: registerUserData(0), document: mockDocumentFor(human) });
    expectReverted(mock, 'MockDocumentsNotAccepted');
    expect(await registryOf(system).read.balanceOf([human])).toBe(0n);

    const real = mockDocumentFor(human, { mock: false });
    expectSubmitted(await submitProof(system, { userId: human, userDefinedData: registerUserData(0), document: real }));
    expect(await registryOf(system).read.ownerOf([1n])).toBe(human);
  });
});
