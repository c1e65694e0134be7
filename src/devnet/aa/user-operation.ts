// EntryPoint v0.7 user operations as the bundler and paymaster RPCs carry them (ERC-7769: hex quantities, the
// unpacked fields), parsed into viem's UserOperation, packed for the EntryPoint and unpacked again from handleOps
// calldata (so an operation can be shown after a restart from the chain alone).
import { type Address, getAddress, type Hex, hexToBigInt, isAddress, numberToHex, size, slice } from 'viem';
import {
  getUserOperationHash,
  type PackedUserOperation,
  type RpcUserOperation,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { z } from 'zod';
import { invalidParams } from './json-rpc.js';

export type UserOperationV07 = UserOperation<'0.7'>;

/** An operation sent for gas estimation or sponsorship: gas limits may be missing (0), and so may the fees. */
export type DraftUserOperation = Omit<UserOperationV07, 'maxFeePerGas' | 'maxPriorityFeePerGas'> & {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
};

const quantity = z
  .string({ error: 'must be a hex quantity' })
  .regex(/^0x[0-9a-fA-F]{1,64}$/, 'must be a hex quantity')
  .transform((value) => hexToBigInt(value as Hex));
const bytes = z
  .string({ error: 'must be hex bytes' })
  .regex(/^0x([0-9a-fA-F]{2})*$/, 'must be hex bytes')
  .transform((value) => value as Hex);
const address = z
  .string({ error: 'must be an address' })
  .refine((value) => isAddress(value, { strict: false }), 'must be an address')
  .transform((value) => getAddress(value));

const gasFields = {
  callGasLimit: quantity,
  verificationGasLimit: quantity,
  preVerificationGas: quantity,
  maxFeePerGas: quantity,
  maxPriorityFeePerGas: quantity,
};

const userOperationShape = z.object({
  sender: address,
  nonce: quantity,
  factory: address.nullish(),
  factoryData: bytes.nullish(),
  callData: bytes,
  ...gasFields,
  paymaster: address.nullish(),
  paymasterVerificationGasLimit: quantity.nullish(),
  paymasterPostOpGasLimit: quantity.nullish(),
  paymasterData: bytes.nullish(),
  signature: bytes,
  // fields of other EntryPoint versions, refused with a message rather than ignored
  initCode: z.unknown().optional(),
  paymasterAndData: z.unknown().optional(),
  eip7702Auth: z.unknown().optional(),
});

const completeSchema = userOperationShape;
const draftSchema = userOperationShape.extend({
  callGasLimit: quantity.optional(),
  verificationGasLimit: quantity.optional(),
  preVerificationGas: quantity.optional(),
  maxFeePerGas: quantity.optional(),
  maxPriorityFeePerGas: quantity.optional(),
  signature: bytes.default('0x'),
});

type Parsed = z.infer<typeof draftSchema>;

function parseWith<S extends typeof completeSchema | typeof draftSchema>(schema: S, value: unknown): z.infer<S> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParams('Invalid user operation: expected an object');
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidParams(`Invalid user operation: ${issue?.path.join('.') || 'value'} ${issue?.message ?? 'is invalid'}`);
  }
  const op = parsed.data as Parsed;
  if (op.eip7702Auth !== undefined) throw invalidParams('Invalid user operation: EIP-7702 authorizations are not supported');
  if (op.initCode !== undefined && op.initCode !== '0x') {
    throw invalidParams('Invalid user operation: initCode is an EntryPoint v0.6 field, send factory and factoryData');
  }
  if (op.paymasterAndData !== undefined && op.paymasterAndData !== '0x') {
    throw invalidParams('Invalid user operation: paymasterAndData is an EntryPoint v0.6 field, send the paymaster fields');
  }
  if (!op.factory !== !op.factoryData) throw invalidParams('Invalid user operation: factory and factoryData go together');
  if (!op.paymaster && (op.paymasterData || op.paymasterVerificationGasLimit || op.paymasterPostOpGasLimit)) {
    throw invalidParams('Invalid user operation: paymaster fields without a paymaster');
  }
  return parsed.data as z.infer<S>;
}

function common(op: Parsed): Omit<DraftUserOperation, 'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas'> {
  return {
    sender: op.sender,
    nonce: op.nonce,
    callData: op.callData,
    signature: op.signature,
    ...(op.factory ? { factory: op.factory, factoryData: op.factoryData as Hex } : {}),
    ...(op.paymaster
      ? {
          paymaster: op.paymaster,
          paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? 0n,
          paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n,
          paymasterData: op.paymasterData ?? '0x',
        }
      : {}),
  };
}

/** A complete operation, as eth_sendUserOperation takes it: every gas field and fee set. */
export function parseUserOperation(value: unknown): UserOperationV07 {
  const op = parseWith(completeSchema, value);
  if (op.paymaster && (op.paymasterVerificationGasLimit == null || op.paymasterPostOpGasLimit == null || op.paymasterData == null)) {
    throw invalidParams('Invalid user operation: a paymaster needs paymasterVerificationGasLimit, paymasterPostOpGasLimit and paymasterData');
  }
  return {
    ...common(op),
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
  } as UserOperationV07;
}

/** An operation to estimate or sponsor: missing gas limits are 0, missing fees stay missing. */
export function parseDraftUserOperation(value: unknown): DraftUserOperation {
  const op = parseWith(draftSchema, value);
  return {
    ...common(op),
    callGasLimit: op.callGasLimit ?? 0n,
    verificationGasLimit: op.verificationGasLimit ?? 0n,
    preVerificationGas: op.preVerificationGas ?? 0n,
    ...(op.maxFeePerGas !== undefined ? { maxFeePerGas: op.maxFeePerGas } : {}),
    ...(op.maxPriorityFeePerGas !== undefined ? { maxPriorityFeePerGas: op.maxPriorityFeePerGas } : {}),
  } as DraftUserOperation;
}

/** The ERC-7769 shape of an operation: every quantity hex, absent optional fields left out. */
export function toRpcUserOperation(op: UserOperationV07): RpcUserOperation<'0.7'> {
  return {
    sender: op.sender,
    nonce: numberToHex(op.nonce),
    ...(op.factory ? { factory: op.factory, factoryData: op.factoryData ?? '0x' } : {}),
    callData: op.callData,
    callGasLimit: numberToHex(op.callGasLimit),
    verificationGasLimit: numberToHex(op.verificationGasLimit),
    preVerificationGas: numberToHex(op.preVerificationGas),
    maxFeePerGas: numberToHex(op.maxFeePerGas),
    maxPriorityFeePerGas: numberToHex(op.maxPriorityFeePerGas),
    ...(op.paymaster
      ? {
          paymaster: op.paymaster,
          paymasterVerificationGasLimit: numberToHex(op.paymasterVerificationGasLimit ?? 0n),
          paymasterPostOpGasLimit: numberToHex(op.paymasterPostOpGasLimit ?? 0n),
          paymasterData: op.paymasterData ?? '0x',
        }
      : {}),
    signature: op.signature,
  };
}

export const packUserOperation = (op: UserOperationV07): PackedUserOperation => toPackedUserOperation(op);

const PAYMASTER_DATA_OFFSET = 52;

/** The inverse of packUserOperation, for operations read back from handleOps calldata. */
export function unpackUserOperation(packed: PackedUserOperation): UserOperationV07 {
  const high = (word: Hex): bigint => hexToBigInt(slice(word, 0, 16));
  const low = (word: Hex): bigint => hexToBigInt(slice(word, 16, 32));
  const factory = size(packed.initCode) >= 20 ? getAddress(slice(packed.initCode, 0, 20)) : undefined;
  const paymaster = size(packed.paymasterAndData) >= PAYMASTER_DATA_OFFSET ? packed.paymasterAndData : undefined;
  return {
    sender: packed.sender,
    nonce: packed.nonce,
    ...(factory ? { factory, factoryData: size(packed.initCode) > 20 ? slice(packed.initCode, 20) : '0x' } : {}),
    callData: packed.callData,
    verificationGasLimit: high(packed.accountGasLimits),
    callGasLimit: low(packed.accountGasLimits),
    preVerificationGas: packed.preVerificationGas,
    maxPriorityFeePerGas: high(packed.gasFees),
    maxFeePerGas: low(packed.gasFees),
    ...(paymaster
      ? {
          paymaster: getAddress(slice(paymaster, 0, 20)),
          paymasterVerificationGasLimit: hexToBigInt(slice(paymaster, 20, 36)),
          paymasterPostOpGasLimit: hexToBigInt(slice(paymaster, 36, PAYMASTER_DATA_OFFSET)),
          paymasterData: size(paymaster) > PAYMASTER_DATA_OFFSET ? slice(paymaster, PAYMASTER_DATA_OFFSET) : '0x',
        }
      : {}),
    signature: packed.signature,
  } as UserOperationV07;
}

export const userOperationHash = (op: UserOperationV07, entryPoint: Address, chainId: number): Hex =>
  getUserOperationHash({ userOperation: op, entryPointAddress: entryPoint, entryPointVersion: '0.7', chainId });

/** The total gas an operation may use: what its prefund (and a paymaster's cap) is computed from. */
export const totalGasLimit = (op: UserOperationV07): bigint =>
  op.verificationGasLimit + op.callGasLimit + op.preVerificationGas + (op.paymasterVerificationGasLimit ?? 0n) + (op.paymasterPostOpGasLimit ?? 0n);
