// Validation and execution of a user operation without sending anything: the EntryPoint's own simulation code
// (EntryPointSimulations of @account-abstraction/contracts 0.7.0) is put at the EntryPoint's address by a state
// override, so the simulation reads the real EntryPoint's storage (nonces, deposits) and creates accounts through
// its real SenderCreator. simulateValidation answers the validation results instead of reverting, so its state
// changes (the account deployed, the nonce used) carry over to the next call of an eth_simulateV1 block: that is
// where the operation's call is measured, from the EntryPoint, exactly as handleOps makes it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  type Address,
  BaseError,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  getAddress,
  type Hex,
  hexToBigInt,
  isHex,
  numberToHex,
  parseAbi,
  type RpcStateOverride,
  size,
  slice,
  toFunctionSelector,
} from 'viem';
import type { ChainClient } from '../../chain/clients.js';
import { AaRpcError, RpcErrorCode } from './json-rpc.js';
import { packUserOperation, type UserOperationV07, userOperationHash } from './user-operation.js';

export const entryPointSimulationsAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'struct ReturnInfo { uint256 preOpGas; uint256 prefund; uint256 accountValidationData; uint256 paymasterValidationData; bytes paymasterContext; }',
  'struct StakeInfo { uint256 stake; uint256 unstakeDelaySec; }',
  'struct AggregatorStakeInfo { address aggregator; StakeInfo stakeInfo; }',
  'struct ValidationResult { ReturnInfo returnInfo; StakeInfo senderInfo; StakeInfo factoryInfo; StakeInfo paymasterInfo; AggregatorStakeInfo aggregatorInfo; }',
  'function simulateValidation(PackedUserOperation userOp) returns (ValidationResult)',
  'function executeUserOp(PackedUserOperation userOp, bytes32 userOpHash)',
  'error FailedOp(uint256 opIndex, string reason)',
  'error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)',
]);

const require = createRequire(import.meta.url);
let simulationsCode: Hex | undefined;

/** EntryPointSimulations' runtime code (read once): it is only ever a state override, never deployed. */
function entryPointSimulationsCode(): Hex {
  simulationsCode ??= (
    JSON.parse(readFileSync(require.resolve('@account-abstraction/contracts/artifacts/EntryPointSimulations.json'), 'utf8')) as {
      deployedBytecode: Hex;
    }
  ).deployedBytecode;
  return simulationsCode;
}

/** What an account or paymaster returned from its validation, unpacked (ERC-4337 validationData). */
export interface ValidationData {
  /** 0: valid signature, 1: signature check failed, anything else: a signature aggregator. */
  aggregator: Address;
  /** Unix seconds; 0 when the operation is valid at once. */
  validAfter: number;
  /** Unix seconds; MAX_UINT48 when it does not expire. */
  validUntil: number;
}

const MAX_UINT48 = 2 ** 48 - 1;
export const SIGNATURE_FAILED: Address = '0x0000000000000000000000000000000000000001';
export const NO_AGGREGATOR: Address = '0x0000000000000000000000000000000000000000';

export function parseValidationData(data: bigint): ValidationData {
  const validUntil = Number((data >> 160n) & BigInt(MAX_UINT48));
  return {
    aggregator: getAddress(numberToHex(data & ((1n << 160n) - 1n), { size: 20 })),
    validAfter: Number(data >> 208n),
    validUntil: validUntil === 0 ? MAX_UINT48 : validUntil,
  };
}

export interface ValidationOutcome {
  /** Gas used by validation (account creation, the account's and the paymaster's checks) plus preVerificationGas. */
  preOpGas: bigint;
  prefund: bigint;
  account: ValidationData;
  paymaster: ValidationData;
  /** Non-empty when the paymaster wants its postOp called. */
  paymasterContext: Hex;
}

export interface ExecutionOutcome {
  success: boolean;
  /** Gas used by the call from the EntryPoint to the account, without the transaction's intrinsic gas. */
  gasUsed: bigint;
  returnData: Hex;
}

/** The JSON-RPC code for a refusal with the EntryPoint's reason: AA3x is the paymaster's, the rest the account's. */
function codeForReason(reason: string): number {
  if (reason.startsWith('AA24') || reason.startsWith('AA34')) return RpcErrorCode.signature;
  if (reason.startsWith('AA22') || reason.startsWith('AA32')) return RpcErrorCode.outOfTimeRange;
  if (reason.startsWith('AA3')) return RpcErrorCode.paymasterValidation;
  return RpcErrorCode.validation;
}

export const entryPointRefusal = (reason: string, data?: Record<string, unknown>): AaRpcError => new AaRpcError(codeForReason(reason), reason, data);

/** A revert payload read as text when it is Error(string), otherwise left as hex. */
export function describeRevert(data: Hex): string {
  if (size(data) === 0) return 'no revert data';
  try {
    const decoded = decodeErrorResult({ abi: entryPointSimulationsAbi, data });
    const name: string = decoded.errorName; // Error(string) is decoded too, though the ABI's types leave it out
    if (name === 'Error' || name === 'FailedOp') return String(decoded.args.at(-1));
  } catch {
    // not one of the known errors: shown as hex
  }
  return data;
}

/**
 * The EntryPoint's refusal behind a revert payload (FailedOp / FailedOpWithRevert, with the index of the refused
 * operation in its bundle), or undefined when the payload is something else.
 */
export function decodeEntryPointRefusal(data: Hex): { opIndex: number; error: AaRpcError } | undefined {
  try {
    const decoded = decodeErrorResult({ abi: entryPointSimulationsAbi, data });
    if (decoded.errorName === 'FailedOp') {
      const [opIndex, reason] = decoded.args;
      return { opIndex: Number(opIndex), error: entryPointRefusal(reason) };
    }
    if (decoded.errorName === 'FailedOpWithRevert') {
      const [opIndex, reason, inner] = decoded.args;
      const message = `${reason}: ${describeRevert(inner)}`;
      return { opIndex: Number(opIndex), error: entryPointRefusal(message, { revertData: inner }) };
    }
  } catch {
    // not an EntryPoint refusal
  }
  return undefined;
}

/** The revert payload a node returned with a failed call, wherever viem put it in the error chain. */
export function revertDataOf(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const found = error.walk((cause) => isHex((cause as { data?: unknown }).data)) as { data?: Hex } | null;
  return found?.data;
}

function refusalFrom(data: Hex | undefined, fallback: string): AaRpcError {
  if (data) {
    const refusal = decodeEntryPointRefusal(data);
    if (refusal) return refusal.error;
  }
  return new AaRpcError(RpcErrorCode.validation, `${fallback}${data ? `: ${describeRevert(data)}` : ''}`);
}

function decodeValidation(data: Hex): ValidationOutcome {
  const { returnInfo } = decodeFunctionResult({ abi: entryPointSimulationsAbi, functionName: 'simulateValidation', data });
  return {
    preOpGas: returnInfo.preOpGas,
    prefund: returnInfo.prefund,
    account: parseValidationData(returnInfo.accountValidationData),
    paymaster: parseValidationData(returnInfo.paymasterValidationData),
    paymasterContext: returnInfo.paymasterContext,
  };
}

function overrides(entryPoint: Address, extra: RpcStateOverride | undefined): RpcStateOverride {
  return { ...extra, [entryPoint]: { ...extra?.[entryPoint], code: entryPointSimulationsCode() } };
}

const simulateValidationData = (op: UserOperationV07): Hex =>
  encodeFunctionData({ abi: entryPointSimulationsAbi, functionName: 'simulateValidation', args: [packUserOperation(op)] });

/**
 * The EntryPoint's validation of `op` at the latest block, signatures and time ranges reported rather than
 * enforced. Throws AaRpcError with the EntryPoint's AAxx reason when validation reverts.
 */
export async function simulateValidation(
  client: ChainClient,
  entryPoint: Address,
  op: UserOperationV07,
  stateOverride?: RpcStateOverride,
): Promise<ValidationOutcome> {
  let result: Hex;
  try {
    result = await client.request({
      method: 'eth_call',
      params: [{ to: entryPoint, data: simulateValidationData(op) }, 'latest', overrides(entryPoint, stateOverride)],
    });
  } catch (error) {
    const data = revertDataOf(error);
    if (!data) throw error;
    throw refusalFrom(data, 'validation reverted');
  }
  return decodeValidation(result);
}

const EXECUTE_USER_OP = toFunctionSelector('executeUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32)');

/** The call the EntryPoint makes to the account: its callData, or executeUserOp(op, hash) for accounts that ask for it. */
export function executionCallData(op: UserOperationV07, entryPoint: Address, chainId: number): Hex {
  if (size(op.callData) < 4 || slice(op.callData, 0, 4) !== EXECUTE_USER_OP) return op.callData;
  return encodeFunctionData({
    abi: entryPointSimulationsAbi,
    functionName: 'executeUserOp',
    args: [packUserOperation(op), userOperationHash(op, entryPoint, chainId)],
  });
}

/** A transaction's intrinsic gas for this calldata (EIP-2028 prices): what a top-level call costs before running. */
export function intrinsicGas(data: Hex): bigint {
  let gas = 21_000n;
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === '00' ? 4n : 16n;
  return gas;
}

interface SimulatedCall {
  status: Hex;
  returnData: Hex;
  gasUsed: Hex;
  error?: { data?: Hex };
}

/**
 * Validation and then the operation's call, in one simulated block: the call runs on the state validation left
 * (the account deployed, its nonce used). `executionGas` limits the call as callGasLimit would.
 */
export async function simulateValidationAndExecution(
  client: ChainClient,
  entryPoint: Address,
  op: UserOperationV07,
  options: { chainId: number; executionGas?: bigint; stateOverride?: RpcStateOverride },
): Promise<{ validation: ValidationOutcome; execution: ExecutionOutcome }> {
  const callData = executionCallData(op, entryPoint, options.chainId);
  const intrinsic = intrinsicGas(callData);
  // the EntryPoint makes no call for empty callData
  const executes = size(op.callData) > 0;
  const execute = {
    from: entryPoint,
    to: op.sender,
    data: callData,
    ...(options.executionGas !== undefined ? { gas: numberToHex(intrinsic + options.executionGas) } : {}),
  };
  const blocks = (await client.request({
    method: 'eth_simulateV1',
    params: [
      {
        blockStateCalls: [
          {
            stateOverrides: overrides(entryPoint, options.stateOverride),
            calls: [{ to: entryPoint, data: simulateValidationData(op) }, ...(executes ? [execute] : [])],
          },
        ],
      },
      'latest',
    ],
  })) as unknown as { calls: SimulatedCall[] }[];
  const [validate, run] = blocks[0]?.calls ?? [];
  if (!validate || (executes && !run)) throw new AaRpcError(RpcErrorCode.internal, 'the chain did not answer the simulation');
  if (validate.status !== '0x1') throw refusalFrom(validate.error?.data ?? validate.returnData, 'validation reverted');
  const validation = decodeValidation(validate.returnData);
  if (!run) return { validation, execution: { success: true, gasUsed: 0n, returnData: '0x' } };
  const gasUsed = hexToBigInt(run.gasUsed) - intrinsic;
  return {
    validation,
    execution: { success: run.status === '0x1', gasUsed: gasUsed > 0n ? gasUsed : 0n, returnData: run.error?.data ?? run.returnData },
  };
}
