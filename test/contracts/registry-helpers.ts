// Shared helpers of the registry action tests (test/contracts/registry-*.test.ts): typed registry handles,
// decoded registry events of a transaction, revert expectations and a proof submission whose disclosure can be
// edited before the attester signs it (to feed the registry outputs the identity app never produces).
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  getContract,
  hexToBytes,
  isAddressEqual,
  parseEventLogs,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { expect } from 'vitest';
import { agentRegistryAbi, localIdentityHubAbi } from '../../src/chain/artifacts/index.js';
import { createChainWallet, type ChainWallet } from '../../src/chain/clients.js';
import { fund } from '../../src/chain/embedded.js';
import { ed25519ChallengeHash } from '../../src/core/challenge.js';
import type { ConfigIndex } from '../../src/core/disclosures.js';
import { ed25519ExtKpub, type ExtKpub } from '../../src/core/ed25519-key.js';
import { linkedRegistrationData } from '../../src/core/registration-data.js';
import { ed25519RegisterUserData } from '../../src/core/user-data.js';
import {
  attestDisclosure,
  attestationIdOf,
  buildDisclosureOutput,
  decodeRevert,
  documentNullifier,
  mockDocumentFor,
  proofPayload,
  userContextData,
  type GenericDiscloseOutputV2,
  type MockDocument,
  type ProveResult,
  type RevertInfo,
} from '../../src/identity-app/index.js';
import { newAccount, type ProveArgs } from '../support/agents.js';
import { LOCAL, type TestSystem } from '../support/chain.js';

export const DAY = 86_400n;
export const YEAR = 365n * DAY;

/** Read-only typed handle on the system's registry. */
export const registryOf = (system: TestSystem) =>
  getContract({ address: system.deployment.contracts.registry, abi: agentRegistryAbi, client: system.client });

/** The registry as `wallet` writes to it. */
export const registryAs = (system: TestSystem, wallet: ChainWallet) =>
  getContract({
    address: system.deployment.contracts.registry,
    abi: agentRegistryAbi,
    client: { public: system.client, wallet },
  });

/** A funded wallet whose local account can also be handed to the agent builders (which sign with it). */
export async function newLocalWallet(system: TestSystem): Promise<{ account: LocalAccount; wallet: ChainWallet }> {
  const account = newAccount();
  await fund(system.client, account.address);
  return { account, wallet: createChainWallet(system.network, account, { rpcUrl: system.rpcUrl, ...LOCAL }) };
}

/** Mines a transaction and fails the test unless it succeeded. */
export async function mined(system: TestSystem, hash: Promise<Hex> | Hex) {
  const receipt = await system.client.waitForTransactionReceipt({ hash: await hash });
  expect(receipt.status).toBe('success');
  return receipt;
}

/** The operator (OPERATIONS_ROLE) sets how many agents one human may hold. */
export async function setMaxAgentsPerHuman(system: TestSystem, max: bigint): Promise<void> {
  await mined(system, registryAs(system, system.operator).write.setMaxAgentsPerHuman([max]));
}

export async function setMaxProofAge(system: TestSystem, maxAge: bigint): Promise<void> {
  await mined(system, registryAs(system, system.operator).write.setMaxProofAge([maxAge]));
}

/** The registry's events of one transaction, in log order (the hub's own events are left out). */
export async function registryEvents(system: TestSystem, txHash: Hex) {
  const receipt = await system.client.getTransactionReceipt({ hash: txHash });
  const registry = system.deployment.contracts.registry;
  const logs = receipt.logs.filter((log) => isAddressEqual(log.address, registry));
  const events = parseEventLogs({ abi: agentRegistryAbi, logs, strict: true });
  expect(events.length, 'every registry log decodes with the registry ABI').toBe(logs.length);
  return events;
}

const shown = (info: RevertInfo) => ({ name: info.name, args: [...info.args] });

/** The proof was refused with exactly this custom error. */
export function expectReverted(result: ProveResult, name: string, args: readonly unknown[] = []): void {
  expect(result.status === 'reverted' ? shown(result.error) : 'submitted').toEqual({ name, args: [...args] });
}

/** The call (a viem simulate/read promise) reverts with exactly this custom error. */
export async function expectCallReverts(call: Promise<unknown>, name: string, args: readonly unknown[] = []): Promise<void> {
  const outcome = await call.then(
    () => 'no revert',
    (error: unknown) => shown(decodeRevert(error)),
  );
  expect(outcome).toEqual({ name, args: [...args] });
}

export async function scopeOf(system: TestSystem): Promise<bigint> {
  return registryOf(system).read.scope();
}

/** The nullifier the hub reports for a document (default: the mock document the identity app uses for userId). */
export async function nullifierOf(system: TestSystem, document: MockDocument | Address): Promise<bigint> {
  const doc = typeof document === 'string' ? mockDocumentFor(document) : document;
  return documentNullifier(doc, await scopeOf(system));
}

export async function latestTimestamp(system: TestSystem): Promise<bigint> {
  return (await system.client.getBlock()).timestamp;
}

export async function blockTimestamp(system: TestSystem, blockNumber: bigint): Promise<bigint> {
  return (await system.client.getBlock({ blockNumber })).timestamp;
}

/** YYYY-MM-DD (UTC) of a unix time. */
export const isoDate = (unixSeconds: bigint): string => new Date(Number(unixSeconds) * 1000).toISOString().slice(0, 10);

/** UTC midnight of a YYYY-MM-DD date, in unix seconds. */
export const utcMidnight = (iso: string): bigint => BigInt(Date.parse(`${iso}T00:00:00Z`) / 1000);

/** K userDefinedData signed by `agent` for `human` with the agent's current nonce. */
export async function linkedData(
  system: TestSystem,
  agent: LocalAccount,
  human: Address,
  configIndex: ConfigIndex = 0,
): Promise<string> {
  return linkedRegistrationData(agent, human, {
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce: await registryOf(system).read.agentNonces([agent.address]),
    configIndex,
  });
}

/** A real Ed25519 key pair (node:crypto) with its raw 32-byte public key. */
export interface Ed25519Agent {
  privateKey: KeyObject;
  pubkey: Hex;
  extKpub: ExtKpub;
}

export function newEd25519Agent(): Ed25519Agent {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const raw = Buffer.from(jwk.x ?? '', 'base64url');
  const pubkey = `0x${raw.toString('hex')}` as Hex;
  return { privateKey, pubkey, extKpub: ed25519ExtKpub(pubkey) };
}

/** E userDefinedData: the key signs the registration challenge for `human` with its current nonce. */
export async function ed25519Data(
  system: TestSystem,
  key: Ed25519Agent,
  human: Address,
  options: { configIndex?: ConfigIndex; guardian?: Address | null; extKpub?: ExtKpub } = {},
): Promise<string> {
  const nonce = await registryOf(system).read.ed25519Nonce([key.pubkey]);
  const challenge = ed25519ChallengeHash({
    human,
    chainId: system.deployment.chainId,
    registry: system.deployment.contracts.registry,
    nonce,
  });
  const signature = new Uint8Array(sign(null, hexToBytes(challenge), key.privateKey));
  return ed25519RegisterUserData({
    configIndex: options.configIndex ?? 0,
    pubkey: key.pubkey,
    signature,
    extKpub: options.extKpub ?? key.extKpub,
    guardian: options.guardian ?? null,
  });
}

/** The registry's functions plus the hub's errors, so that reverts from either decode by name. */
const verifyAbi = [...agentRegistryAbi, ...localIdentityHubAbi.filter((item) => item.type === 'error')] as const;

/**
 * Like the identity app's prove(), but `edit` may change the disclosure before the trusted attester signs it
 * (e.g. an expiryDate in a format the app never emits).
 */
export async function submitEditedProof(
  system: TestSystem,
  args: ProveArgs & { edit: (output: GenericDiscloseOutputV2) => GenericDiscloseOutputV2 },
): Promise<ProveResult> {
  const wallet = await system.newWallet();
  const registry = system.deployment.contracts.registry;
  const [scope, hub, now] = [await scopeOf(system), system.deployment.contracts.hub, await latestTimestamp(system)];
  const document = args.document ?? mockDocumentFor(args.userId);
  const attestationId = attestationIdOf(document.documentType);
  const context = userContextData({ destChainId: system.deployment.chainId, userId: args.userId, userDefinedData: args.userDefinedData });
  const output = args.edit(
    buildDisclosureOutput({
      document,
      requested: { minimumAge: 0, ofac: false, ...args.disclosures },
      scope,
      userIdentifier: BigInt(args.userId),
      now: new Date(Number(now) * 1000),
    }),
  );
  const proof = await attestDisclosure(system.attester, {
    hub,
    chainId: system.deployment.chainId,
    scope,
    attestationId,
    userContextData: context,
    output,
    mockDocument: document.mock ?? true,
    currentDate: now,
  });
  const call = {
    address: registry,
    abi: verifyAbi,
    functionName: 'verifySelfProof',
    args: [proofPayload(attestationId, proof), context],
    account: wallet.account,
  } as const;
  try {
    await system.client.simulateContract(call);
  } catch (error) {
    const info = decodeRevert(error);
    return { status: 'reverted', reason: info.name, error: info };
  }
  const txHash = await wallet.writeContract({ ...call, chain: wallet.chain });
  const receipt = await mined(system, txHash);
  return { status: 'submitted', txHash, blockNumber: receipt.blockNumber, nullifier: output.nullifier, attestationId };
}

/** Minimal verifier contracts (hand-assembled EVM): every call returns the 32-byte word `result`. */
export async function deployConstantVerifier(system: TestSystem, result: boolean): Promise<Address> {
  // init: CODECOPY the 10-byte runtime to memory 0 and return it; runtime: MSTORE(0, result), RETURN(0, 32)
  const runtime = `60${result ? '01' : '00'}60005260206000f3`;
  const bytecode = `0x600a600c600039600a6000f3${runtime}` as Hex;
  const receipt = await mined(system, system.operator.deployContract({ abi: [], bytecode }));
  if (!receipt.contractAddress) throw new Error('verifier stub was not deployed');
  return receipt.contractAddress;
}

export const EMPTY_CREDENTIALS = {
  issuingState: '',
  name: [],
  idNumber: '',
  nationality: '',
  dateOfBirth: '',
  gender: '',
  expiryDate: '',
  olderThan: 0n,
  ofac: [false, false, false],
} as const;
