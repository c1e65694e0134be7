// Shared helpers of the contract tests: typed registry handles and settings, mined transactions, decoded registry
// events, revert expectations (of a call or of a submitted proof) and the chain's clock.
import { type Address, getContract, type Hex, isAddressEqual, parseEventLogs, type TransactionReceipt } from 'viem';
import { expect } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/index.js';
import {
  decodeRevert,
  documentNullifier,
  type MockDocument,
  mockDocumentFor,
  type ProveResult,
  type RevertInfo,
} from '../../src/identity-app/index.js';
import type { TestSystem } from './chain.js';

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

/** The registry's events of one transaction (its hash or its receipt), in log order (other contracts' events are left out). */
export async function registryEvents(system: TestSystem, tx: Hex | Pick<TransactionReceipt, 'logs'>) {
  const receipt = typeof tx === 'string' ? await system.client.getTransactionReceipt({ hash: tx }) : tx;
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

/**
 * The call (a viem simulate/read/write promise) reverts with exactly this custom error and these arguments
 * (none by default; asymmetric matchers such as expect.any(BigInt) stand for values the test cannot know).
 */
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

/** Minimal verifier contracts (hand-assembled EVM): every call returns the 32-byte word `result`. */
export async function deployConstantVerifier(system: TestSystem, result: boolean): Promise<Address> {
  // init: CODECOPY the 10-byte runtime to memory 0 and return it; runtime: MSTORE(0, result), RETURN(0, 32)
  const runtime = `60${result ? '01' : '00'}60005260206000f3`;
  const bytecode = `0x600a600c600039600a6000f3${runtime}` as Hex;
  const receipt = await mined(system, system.operator.deployContract({ abi: [], bytecode }));
  if (!receipt.contractAddress) throw new Error('verifier stub was not deployed');
  return receipt.contractAddress;
}

export { EMPTY_CREDENTIALS } from '../../src/core/credentials.js';
