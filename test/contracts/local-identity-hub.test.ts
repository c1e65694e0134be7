// LocalIdentityHub, the stand-in for Self's Hub V2: its content-addressed config registry and every refusal
// of verify(), each with its named error. Most payloads are hand-built with the identity app's attestation
// helpers and submitted through the registry's verifySelfProof, so the whole relayer -> registry -> hub path
// is real; the layout checks the registry can never trigger are exercised with direct hub.verify calls.
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hex,
  type LocalAccount,
  numberToHex,
  pad,
  parseEventLogs,
  sha256,
  type TransactionReceipt,
} from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { agentRegistryAbi, localIdentityHubAbi } from '../../src/contracts/artifacts/index.js';
import {
  VERIFICATION_CONFIG_IDS,
  VERIFICATION_CONFIGS,
  type VerificationConfigV2,
  verificationConfigId,
  verificationConfigV2AbiType,
} from '../../src/core/disclosures.js';
import {
  attestationIdOf,
  attestationTypedData,
  buildDisclosureOutput,
  encodeAttestedProof,
  type GenericDiscloseOutputV2,
  type MockDocument,
  mockDocumentFor,
  proofPayload,
  type RequestedDisclosures,
  userContextData,
  verifySelfProofAbi,
} from '../../src/identity-app/index.js';
import { newAccount } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { DOCUMENTED_CONFIG_IDS } from '../support/onchain-facts.js';
import { DAY, expectCallReverts, latestTimestamp, mined } from '../support/registry.js';

interface Submission {
  /** proofPayload for verifySelfProof: attestationId || abi.encode(mock, currentDate, output, signature). */
  payload: Hex;
  /** userContextData for verifySelfProof: destChainId || userIdentifier || userDefinedData. */
  context: Hex;
  output: GenericDiscloseOutputV2;
  currentDate: bigint;
}

interface BuildOptions {
  userId?: Address;
  userDefinedData?: string;
  document?: MockDocument;
  disclosures?: RequestedDisclosures;
  destChainId?: number;
  /** Header attestation id (default: the document's). */
  attestationId?: Hex;
  mockDocument?: boolean;
  /** The proof's current date in unix seconds (default: the latest block's timestamp). */
  currentDate?: bigint;
  /** The attester (default: the one the hub trusts). */
  signer?: LocalAccount;
  /** Changes the disclosure before it is signed. */
  edit?: (output: GenericDiscloseOutputV2) => GenericDiscloseOutputV2;
  /** Changes the disclosure after it was signed. */
  tamper?: (output: GenericDiscloseOutputV2) => GenericDiscloseOutputV2;
  /** The scope the attestation is made for (default: the registry's). */
  scope?: bigint;
}

/** A hand-built, attested submission, made the way the identity app makes one (src/identity-app/prove.ts). */
async function build(system: TestSystem, options: BuildOptions = {}): Promise<Submission> {
  const registry = system.deployment.contracts.registry;
  const userId = options.userId ?? newAccount().address;
  const scope = options.scope ?? (await system.client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'scope' }));
  const currentDate = options.currentDate ?? (await latestTimestamp(system));
  const document = options.document ?? mockDocumentFor(userId);
  const attestationId = options.attestationId ?? attestationIdOf(document.documentType);
  const mockDocument = options.mockDocument ?? document.mock ?? true;
  const context = userContextData({
    destChainId: options.destChainId ?? system.deployment.chainId,
    userId,
    userDefinedData: options.userDefinedData ?? 'R0',
  });
  const built = buildDisclosureOutput({
    document,
    requested: { minimumAge: 0, ofac: false, ...options.disclosures },
    scope,
    userIdentifier: BigInt(userId),
    now: new Date(Number(currentDate) * 1000),
  });
  const output = (options.edit ?? ((o) => o))({ ...built, attestationId });
  const signature = await (options.signer ?? system.attester).signTypedData(
    attestationTypedData({
      hub: system.deployment.contracts.hub,
      chainId: system.deployment.chainId,
      scope,
      attestationId,
      userContextData: context,
      output,
      mockDocument,
      currentDate,
    }),
  );
  const delivered = options.tamper ? options.tamper(output) : output;
  const proof = encodeAttestedProof({ mockDocument, currentDate, output: delivered, signature });
  return { payload: proofPayload(attestationId, proof), context, output, currentDate };
}

/** verifySelfProof as Self's relayer calls it, simulated: resolves only if the whole path succeeds. */
function relay(system: TestSystem, relayer: ChainWallet, payload: Hex, context: Hex) {
  return system.client.simulateContract({
    address: system.deployment.contracts.registry,
    abi: verifySelfProofAbi,
    functionName: 'verifySelfProof',
    args: [payload, context],
    account: relayer.account,
  });
}

async function relayAndMine(system: TestSystem, relayer: ChainWallet, submission: Submission): Promise<TransactionReceipt> {
  const { request } = await relay(system, relayer, submission.payload, submission.context);
  return mined(system, await relayer.writeContract(request));
}

/** The hub's own view of the same request: the header and context the registry builds (onchain-facts 7.1). */
async function hubArgs(system: TestSystem, submission: Submission, configId: Hex): Promise<readonly [Hex, Hex]> {
  const scope = await system.client.readContract({
    address: system.deployment.contracts.registry,
    abi: agentRegistryAbi,
    functionName: 'scope',
  });
  const header = concat([numberToHex(2, { size: 1 }), pad('0x', { size: 31 }), numberToHex(scope, { size: 32 }), submission.payload]);
  return [header, concat([configId, submission.context])];
}

function callHub(system: TestSystem, caller: ChainWallet, input: Hex, context: Hex) {
  return system.client.simulateContract({
    address: system.deployment.contracts.hub,
    abi: localIdentityHubAbi,
    functionName: 'verify',
    args: [input, context],
    account: caller.account,
  });
}

// ------------------------------------------------------------------------------------------------------------

describe('LocalIdentityHub config registry', () => {
  let system: TestSystem;
  let stranger: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    stranger = await system.newWallet();
  });

  const hub = () => ({ address: system.deployment.contracts.hub, abi: localIdentityHubAbi }) as const;

  it('src/core/disclosures.ts VERIFICATION_CONFIG_IDS are the config ids documented in onchain-facts 1.6', () => {
    expect(VERIFICATION_CONFIG_IDS).toEqual(DOCUMENTED_CONFIG_IDS);
  });

  it('setVerificationConfigV2 returns sha256(abi.encode(config)), equal to VERIFICATION_CONFIG_IDS, for any caller', async () => {
    for (const [index, config] of VERIFICATION_CONFIGS.entries()) {
      const { result } = await system.client.simulateContract({
        ...hub(),
        account: stranger.account,
        functionName: 'setVerificationConfigV2',
        args: [config],
      });
      expect(result).toBe(VERIFICATION_CONFIG_IDS[index]);
      expect(result).toBe(sha256(encodeAbiParameters([verificationConfigV2AbiType], [config])));
      expect(await system.client.readContract({ ...hub(), functionName: 'generateConfigId', args: [config] })).toBe(result);
    }
  });

  it("the registry's configIds(0..5) are those ids, registered on the hub with their configs", async () => {
    for (let i = 0; i < 6; i++) {
      const id = await system.client.readContract({
        address: system.deployment.contracts.registry,
        abi: agentRegistryAbi,
        functionName: 'configIds',
        args: [BigInt(i)],
      });
      expect(id, `configIds(${i})`).toBe(VERIFICATION_CONFIG_IDS[i]);
      expect(await system.client.readContract({ ...hub(), functionName: 'verificationConfigV2Exists', args: [id] })).toBe(true);
      expect(await system.client.readContract({ ...hub(), functionName: 'getVerificationConfigV2', args: [id] })).toEqual(VERIFICATION_CONFIGS[i]);
    }
    await expect(
      system.client.readContract({ address: system.deployment.contracts.registry, abi: agentRegistryAbi, functionName: 'configIds', args: [6n] }),
    ).rejects.toThrow();
  });

  it('a new config is stored under its content address with VerificationConfigV2Set', async () => {
    const config: VerificationConfigV2 = {
      olderThanEnabled: true,
      olderThan: 30n,
      forbiddenCountriesEnabled: true,
      forbiddenCountriesListPacked: [7n, 0n, 0n, 9n],
      ofacEnabled: [false, true, false],
    };
    const id = verificationConfigId(config);
    expect(await system.client.readContract({ ...hub(), functionName: 'verificationConfigV2Exists', args: [id] })).toBe(false);
    const receipt = await mined(system, await stranger.writeContract({ ...hub(), functionName: 'setVerificationConfigV2', args: [config] }));
    expect(parseEventLogs({ abi: localIdentityHubAbi, logs: receipt.logs }).map((e) => [e.eventName, e.args])).toEqual([
      ['VerificationConfigV2Set', { configId: id, config }],
    ]);
    expect(await system.client.readContract({ ...hub(), functionName: 'verificationConfigV2Exists', args: [id] })).toBe(true);
    expect(await system.client.readContract({ ...hub(), functionName: 'getVerificationConfigV2', args: [id] })).toEqual(config);
  });

  it("the registry's getConfigId picks the config by userDefinedData[1] (ASCII or binary digit), config 0 when absent", async () => {
    const getConfigId = (data: Hex) =>
      system.client.readContract({
        address: system.deployment.contracts.registry,
        abi: agentRegistryAbi,
        functionName: 'getConfigId',
        args: [pad('0x', { size: 32 }), pad('0x', { size: 32 }), data],
      });
    for (let i = 0; i < 6; i++) {
      expect(await getConfigId(concat(['0x52', numberToHex(0x30 + i, { size: 1 })]))).toBe(VERIFICATION_CONFIG_IDS[i]);
      expect(await getConfigId(concat(['0x52', numberToHex(i, { size: 1 })]))).toBe(VERIFICATION_CONFIG_IDS[i]);
    }
    expect(await getConfigId('0x52')).toBe(VERIFICATION_CONFIG_IDS[0]);
    await expectCallReverts(getConfigId('0x5236'), 'InvalidConfigIndex', [0x36]);
    await expectCallReverts(getConfigId('0x5206'), 'InvalidConfigIndex', [6]);
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('verify() through the registry on the testnet chain', () => {
  let system: TestSystem;
  let relayer: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    relayer = await system.newWallet();
  });

  const registryRead = () => ({ address: system.deployment.contracts.registry, abi: agentRegistryAbi }) as const;
  const agentIdOf = (user: Address) =>
    system.client.readContract({ ...registryRead(), functionName: 'getAgentId', args: [pad(user.toLowerCase() as Address, { size: 32 })] });

  it('accepts a well-formed attested mock document and reports DisclosureVerified (control)', async () => {
    expect(
      await system.client.readContract({ address: system.deployment.contracts.hub, abi: localIdentityHubAbi, functionName: 'acceptsMockDocuments' }),
    ).toBe(true);
    const user = newAccount().address;
    const submission = await build(system, { userId: user });
    const receipt = await relayAndMine(system, relayer, submission);
    const hubEvents = parseEventLogs({ abi: localIdentityHubAbi, logs: receipt.logs, eventName: 'DisclosureVerified' });
    expect(hubEvents.map((e) => e.args)).toEqual([
      {
        root: system.deployment.contracts.registry,
        configId: VERIFICATION_CONFIG_IDS[0],
        attestationId: attestationIdOf('passport'),
        scope: await system.client.readContract({ ...registryRead(), functionName: 'scope' }),
        nullifier: submission.output.nullifier,
        userIdentifier: BigInt(user),
        attester: system.attester.address,
        mockDocument: true,
      },
    ]);
    expect(await agentIdOf(user)).toBeGreaterThan(0n);
  });

  it("the registry's own layout check: InvalidDataFormat for a payload under 32 bytes or a context under 64", async () => {
    const submission = await build(system);
    await expectCallReverts(relay(system, relayer, pad('0x01', { size: 31 }), submission.context), 'InvalidDataFormat');
    await expectCallReverts(relay(system, relayer, submission.payload, pad('0x01', { size: 63 })), 'InvalidDataFormat');
  });

  it('InputTooShort when the payload is the attestation id alone (96-byte hub input)', async () => {
    const submission = await build(system);
    await expectCallReverts(relay(system, relayer, attestationIdOf('passport'), submission.context), 'InputTooShort');
  });

  it('UnsupportedAttestationId for an attestation id other than 1, 2, 3 (even when attested)', async () => {
    const kyc = pad('0x04', { size: 32 });
    const submission = await build(system, { attestationId: kyc });
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'UnsupportedAttestationId', [kyc]);
    const zero = pad('0x00', { size: 32 });
    const none = await build(system, { attestationId: zero });
    await expectCallReverts(relay(system, relayer, none.payload, none.context), 'UnsupportedAttestationId', [zero]);
  });

  it('CurrentDateNotInValidRange for a proof dated 2 days before or after the block; 1 day off is accepted', async () => {
    const now = await latestTimestamp(system);
    for (const currentDate of [now - 2n * DAY, now + 2n * DAY]) {
      const submission = await build(system, { currentDate });
      const call = relay(system, relayer, submission.payload, submission.context);
      await expectCallReverts(call, 'CurrentDateNotInValidRange', [currentDate, expect.any(BigInt)]);
    }
    // within the window (a minute of slack for blocks mined meanwhile)
    const user = newAccount().address;
    const yesterday = await build(system, { userId: user, currentDate: now - DAY + 60n });
    await relayAndMine(system, relayer, yesterday);
    expect(await agentIdOf(user)).toBeGreaterThan(0n);
  });

  it('InvalidAttesterSignature for an untrusted attester, a disclosure changed after signing, or another user context', async () => {
    const untrusted = await build(system, { signer: newAccount() });
    await expectCallReverts(relay(system, relayer, untrusted.payload, untrusted.context), 'InvalidAttesterSignature');

    const tampered = await build(system, { tamper: (o) => ({ ...o, nullifier: o.nullifier + 1n }) });
    await expectCallReverts(relay(system, relayer, tampered.payload, tampered.context), 'InvalidAttesterSignature');

    const user = newAccount().address;
    const signedFor = await build(system, { userId: user, userDefinedData: 'R0' });
    const other = userContextData({ destChainId: system.deployment.chainId, userId: user, userDefinedData: 'R0x' });
    await expectCallReverts(relay(system, relayer, signedFor.payload, other), 'InvalidAttesterSignature');

    const otherScope = await build(system, { scope: 12345n });
    await expectCallReverts(relay(system, relayer, otherScope.payload, otherScope.context), 'InvalidAttesterSignature');
  });

  it('InvalidOfac when OFAC is required (config 3) and the holder is not cleared; cleared holders pass', async () => {
    const sanctionedUser = newAccount().address;
    const sanctioned = await build(system, {
      userId: sanctionedUser,
      userDefinedData: 'R3',
      document: mockDocumentFor(sanctionedUser, { sanctioned: true }),
      disclosures: { ofac: true },
    });
    await expectCallReverts(relay(system, relayer, sanctioned.payload, sanctioned.context), 'InvalidOfac');

    // a passport must clear all three checks
    const partly = await build(system, { userDefinedData: 'R3', disclosures: { ofac: true }, edit: (o) => ({ ...o, ofac: [true, true, false] }) });
    await expectCallReverts(relay(system, relayer, partly.payload, partly.context), 'InvalidOfac');

    const clearedUser = newAccount().address;
    await relayAndMine(system, relayer, await build(system, { userId: clearedUser, userDefinedData: 'R3', disclosures: { ofac: true } }));
    expect(await agentIdOf(clearedUser)).toBeGreaterThan(0n);
  });

  it.each([
    [
      'EU id cards have no document-number OFAC check: cleared name checks pass config 3, uncleared ones do not',
      {
        documentType: 'eu-id-card',
        country: 'DEU',
        // the holder is on the list: the document's own disclosure is uncleared
        uncleared: (holder: Address): BuildOptions => ({ document: mockDocumentFor(holder, { documentType: 'eu-id-card', sanctioned: true }) }),
      },
    ],
    [
      'Aadhaar is gated by its two name checks only: cleared passes config 3, an uncleared name check does not',
      {
        documentType: 'aadhaar',
        country: 'IND',
        uncleared: (holder: Address): BuildOptions => ({
          document: mockDocumentFor(holder, { documentType: 'aadhaar' }),
          edit: (o) => ({ ...o, ofac: [true, true, false] }),
        }),
      },
    ],
  ] as const)('%s', async (_title, { documentType, country, uncleared }) => {
    const user = newAccount().address;
    const document = mockDocumentFor(user, { documentType, issuingState: country, nationality: country });
    const cleared = await build(system, { userId: user, userDefinedData: 'R3', document, disclosures: { ofac: true } });
    expect(cleared.output.ofac).toEqual([false, true, true]);
    await relayAndMine(system, relayer, cleared);
    expect(await agentIdOf(user)).toBeGreaterThan(0n);

    const other = newAccount().address;
    const refused = await build(system, { userId: other, userDefinedData: 'R3', disclosures: { ofac: true }, ...uncleared(other) });
    await expectCallReverts(relay(system, relayer, refused.payload, refused.context), 'InvalidOfac');
  });

  it('InvalidOlderThan when the holder is under the config threshold (config 1, 18+)', async () => {
    const now = await latestTimestamp(system);
    const child = newAccount().address;
    const tenYearsOld = `${new Date(Number(now) * 1000).getUTCFullYear() - 10}-01-01`;
    const submission = await build(system, {
      userId: child,
      userDefinedData: 'R1',
      document: mockDocumentFor(child, { dateOfBirth: tenYearsOld }),
      disclosures: { minimumAge: 18 },
    });
    expect(submission.output.olderThan).toBe(0n);
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'InvalidOlderThan');

    // an attested 17 is not enough either
    const seventeen = await build(system, { userDefinedData: 'R1', disclosures: { minimumAge: 18 }, edit: (o) => ({ ...o, olderThan: 17n }) });
    await expectCallReverts(relay(system, relayer, seventeen.payload, seventeen.context), 'InvalidOlderThan');
  });

  it('an adult passes config 1, and the delivered olderThan is the config threshold (18), as on Hub V2', async () => {
    const adult = newAccount().address;
    const submission = await build(system, {
      userId: adult,
      userDefinedData: 'R1',
      disclosures: { minimumAge: 18 },
      edit: (o) => ({ ...o, olderThan: 25n }),
    });
    await relayAndMine(system, relayer, submission);
    const agentId = await agentIdOf(adult);
    const credentials = await system.client.readContract({ ...registryRead(), functionName: 'getAgentCredentials', args: [agentId] });
    expect(credentials.olderThan).toBe(18n);
  });

  it('CrossChainIsNotSupportedYet when the destination chain is another chain (validly attested)', async () => {
    const submission = await build(system, { destChainId: 42220 });
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'CrossChainIsNotSupportedYet');
  });

  it('is the hub that calls back: onVerificationSuccess from anyone else reverts UnauthorizedCaller', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...registryRead(),
        functionName: 'onVerificationSuccess',
        args: [encodeAbiParameters([{ type: 'bytes32' }], [pad('0x01', { size: 32 })]), '0x5230'],
        account: relayer.account,
      }),
      'UnauthorizedCaller',
    );
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('hub.verify() called directly: the layout checks and a custom config', () => {
  let system: TestSystem;
  let caller: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    caller = await system.newWallet();
  });

  it('InputTooShort under 97 bytes of input', async () => {
    const submission = await build(system);
    const [header, context] = await hubArgs(system, submission, VERIFICATION_CONFIG_IDS[0]!);
    await expectCallReverts(callHub(system, caller, `0x${header.slice(2, 2 + 96 * 2)}`, context), 'InputTooShort');
  });

  it('UserContextDataTooShort under 96 bytes of context (configId || destChainId || userIdentifier)', async () => {
    const submission = await build(system);
    const [header, context] = await hubArgs(system, submission, VERIFICATION_CONFIG_IDS[0]!);
    await expectCallReverts(callHub(system, caller, header, `0x${context.slice(2, 2 + 95 * 2)}`), 'UserContextDataTooShort');
  });

  it('UnsupportedContractVersion for a header version other than 2', async () => {
    const submission = await build(system);
    const [header, context] = await hubArgs(system, submission, VERIFICATION_CONFIG_IDS[0]!);
    for (const version of [1, 3]) {
      const wrong = concat([numberToHex(version, { size: 1 }), `0x${header.slice(4)}`]);
      await expectCallReverts(callHub(system, caller, wrong, context), 'UnsupportedContractVersion', [version]);
    }
  });

  it('ConfigNotSet for a config id the hub does not know', async () => {
    const submission = await build(system);
    const [header, context] = await hubArgs(system, submission, sha256('0x1234'));
    await expectCallReverts(callHub(system, caller, header, context), 'ConfigNotSet');
  });

  it('InvalidForbiddenCountries when the disclosed packed list differs from a config with forbiddenCountriesEnabled', async () => {
    const config: VerificationConfigV2 = {
      olderThanEnabled: false,
      olderThan: 0n,
      forbiddenCountriesEnabled: true,
      forbiddenCountriesListPacked: [0x4b50524e5249n, 0n, 0n, 0n],
      ofacEnabled: [false, false, false],
    };
    await mined(
      system,
      await caller.writeContract({
        address: system.deployment.contracts.hub,
        abi: localIdentityHubAbi,
        functionName: 'setVerificationConfigV2',
        args: [config],
      }),
    );
    const configId = verificationConfigId(config);

    const mismatch = await build(system, { destChainId: 1 });
    expect(mismatch.output.forbiddenCountriesListPacked).toEqual([0n, 0n, 0n, 0n]);
    await expectCallReverts(callHub(system, caller, ...(await hubArgs(system, mismatch, configId))), 'InvalidForbiddenCountries');

    // with the matching list the disclosure checks pass and the hub stops at the next rule: the destination chain
    const matching = await build(system, {
      destChainId: 1,
      edit: (o) => ({ ...o, forbiddenCountriesListPacked: config.forbiddenCountriesListPacked }),
    });
    await expectCallReverts(callHub(system, caller, ...(await hubArgs(system, matching, configId))), 'CrossChainIsNotSupportedYet');
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('setAttester', () => {
  let system: TestSystem;
  let relayer: ChainWallet;
  let stranger: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    [relayer, stranger] = await Promise.all([system.newWallet(), system.newWallet()]);
  });

  const hub = () => ({ address: system.deployment.contracts.hub, abi: localIdentityHubAbi }) as const;

  it('the deployer owns the hub and the deployment attester is trusted', async () => {
    expect(await system.client.readContract({ ...hub(), functionName: 'owner' })).toBe(system.operator.account.address);
    expect(await system.client.readContract({ ...hub(), functionName: 'isTrustedAttester', args: [system.attester.address] })).toBe(true);
  });

  it('only the owner may set attesters (OwnableUnauthorizedAccount)', async () => {
    await expectCallReverts(
      system.client.simulateContract({
        ...hub(),
        account: stranger.account,
        functionName: 'setAttester',
        args: [stranger.account.address, true],
      }),
      'OwnableUnauthorizedAccount',
      [stranger.account.address],
    );
  });

  it('the owner trusts and distrusts attesters (AttesterSet); the hub follows that list', async () => {
    const attester = newAccount();
    const user = newAccount().address;
    const submission = await build(system, { userId: user, signer: attester });
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'InvalidAttesterSignature');

    const trust = await mined(system, await system.operator.writeContract({ ...hub(), functionName: 'setAttester', args: [attester.address, true] }));
    expect(parseEventLogs({ abi: localIdentityHubAbi, logs: trust.logs }).map((e) => [e.eventName, e.args])).toEqual([
      ['AttesterSet', { attester: attester.address, trusted: true }],
    ]);
    await relay(system, relayer, submission.payload, submission.context);

    await mined(system, await system.operator.writeContract({ ...hub(), functionName: 'setAttester', args: [attester.address, false] }));
    expect(await system.client.readContract({ ...hub(), functionName: 'isTrustedAttester', args: [attester.address] })).toBe(false);
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'InvalidAttesterSignature');
  });
});

// ------------------------------------------------------------------------------------------------------------

describe('on the Celo mainnet chain id (42220)', () => {
  let system: TestSystem;
  let relayer: ChainWallet;
  beforeAll(async () => {
    system = await deployTestSystem('mainnet');
    relayer = await system.newWallet();
  });

  it('runs on chain 42220 and the hub does not accept mock documents there', async () => {
    expect(system.deployment.chainId).toBe(42220);
    expect(
      await system.client.readContract({ address: system.deployment.contracts.hub, abi: localIdentityHubAbi, functionName: 'acceptsMockDocuments' }),
    ).toBe(false);
  });

  it('MockDocumentsNotAccepted for an attested mock document', async () => {
    const submission = await build(system, { mockDocument: true });
    await expectCallReverts(relay(system, relayer, submission.payload, submission.context), 'MockDocumentsNotAccepted');
  });

  it('a document attested as real is accepted (control)', async () => {
    const user = newAccount().address;
    const submission = await build(system, { userId: user, document: mockDocumentFor(user, { mock: false }) });
    const receipt = await relayAndMine(system, relayer, submission);
    const [verified] = parseEventLogs({ abi: localIdentityHubAbi, logs: receipt.logs, eventName: 'DisclosureVerified' });
    expect(verified?.args.mockDocument).toBe(false);
    expect(verified?.args.root).toBe(getAddress(system.deployment.contracts.registry));
  });
});
