// Our contracts implement the deployed Self Agent ID registry's interface from scratch. Every selector, event
// topic and error selector that onchain-facts lists (1.1, 1.3, 1.4, 1.5, 2, 3, 7.1, 9.1) is copied into the
// tables below as the document states it, and compared with what viem computes from our compiled ABIs.
// Whatever is missing must be named in DELIBERATE_DIFFERENCES, whatever we add in EXTENSIONS; both lists are
// checked to be exact, so neither can go stale. The ERC-8004 reference IdentityRegistry ABI is compared too.
import { type Abi, type AbiEvent, type AbiFunction, type Hex, keccak256, stringToHex, toEventSelector, toFunctionSelector } from 'viem';
import { formatAbiItem } from 'viem/utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentDemoVerifierAbi, agentRegistryAbi, humanProofProviderAbi, localIdentityHubAbi } from '../../src/contracts/artifacts/index.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { hasSharedFile, readSharedJson, unlessShared } from '../support/shared.js';

type Kind = 'function' | 'event' | 'error';

interface Expected {
  kind: Kind;
  /** Canonical signature, e.g. "register(string,(string,bytes)[])". */
  signature: string;
  /** As onchain-facts prints it: a 4-byte selector, a full topic0, or an abbreviated "0x7b1bc52c…3f1f". */
  selector: string;
}

const fn = (signature: string, selector: string): Expected => ({ kind: 'function', signature, selector });
const ev = (signature: string, selector: string): Expected => ({ kind: 'event', signature, selector });
const err = (signature: string, selector: string): Expected => ({ kind: 'error', signature, selector });

// ---------------------------------------------------------------- the deployed registry (onchain-facts 1.1-1.5)

const REGISTRY_TABLE: readonly Expected[] = [
  // 1.1
  fn('initialize(address,address)', '0x485cc955'),
  // 1.3 getters
  fn('configIds(uint256)', '0x58fa548b'),
  fn('agentNullifier(uint256)', '0xa253cb3a'),
  fn('agentProofProvider(uint256)', '0x2d93829d'),
  fn('agentHasHumanProof(uint256)', '0x2eec5ac2'),
  fn('agentRegisteredAt(uint256)', '0x877d507b'),
  fn('activeAgentCount(uint256)', '0x8e477093'),
  fn('agentKeyToAgentId(bytes32)', '0xda814ead'),
  fn('agentIdToAgentKey(uint256)', '0x25a7f5bb'),
  fn('approvedProviders(address)', '0x8139ef9a'),
  fn('selfProofProvider()', '0xf22e4593'),
  fn('agentGuardian(uint256)', '0xea4efb20'),
  fn('agentMetadata(uint256)', '0x47a95efb'),
  fn('agentNonces(address)', '0x26f90099'),
  fn('ed25519Nonce(bytes32)', '0xd25333a4'),
  fn('maxAgentsPerHuman()', '0xb0b1bb28'),
  fn('maxProofAge()', '0x6f5b6b20'),
  fn('requireHumanProof()', '0x4fdbce81'),
  fn('reputationRegistry()', '0xc8db44e3'),
  fn('validationRegistry()', '0x4c6b993a'),
  fn('proofExpiresAt(uint256)', '0xeb94281f'),
  fn('walletSetNonces(uint256)', '0xe7a94c14'),
  fn('agentConfigId(uint256)', '0xf9d7a80f'),
  // 1.3 admin
  fn('setRequireHumanProof(bool)', '0x9da7de3f'),
  fn('setSelfProofProvider(address)', '0x76cdac57'),
  fn('addProofProvider(address)', '0xd14c590f'),
  fn('removeProofProvider(address)', '0x0871bcd7'),
  fn('setMaxAgentsPerHuman(uint256)', '0x1059ec14'),
  fn('setMaxProofAge(uint256)', '0x1bddcb19'),
  fn('setReputationRegistry(address)', '0x3f0ce714'),
  fn('setValidationRegistry(address)', '0x3f252e00'),
  // 1.3 Self root
  fn('scope()', '0x6e62d0a8'),
  fn('verifySelfProof(bytes,bytes)', '0xd161802b'),
  fn('onVerificationSuccess(bytes,bytes)', '0x8d2d8d6a'),
  fn('getConfigId(bytes32,bytes32,bytes)', '0xada1b319'),
  // 1.3 ERC-8004
  fn('register()', '0x1aa3a008'),
  fn('register(string)', '0xf2c298be'),
  fn('register(string,string[],bytes[])', '0x5491e75d'),
  fn('register(string,(string,bytes)[])', '0x8ea42286'),
  fn('setAgentURI(uint256,string)', '0x0af28bd3'),
  fn('getMetadata(uint256,string)', '0xcb4799f2'),
  fn('setMetadata(uint256,string,bytes)', '0x466648da'),
  fn('setAgentWallet(uint256,address,uint256,bytes)', '0x2d1ef5ae'),
  fn('getAgentWallet(uint256)', '0x00339509'),
  fn('unsetAgentWallet(uint256)', '0x3fddcf19'),
  fn('domainSeparator()', '0xf698da25'),
  // 1.3 proof of human
  fn('registerWithHumanProof(string,address,bytes,bytes)', '0xab8260bf'),
  fn('revokeHumanProof(uint256,address,bytes,bytes)', '0x692b84fe'),
  fn('hasHumanProof(uint256)', '0x11dde0b3'),
  fn('isProofFresh(uint256)', '0x7d08e2f3'),
  fn('getHumanNullifier(uint256)', '0x5b0ad7ca'),
  fn('getProofProvider(uint256)', '0x4a9a1a28'),
  fn('getAgentCountForHuman(uint256)', '0xc85a34fa'),
  fn('getAgentsForNullifier(uint256)', '0x77aba3be'),
  fn('getAgentsForNullifier(uint256,uint256,uint256)', '0x540092db'),
  fn('sameHuman(uint256,uint256)', '0x856c91a7'),
  fn('isApprovedProvider(address)', '0x3e1cc60e'),
  // 1.3 agent views
  fn('isVerifiedAgent(bytes32)', '0x29f0e31e'),
  fn('getAgentId(bytes32)', '0xbc936c52'),
  fn('getAgentMetadata(uint256)', '0x59295330'),
  fn('getAgentCredentials(uint256)', '0x364c7e61'),
  fn('tokenURI(uint256)', '0xc87b56dd'),
  fn('isAuthorizedOrOwner(address,uint256)', '0xd95e72be'),
  // 1.3 management
  fn('guardianRevoke(uint256)', '0x3652515f'),
  fn('selfDeregister(uint256)', '0x0ef94f4a'),
  fn('updateAgentMetadata(uint256,string)', '0xed72e999'),
  // 1.4 events
  ev('Registered(uint256,string,address)', '0xca52e62c367d81bb2e328eb795f7c7ba24afb478408a26c0e201d155c449bc4a'),
  ev('URIUpdated(uint256,string,address)', '0x3a2c7fffc2cba7582c690e3b82c453ea02a308326a98a3ad7576c606336409fb'),
  ev('MetadataSet(uint256,string,string,bytes)', '0x2c149ed548c6d2993cd73efe187df6eccabe4538091b33adbd25fafdb8a1468b'),
  ev('AgentRegisteredWithHumanProof(uint256,address,uint256,uint8)', '0xdf7b0956d5c21d364439b28cd7cf9d26fd7cc625cca155e68d886d3e238d067c'),
  ev('HumanProofRevoked(uint256,uint256)', '0xbd79986d53d9a93f91cae4c9e28b0f394930b7212a97c8704f3de0d764cc201f'),
  ev('ProofProviderAdded(address,string)', '0x78667775f1dfdf00ce138ec0be1e5ea12405450450f0e25847d30c36a3b932c2'),
  ev('ProofProviderRemoved(address)', '0x322144c6c195f07c76389aaa346afe9cffacaf769212dbbab286adf892d4591a'),
  ev('MaxProofAgeUpdated(uint256)', '0xce9a5b8bd0e9e367554b3ef4ccce5888d4ebd38ddf7a28cef1206a8203549385'),
  ev('MaxAgentsPerHumanUpdated(uint256)', '0x181db54da4991f4ae0b80e1e711af2a30b0cc373579cea272414d772f61c9123'),
  ev('HumanProofRefreshed(uint256,uint256,uint256,bytes32)', '0xd2adbcc377cfb318821c6589921c19e7439472f341f991a31b8d07b64bcc0c94'),
  ev('NullifierIdentified(uint256,uint256)', '0x7af06e12f9a86bd1405db20bc54841afbe47da50bc59a8e60744360538c88e15'),
  ev('SelfAgentRegistryInitialized(address,address)', '0xd60c81d030b5e4d3b93569d3de6dd0bab3fb3d13911940d02ad86d10c8e8276e'),
  ev('GuardianSet(uint256,address)', '0x65b71688ffda6ebbb7a73faa75353a6a2d6b7c6fc15c0571374dea43e6221417'),
  ev('AgentMetadataUpdated(uint256)', '0x0c823aaa06f5806153ec262fd378cf414bdc8d21ff5e68e03dc88fc766ff0b23'),
  ev('AgentCredentialsStored(uint256)', '0xe6e676c5c4eadb6602e0dc90c1c6773ada71afd0b839989cecad9fccfff1670e'),
  ev('ReputationRegistryUpdated(address)', '0xae9f27c36d3aa52eba3f1db0e15d93fd0981a7ba056f20bed382a145202a301d'),
  ev('ValidationRegistryUpdated(address)', '0xbab43ba1e86197b6ab5c581072dd7cad0f8812449bfb3f89cafb454b6e7f2f24'),
  ev('Transfer(address,address,uint256)', '0xddf252ad…b3ef'),
  // 1.5 registry errors
  err('TransferNotAllowed()', '0x8cd22d19'),
  err('ProofRequired()', '0xf570d268'),
  err('AgentAlreadyRegistered(bytes32)', '0x7017a8c6'),
  err('AgentNotRegistered(bytes32)', '0x43df2693'),
  err('NotAgentOwner(uint256,uint256)', '0xd69b4ddd'),
  err('InvalidAction(uint8)', '0x2f2938ce'),
  err('InvalidUserData()', '0x12433067'),
  err('ProviderNotApproved(address)', '0xcd759eac'),
  err('ProviderAlreadyApproved(address)', '0x1b5d5fc6'),
  err('AgentHasNoHumanProof(uint256)', '0x546a9a5e'),
  err('InvalidAgentSignature()', '0x311d795a'),
  err('NotGuardian(uint256)', '0x86b54be3'),
  err('NotNftOwner(uint256)', '0xb832bf93'),
  err('NoGuardianSet(uint256)', '0x1ef3b3e3'),
  err('TooManyAgentsForHuman(uint256,uint256)', '0x55b7dcd1'),
  err('InvalidConfigIndex(uint8)', '0x3574b28b'),
  err('VerificationFailed()', '0x439cc0cd'),
  err('ProviderDataTooShort()', '0xb1faf471'),
  err('NotSameHuman()', '0x118c9036'),
  err('ReservedMetadataKey()', '0xd3356558'),
  err('DeadlineExpired()', '0x1ab7da6b'),
  err('InvalidWalletSignature()', '0xf42e6ed0'),
  err('InvalidMaxProofAge()', '0x5fd64de9'),
  err('ArrayLengthMismatch(uint256,uint256)', '0xfa5dbe08'),
  // 1.5 interface errors
  err('ConfigMismatch(bytes32,bytes32)', '0xd3e1db54'),
  err('RefreshNotSupported(uint256)', '0xf13e587f'),
  // 1.5 inherited errors
  err('UnauthorizedCaller()', '0x5c427cd9'),
  err('InvalidDataFormat()', '0xa512e2ff'),
  err('AccessControlUnauthorizedAccount(address,bytes32)', '0xe2517d3f'),
  err('ERC721NonexistentToken(uint256)', '0x7e273289'),
  err('InvalidInitialization()', '0xf92ee8a9'),
  err('ECDSAInvalidSignature()', '0xf645eedf'),
  err('ECDSAInvalidSignatureLength(uint256)', '0xfce698f7'),
  err('ECDSAInvalidSignatureS(bytes32)', '0xd78bce0c'),
];

/** Deployed-registry items our AgentRegistry deliberately lacks. Checked to be exactly the missing ones. */
const DELIBERATE_DIFFERENCES: readonly { signature: string; reason: string }[] = [
  { signature: 'initialize(address,address)', reason: 'no UUPS proxy: constructor(hub, owner) does the initialization' },
  { signature: 'InvalidInitialization()', reason: 'no Initializable base, hence no double-initialization error' },
  { signature: 'SelfAgentRegistryInitialized(address,address)', reason: 'no initialize(), so no initialization event' },
  { signature: 'reputationRegistry()', reason: 'no reputation-registry linkage' },
  { signature: 'setReputationRegistry(address)', reason: 'no reputation-registry linkage' },
  { signature: 'ReputationRegistryUpdated(address)', reason: 'no reputation-registry linkage' },
  { signature: 'validationRegistry()', reason: 'no validation-registry linkage' },
  { signature: 'setValidationRegistry(address)', reason: 'no validation-registry linkage' },
  { signature: 'ValidationRegistryUpdated(address)', reason: 'no validation-registry linkage' },
];

/**
 * Our registry's additions beyond the deployed interface (ignoring the OpenZeppelin ERC-721, AccessControl and
 * ERC-5267 surface, and the constants onchain-facts 1.1 describes without a selector). Checked to be exact.
 */
const EXTENSIONS: readonly { signature: string; reason: string }[] = [
  { signature: 'hubV2()', reason: 'the trusted hub, read by the identity app and the deploy script' },
  { signature: 'ed25519Verifier()', reason: 'Ed25519 checks are delegated to a pluggable verifier contract' },
  { signature: 'setEd25519Verifier(address)', reason: 'SECURITY_ROLE sets the Ed25519 verifier' },
  { signature: 'Ed25519VerifierUpdated(address)', reason: 'emitted by setEd25519Verifier' },
  { signature: 'Ed25519VerifierNotConfigured()', reason: '"E" registration while no Ed25519 verifier is set' },
  { signature: 'ed25519KeyForAddress(address)', reason: 'lets D/X find an Ed25519 agent by its derived address' },
  { signature: 'SelfProofProviderNotSet()', reason: 'hub registration before setSelfProofProvider (deployed: bare revert)' },
];

/** Constants onchain-facts 1.1 describes (public in the deployed registry) but gives no selector for. */
const DOCUMENTED_CONSTANTS = ['SECURITY_ROLE()', 'OPERATIONS_ROLE()', 'AGENT_WALLET_SET_TYPEHASH()', 'NUM_CONFIGS()'];

/** OpenZeppelin ERC-721 / AccessControl / EIP-712 (ERC-5267) / ERC-165 items, present in both registries. */
const OPENZEPPELIN_SURFACE = [
  'approve(address,uint256)',
  'balanceOf(address)',
  'getApproved(uint256)',
  'isApprovedForAll(address,address)',
  'name()',
  'ownerOf(uint256)',
  'safeTransferFrom(address,address,uint256)',
  'safeTransferFrom(address,address,uint256,bytes)',
  'setApprovalForAll(address,bool)',
  'supportsInterface(bytes4)',
  'symbol()',
  'transferFrom(address,address,uint256)',
  'Approval(address,address,uint256)',
  'ApprovalForAll(address,address,bool)',
  'ERC721IncorrectOwner(address,uint256,address)',
  'ERC721InsufficientApproval(address,uint256)',
  'ERC721InvalidApprover(address)',
  'ERC721InvalidOperator(address)',
  'ERC721InvalidOwner(address)',
  'ERC721InvalidReceiver(address)',
  'ERC721InvalidSender(address)',
  'DEFAULT_ADMIN_ROLE()',
  'getRoleAdmin(bytes32)',
  'grantRole(bytes32,address)',
  'hasRole(bytes32,address)',
  'renounceRole(bytes32,address)',
  'revokeRole(bytes32,address)',
  'RoleAdminChanged(bytes32,bytes32,bytes32)',
  'RoleGranted(bytes32,address,address)',
  'RoleRevoked(bytes32,address,address)',
  'AccessControlBadConfirmation()',
  'eip712Domain()',
  'EIP712DomainChanged()',
  'InvalidShortString()',
  'StringTooLong(string)',
];

// ---------------------------------------------------------------- provider (2, 3), hub (7.1), demo verifier (9.1)

const PROVIDER_TABLE: readonly Expected[] = [
  fn('verifyHumanProof(bytes,bytes)', '0x242c6a21'),
  fn('providerName()', '0x00dad7d4'),
  fn('verificationStrength()', '0x9a32ec2a'),
  fn('hubV2()', '0x79742f66'),
  fn('scope()', '0x6e62d0a8'),
  err('DirectVerificationNotSupported()', '0xaafbd458'),
];

const HUB_TABLE: readonly Expected[] = [
  fn('verify(bytes,bytes)', '0xf7e83aee'),
  fn('setVerificationConfigV2((bool,uint256,bool,uint256[4],bool[3]))', '0x09ddb091'),
  fn('verificationConfigV2Exists(bytes32)', '0x2e9c365e'),
];

const DEMO_VERIFIER_TABLE: readonly Expected[] = [
  fn('hasVerified(bytes32)', '0xca149b65'),
  fn('verificationCount(bytes32)', '0x7cb44a08'),
  fn('nonces(bytes32)', '0x9e317f12'),
  fn('totalVerifications()', '0xac90c140'),
  fn('registry()', '0x7b103999'),
  fn('metaVerifyAgent(bytes32,uint256,uint256,bytes)', '0xa47ec6b2'),
  fn('checkAccess(bytes32)', '0x36c98677'),
  fn('DOMAIN_SEPARATOR()', '0x3644e515'),
  ev('AgentChainVerified(bytes32,uint256)', '0x7b1bc52c…3f1f'),
  ev('VerificationCompleted(bytes32,uint256,uint256)', '0x8a5a52be…68e1'),
  ev('GasSponsored(address,bytes32)', '0xb2faf1d2…03bb'),
  err('NotVerifiedAgent()', '0x66a9ef23'),
  err('MetaTxExpired()', '0x4bbc4a80'),
  err('MetaTxInvalidNonce()', '0xbd16878b'),
  err('MetaTxInvalidSignature()', '0x3bbb8493'),
];

// ---------------------------------------------------------------- helpers

interface Item {
  kind: Kind;
  signature: string;
  /** 4-byte selector for functions and errors, topic0 for events. */
  selector: Hex;
}

function itemsOf(abi: Abi): Map<string, Item> {
  const items = new Map<string, Item>();
  for (const entry of abi) {
    if (entry.type !== 'function' && entry.type !== 'event' && entry.type !== 'error') continue;
    const signature = formatAbiItem(entry);
    const selector = entry.type === 'event' ? toEventSelector(signature) : toFunctionSelector(signature);
    items.set(signature, { kind: entry.type, signature, selector });
  }
  return items;
}

/** Exact match, or prefix…suffix for the abbreviated topics the document prints. */
function selectorMatches(actual: Hex, documented: string): boolean {
  const [head, tail] = documented.toLowerCase().split('…');
  if (tail === undefined) return actual.toLowerCase() === head;
  return actual.toLowerCase().startsWith(head ?? '') && actual.toLowerCase().endsWith(tail);
}

interface Comparison {
  missing: string[];
  mismatched: string[];
}

function compare(abi: Abi, table: readonly Expected[]): Comparison {
  const ours = itemsOf(abi);
  const missing: string[] = [];
  const mismatched: string[] = [];
  for (const expected of table) {
    const item = ours.get(expected.signature);
    if (!item) missing.push(expected.signature);
    else if (item.kind !== expected.kind || !selectorMatches(item.selector, expected.selector)) {
      mismatched.push(`${expected.signature}: ${item.kind} ${item.selector}, documented ${expected.kind} ${expected.selector}`);
    }
  }
  return { missing: missing.sort(), mismatched };
}

const sorted = (list: readonly { signature: string }[]): string[] => list.map((d) => d.signature).sort();

/** XOR of the 4-byte selectors: an ERC-165 interface id. */
function interfaceId(signatures: readonly string[]): Hex {
  const id = signatures.reduce((acc, s) => acc ^ Number.parseInt(toFunctionSelector(s).slice(2), 16), 0) >>> 0;
  return `0x${id.toString(16).padStart(8, '0')}`;
}

// ---------------------------------------------------------------- tests

describe('selectors documented for the deployed contracts', () => {
  it('the documented tables hold each signature once, and each documented selector is keccak of its signature', () => {
    for (const table of [REGISTRY_TABLE, PROVIDER_TABLE, HUB_TABLE, DEMO_VERIFIER_TABLE]) {
      const signatures = table.map((e) => e.signature);
      expect(new Set(signatures).size).toBe(signatures.length);
      for (const e of table) {
        const computed = e.kind === 'event' ? toEventSelector(e.signature) : toFunctionSelector(e.signature);
        expect(selectorMatches(computed, e.selector), `${e.signature} ${e.selector} vs ${computed}`).toBe(true);
      }
    }
  });

  it('AgentRegistry has every documented registry selector except exactly the DELIBERATE_DIFFERENCES', () => {
    const { missing, mismatched } = compare(agentRegistryAbi, REGISTRY_TABLE);
    expect(mismatched).toEqual([]);
    expect(missing).toEqual(sorted(DELIBERATE_DIFFERENCES));
    for (const d of DELIBERATE_DIFFERENCES) expect(d.reason.length).toBeGreaterThan(10);
  });

  it("AgentRegistry's additions beyond the deployed interface are exactly the EXTENSIONS", () => {
    const documented = new Set([...REGISTRY_TABLE.map((e) => e.signature), ...DOCUMENTED_CONSTANTS, ...OPENZEPPELIN_SURFACE]);
    const extra = [...itemsOf(agentRegistryAbi).keys()].filter((s) => !documented.has(s)).sort();
    expect(extra).toEqual(sorted(EXTENSIONS));
    // and the standard surface we skipped really is there (so the skip list cannot hide a removal)
    const ours = itemsOf(agentRegistryAbi);
    expect([...DOCUMENTED_CONSTANTS, ...OPENZEPPELIN_SURFACE].filter((s) => !ours.has(s))).toEqual([]);
  });

  it.each([
    ['HumanProofProvider has every selector of IHumanProofProvider / ISelfHumanProofProvider (sections 2, 3)', humanProofProviderAbi, PROVIDER_TABLE],
    ["LocalIdentityHub has Hub V2's verify / config selectors (section 7.1)", localIdentityHubAbi, HUB_TABLE],
    ['AgentDemoVerifier has every selector, topic and error of section 9.1', agentDemoVerifierAbi, DEMO_VERIFIER_TABLE],
  ] as const)('%s', (_title, abi, table) => {
    expect(compare(abi, table)).toEqual({ missing: [], mismatched: [] });
  });

  it('the event parameters indexed in the documented registry events are indexed in ours', () => {
    // onchain-facts 1.4 marks the indexed parameters with *; topic0 alone does not show them.
    const documentedIndexed: Record<string, readonly boolean[]> = {
      Registered: [true, false, true],
      URIUpdated: [true, false, true],
      MetadataSet: [true, true, false, false],
      AgentRegisteredWithHumanProof: [true, true, false, false],
      HumanProofRevoked: [true, false],
      ProofProviderAdded: [true, false],
      ProofProviderRemoved: [true],
      MaxProofAgeUpdated: [false],
      MaxAgentsPerHumanUpdated: [false],
      HumanProofRefreshed: [true, false, false, false],
      NullifierIdentified: [true, false],
      GuardianSet: [true, true],
      AgentMetadataUpdated: [true],
      AgentCredentialsStored: [true],
      Transfer: [true, true, true],
    };
    const events = agentRegistryAbi.filter((e): e is Extract<(typeof agentRegistryAbi)[number], { type: 'event' }> => e.type === 'event');
    for (const [name, indexed] of Object.entries(documentedIndexed)) {
      const event = events.find((e) => e.name === name);
      expect(event, name).toBeDefined();
      expect(
        event?.inputs.map((i) => i.indexed === true),
        name,
      ).toEqual(indexed);
    }
    // and HumanProofRefreshed's data order is (nullifier, newExpiresAt, configId), not the TS SDK's swapped one
    expect(events.find((e) => e.name === 'HumanProofRefreshed')?.inputs.map((i) => i.name)).toEqual([
      'agentId',
      'nullifier',
      'newExpiresAt',
      'configId',
    ]);
  });

  it('the ERC-165 ids of IERC8004 and IERC8004ProofOfHuman are the XOR of their documented members', () => {
    expect(
      interfaceId([
        'register()',
        'register(string)',
        'register(string,string[],bytes[])',
        'setAgentURI(uint256,string)',
        'getMetadata(uint256,string)',
        'setMetadata(uint256,string,bytes)',
        'setAgentWallet(uint256,address,uint256,bytes)',
        'getAgentWallet(uint256)',
        'unsetAgentWallet(uint256)',
      ]),
    ).toBe('0x29d32aae');
    expect(
      interfaceId([
        'registerWithHumanProof(string,address,bytes,bytes)',
        'revokeHumanProof(uint256,address,bytes,bytes)',
        'hasHumanProof(uint256)',
        'proofExpiresAt(uint256)',
        'isProofFresh(uint256)',
        'getHumanNullifier(uint256)',
        'getProofProvider(uint256)',
        'getAgentCountForHuman(uint256)',
        'getAgentsForNullifier(uint256)',
        'getAgentsForNullifier(uint256,uint256,uint256)',
        'sameHuman(uint256,uint256)',
        'isApprovedProvider(address)',
      ]),
    ).toBe('0x04f951ca');
  });
});

// ---------------------------------------------------------------- ERC-8004 reference IdentityRegistry

const REFERENCE_ABI_FILE = 'data/erc8004/IdentityRegistry.json';

/**
 * Functions and events of the ERC-8004 reference IdentityRegistry that our registry does not have, each with
 * the reason. Checked to be exactly the reference items missing from our ABI.
 */
const ERC8004_REFERENCE_DIFFERENCES: readonly { signature: string; reason: string }[] = [
  { signature: 'getVersion()', reason: 'reference-only; the deployed registry has no getVersion' },
  { signature: 'initialize()', reason: "the reference's proxy initializer; deployed: initialize(address,address); ours: constructor" },
  { signature: 'owner()', reason: 'reference is Ownable; deployed and ours use AccessControl roles' },
  { signature: 'renounceOwnership()', reason: 'reference is Ownable; deployed and ours use AccessControl roles' },
  { signature: 'transferOwnership(address)', reason: 'reference is Ownable; deployed and ours use AccessControl roles' },
  { signature: 'OwnershipTransferred(address,address)', reason: 'reference is Ownable; deployed and ours use AccessControl roles' },
  { signature: 'MetadataUpdate(uint256)', reason: 'reference is ERC-4906 (URIStorage); deployed and ours emit URIUpdated only' },
  { signature: 'BatchMetadataUpdate(uint256,uint256)', reason: 'reference is ERC-4906 (URIStorage); deployed and ours do not emit it' },
  { signature: 'UPGRADE_INTERFACE_VERSION()', reason: 'UUPS: the deployed registry has it; ours is not upgradeable' },
  { signature: 'proxiableUUID()', reason: 'UUPS: the deployed registry has it; ours is not upgradeable' },
  { signature: 'upgradeToAndCall(address,bytes)', reason: 'UUPS: the deployed registry has it; ours is not upgradeable' },
  { signature: 'Upgraded(address)', reason: 'ERC-1967: the deployed proxy emits it; ours is not upgradeable' },
  { signature: 'Initialized(uint64)', reason: 'Initializable: the deployed proxy emits it; ours has a constructor' },
];

// Skipped only where the project is cloned without shared/ beside it (see test/support/shared.ts).
describe.skipIf(!hasSharedFile(REFERENCE_ABI_FILE))(
  unlessShared(REFERENCE_ABI_FILE, 'ERC-8004 reference IdentityRegistry (shared/data/erc8004/IdentityRegistry.json)'),
  () => {
    let referenceAbi: Abi;
    beforeAll(() => {
      referenceAbi = readSharedJson<Abi>(REFERENCE_ABI_FILE);
    });
    const ours = agentRegistryAbi as Abi;
    const fnsAndEvents = (abi: Abi): (AbiFunction | AbiEvent)[] =>
      abi.filter((e): e is AbiFunction | AbiEvent => e.type === 'function' || e.type === 'event');

    it('every reference function and event we have matches it: selector, outputs, mutability, indexed flags', () => {
      const byKey = new Map(fnsAndEvents(ours).map((e) => [`${e.type} ${formatAbiItem(e)}`, e]));
      const matched: string[] = [];
      for (const ref of fnsAndEvents(referenceAbi)) {
        const signature = formatAbiItem(ref);
        const mine = byKey.get(`${ref.type} ${signature}`);
        if (!mine) continue;
        matched.push(signature);
        if (ref.type === 'function' && mine.type === 'function') {
          expect(toFunctionSelector(formatAbiItem(mine))).toBe(toFunctionSelector(signature));
          expect(
            mine.outputs.map((o) => o.type),
            signature,
          ).toEqual(ref.outputs.map((o) => o.type));
          expect(mine.stateMutability, signature).toBe(ref.stateMutability);
        } else if (ref.type === 'event' && mine.type === 'event') {
          expect(toEventSelector(formatAbiItem(mine))).toBe(toEventSelector(signature));
          expect(
            mine.inputs.map((i) => i.indexed === true),
            signature,
          ).toEqual(ref.inputs.map((i) => i.indexed === true));
        }
      }
      // the ERC-8004 core is among them (guards against comparing with an empty or unrelated file)
      expect(matched).toEqual(
        expect.arrayContaining([
          'register()',
          'register(string)',
          'register(string,(string,bytes)[])',
          'setAgentURI(uint256,string)',
          'getMetadata(uint256,string)',
          'setMetadata(uint256,string,bytes)',
          'setAgentWallet(uint256,address,uint256,bytes)',
          'getAgentWallet(uint256)',
          'unsetAgentWallet(uint256)',
          'tokenURI(uint256)',
          'eip712Domain()',
          'Registered(uint256,string,address)',
          'URIUpdated(uint256,string,address)',
          'MetadataSet(uint256,string,string,bytes)',
          'Transfer(address,address,uint256)',
        ]),
      );
    });

    it('the reference functions and events we lack are exactly ERC8004_REFERENCE_DIFFERENCES', () => {
      const mine = new Set(fnsAndEvents(ours).map((e) => formatAbiItem(e)));
      const missing = fnsAndEvents(referenceAbi)
        .map((e) => formatAbiItem(e))
        .filter((s) => !mine.has(s))
        .sort();
      expect(missing).toEqual(sorted(ERC8004_REFERENCE_DIFFERENCES));
    });

    it('none of the reference differences is something the deployed registry documents with a selector', () => {
      // i.e. every item the deployed registry has in common with the reference is matched above
      const deployed = new Set(REGISTRY_TABLE.map((e) => e.signature));
      expect(ERC8004_REFERENCE_DIFFERENCES.filter((d) => deployed.has(d.signature))).toEqual([]);
    });
  },
);

// ---------------------------------------------------------------- on a deployed system

describe('deployed AgentRegistry: ERC-165 and the documented constants', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await deployTestSystem('testnet');
  });

  const supports = (id: Hex): Promise<boolean> =>
    system.client.readContract({
      address: system.deployment.contracts.registry,
      abi: agentRegistryAbi,
      functionName: 'supportsInterface',
      args: [id],
    });

  it.each([
    ['IERC8004', '0x29d32aae'],
    ['IERC8004ProofOfHuman', '0x04f951ca'],
    ['ERC-721', '0x80ac58cd'],
    ['ERC-721 Metadata', '0x5b5e139f'],
    ['ERC-165', '0x01ffc9a7'],
    ['IAccessControl', '0x7965db0b'],
  ] as const)('supportsInterface(%s %s) is true', async (_name, id) => {
    expect(await supports(id)).toBe(true);
  });

  it.each(['0xdeadbeef', '0xffffffff', '0x00000000'] as const)('supportsInterface(%s) is false', async (id) => {
    expect(await supports(id)).toBe(false);
  });

  it('role ids, the AgentWalletSet typehash and NUM_CONFIGS are the documented values (section 1.1)', async () => {
    const read = <F extends 'SECURITY_ROLE' | 'OPERATIONS_ROLE' | 'AGENT_WALLET_SET_TYPEHASH' | 'NUM_CONFIGS'>(functionName: F) =>
      system.client.readContract({ address: system.deployment.contracts.registry, abi: agentRegistryAbi, functionName });
    expect(await read('SECURITY_ROLE')).toBe('0x4698baa05b306e3e5e3fa66d29891e203a1418ef5bee962e2c9b109f129e8920');
    expect(await read('OPERATIONS_ROLE')).toBe('0xe3723f41c074e25ac45636a7cd631386f2e15f8583ade05d0b710b41251f5c7b');
    expect(await read('AGENT_WALLET_SET_TYPEHASH')).toBe('0xe981a12639820f175d1628827b756cbe9e8b0844ae14f7827243fa49ac2f8f6e');
    expect(await read('AGENT_WALLET_SET_TYPEHASH')).toBe(
      keccak256(stringToHex('AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 nonce,uint256 deadline)')),
    );
    expect(await read('NUM_CONFIGS')).toBe(6);
  });
});
