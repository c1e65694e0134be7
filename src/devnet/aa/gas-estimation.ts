// Gas limits for a user operation, measured by simulation rather than guessed:
// - verificationGasLimit: the gas the EntryPoint's validation used with the paymaster taken out (account creation
//   and the account's check), paymasterVerificationGasLimit: what the paymaster added on top;
// - callGasLimit: the gas the account's call used, run from the EntryPoint after validation in the same simulated
//   block (so a call of an account the operation deploys is measured on the deployed account);
// - paymasterPostOpGasLimit: the paymaster's own figure (ERC-7677: the paymaster names it), 0 when it asks for no
//   postOp;
// - preVerificationGas: what the bundler pays that no limit covers: the handleOps transaction's intrinsic gas and
//   calldata, and the EntryPoint's per-operation work outside the measured sections.
// Each limit gets a margin, then the whole operation is simulated again with exactly those limits; a limit that
// turns out short is raised by half and tried again.
import { type Address, encodeFunctionData, type Hex, hexToBigInt, type RpcStateOverride, size } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import type { ChainClient } from '../../chain/clients.js';
import {
  describeRevert,
  type ExecutionOutcome,
  intrinsicGas,
  simulateValidation,
  simulateValidationAndExecution,
  type ValidationOutcome,
} from './entry-point-simulation.js';
import { AaRpcError, RpcErrorCode } from './json-rpc.js';
import { type DraftUserOperation, packUserOperation, type UserOperationV07 } from './user-operation.js';

export interface UserOperationGas {
  preVerificationGas: bigint;
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  paymasterVerificationGasLimit?: bigint;
  paymasterPostOpGasLimit?: bigint;
}

export interface GasEstimationContext {
  client: ChainClient;
  entryPoint: Address;
  chainId: number;
  /** The beneficiary handleOps will name: part of the calldata preVerificationGas pays for. */
  beneficiary: Address;
}

/** Limits high enough for any account creation and check we expect, well inside a 30M block. */
const PROBE_VERIFICATION_GAS = 10_000_000n;
const PROBE_PAYMASTER_VERIFICATION_GAS = 3_000_000n;
/** A balance the probe gives an account without a paymaster, so it can pay any prefund the probe's limits ask. */
const PROBE_BALANCE = `0x${(10n ** 30n).toString(16)}` as const;
/** postOp gas when a paymaster asks for postOp (non-empty context) without naming a limit. */
const DEFAULT_POST_OP_GAS = 50_000n;
/**
 * The EntryPoint's work per operation outside the sections it measures (the handleOps loop, BeforeExecution, the
 * inner call's setup, UserOperationEvent, the refund and the payment to the beneficiary, an existing account):
 * measured at about 19K for one operation per handleOps on EntryPoint v0.7, taken a fifth higher.
 */
const PER_OPERATION_OVERHEAD = 23_000n;
const MAX_ATTEMPTS = 4;

const withMargin = (gas: bigint, fixed: bigint): bigint => gas + gas / 10n + fixed;
const raised = (gas: bigint): bigint => gas + gas / 2n;

/**
 * preVerificationGas for `op` in a handleOps of its own. `conservative` prices the fields a wallet may still change
 * after estimation as if every byte were non-zero: preVerificationGas itself, the paymaster's gas limits (the
 * paymaster's figures win over ours), the paymaster data and the signature (estimation runs on stubs).
 */
export function preVerificationGas(op: UserOperationV07, beneficiary: Address, conservative = false): bigint {
  const filled = (bytes: number): Hex => `0x${'ff'.repeat(bytes)}`;
  const fullWord = hexToBigInt(filled(15));
  const priced: UserOperationV07 = conservative
    ? {
        ...op,
        preVerificationGas: fullWord,
        signature: filled(size(op.signature)),
        ...(op.paymaster
          ? { paymasterVerificationGasLimit: fullWord, paymasterPostOpGasLimit: fullWord, paymasterData: filled(size(op.paymasterData ?? '0x')) }
          : {}),
      }
    : op;
  const calldata = encodeFunctionData({ abi: entryPoint07Abi, functionName: 'handleOps', args: [[packUserOperation(priced)], beneficiary] });
  return intrinsicGas(calldata) + PER_OPERATION_OVERHEAD;
}

/** A limit that turned out short: the EntryPoint's reason says whose. */
function shortLimit(error: unknown): 'account' | 'paymaster' | undefined {
  if (!(error instanceof AaRpcError)) return undefined;
  const reason = error.shortMessage.slice(0, 4);
  if (['AA13', 'AA23', 'AA26'].includes(reason)) return 'account';
  if (['AA33', 'AA36'].includes(reason)) return 'paymaster';
  return undefined;
}

function executionReverted(execution: ExecutionOutcome): AaRpcError {
  return new AaRpcError(RpcErrorCode.executionReverted, `execution reverted: ${describeRevert(execution.returnData)}`, {
    revertData: execution.returnData,
  });
}

/**
 * The operation as the probes run it: with a paymaster, no fees (the paymaster's deposit need not cover the probe's
 * limits, and the account pays nothing either way); without one, the operation's fees and an account rich enough for
 * the prefund, so the probe includes the account paying it.
 */
function probeOf(op: UserOperationV07, stateOverride: RpcStateOverride | undefined): { op: UserOperationV07; stateOverride?: RpcStateOverride } {
  if (op.paymaster) return { op: { ...op, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, ...(stateOverride ? { stateOverride } : {}) };
  return { op, stateOverride: { ...stateOverride, [op.sender]: { ...stateOverride?.[op.sender], balance: PROBE_BALANCE } } };
}

const withoutPaymaster = (op: UserOperationV07): UserOperationV07 =>
  Object.fromEntries(Object.entries(op).filter(([key]) => !key.startsWith('paymaster'))) as UserOperationV07;

/** Fills missing fees from the chain's gas price, so the probes price the prefund as the real operation will. */
async function withFees(client: ChainClient, draft: DraftUserOperation): Promise<UserOperationV07> {
  if (draft.maxFeePerGas !== undefined && draft.maxPriorityFeePerGas !== undefined) return draft as UserOperationV07;
  const gasPrice = await client.getGasPrice();
  return { ...draft, maxFeePerGas: draft.maxFeePerGas ?? gasPrice, maxPriorityFeePerGas: draft.maxPriorityFeePerGas ?? gasPrice };
}

export async function estimateUserOperationGas(
  context: GasEstimationContext,
  draft: DraftUserOperation,
  stateOverride?: RpcStateOverride,
): Promise<UserOperationGas> {
  const { client, entryPoint, chainId } = context;
  const op = await withFees(client, draft);
  const probeLimits = {
    verificationGasLimit: PROBE_VERIFICATION_GAS,
    callGasLimit: 0n,
    preVerificationGas: 0n,
    ...(op.paymaster ? { paymasterVerificationGasLimit: PROBE_PAYMASTER_VERIFICATION_GAS } : {}),
  };
  const probe = probeOf({ ...op, ...probeLimits }, stateOverride);
  const [measured, accountOnly] = await Promise.all([
    simulateValidationAndExecution(client, entryPoint, probe.op, { chainId, ...(probe.stateOverride ? { stateOverride: probe.stateOverride } : {}) }),
    op.paymaster ? simulateValidation(client, entryPoint, withoutPaymaster(probe.op), probe.stateOverride) : undefined,
  ]);
  if (!measured.execution.success) throw executionReverted(measured.execution);

  const accountGas = (accountOnly ?? measured.validation).preOpGas;
  const paymasterGas = measured.validation.preOpGas > accountGas ? measured.validation.preOpGas - accountGas : 0n;
  let gas: UserOperationGas = {
    verificationGasLimit: withMargin(accountGas, 5_000n),
    callGasLimit: size(op.callData) === 0 ? 0n : withMargin(measured.execution.gasUsed, 5_000n),
    preVerificationGas: 0n,
    ...(op.paymaster
      ? {
          paymasterVerificationGasLimit: withMargin(paymasterGas, 5_000n),
          paymasterPostOpGasLimit: postOpGas(op, measured.validation),
        }
      : {}),
  };

  for (let attempt = 1; ; attempt++) {
    const candidate = { ...op, ...gas };
    const check = probeOf(candidate, stateOverride);
    let failure: 'account' | 'paymaster' | 'call' | undefined;
    try {
      const result = await simulateValidationAndExecution(client, entryPoint, check.op, {
        chainId,
        executionGas: candidate.callGasLimit,
        ...(check.stateOverride ? { stateOverride: check.stateOverride } : {}),
      });
      if (!result.execution.success) failure = 'call';
    } catch (error) {
      failure = shortLimit(error);
      if (!failure || attempt === MAX_ATTEMPTS) throw error;
    }
    if (!failure) return { ...gas, preVerificationGas: preVerificationGas(candidate, context.beneficiary, true) };
    if (attempt === MAX_ATTEMPTS) throw new AaRpcError(RpcErrorCode.executionReverted, 'execution runs out of gas at every limit tried');
    gas = {
      ...gas,
      ...(failure === 'account' ? { verificationGasLimit: raised(gas.verificationGasLimit) } : {}),
      ...(failure === 'paymaster' ? { paymasterVerificationGasLimit: raised(gas.paymasterVerificationGasLimit ?? 0n) } : {}),
      ...(failure === 'call' ? { callGasLimit: raised(gas.callGasLimit) } : {}),
    };
  }
}

function postOpGas(op: UserOperationV07, validation: ValidationOutcome): bigint {
  if (op.paymasterPostOpGasLimit) return op.paymasterPostOpGasLimit;
  return size(validation.paymasterContext) === 0 ? 0n : DEFAULT_POST_OP_GAS;
}
