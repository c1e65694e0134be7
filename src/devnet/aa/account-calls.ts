// The calls a UserOperation's callData makes, for the two kinds of account our factories deploy: a passkey account
// runs ERC-7821 `execute(batch mode, Execution[])`, a SimpleAccount v0.7 runs `execute(dest, value, func)` or
// `executeBatch(dest[], value[], func[])`. Anything else (another function, another ERC-7821 mode, another account
// kind) cannot be read, and the paymaster does not pay for what it cannot read.
//
// The decoded calls must encode back to the very bytes given: ABI decoding follows offsets, so a non-canonical
// encoding (overlapping or padded offsets, trailing bytes) could show one decoder other calls than the account's
// own decoder runs. Requiring the canonical form leaves one reading; viem and permissionless always produce it.
import { type Address, decodeFunctionData, encodeFunctionData, type Hex, parseAbi } from 'viem';
import { decodePasskeyAccountCalls, encodePasskeyAccountCalls } from '../../aa/passkey-account.js';

export type AccountKind = 'passkey' | 'simple';

export interface AccountCall {
  to: Address;
  value: bigint;
  data: Hex;
}

/** SimpleAccount v0.7's two ways in from the EntryPoint (eth-infinitism @account-abstraction/contracts 0.7.0). */
export const simpleAccountExecuteAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, uint256[] value, bytes[] func)',
]);

const sameBytes = (a: Hex, b: Hex): boolean => a.toLowerCase() === b.toLowerCase();

function passkeyCalls(callData: Hex): AccountCall[] | undefined {
  try {
    // decodePasskeyAccountCalls accepts only `execute` in single batch mode without opData
    const calls = decodePasskeyAccountCalls(callData).map((call) => ({ to: call.to, value: call.value ?? 0n, data: call.data ?? '0x' }));
    return sameBytes(encodePasskeyAccountCalls(calls), callData) ? calls : undefined;
  } catch {
    return undefined;
  }
}

function simpleCalls(callData: Hex): AccountCall[] | undefined {
  try {
    const decoded = decodeFunctionData({ abi: simpleAccountExecuteAbi, data: callData });
    if (!sameBytes(encodeFunctionData({ abi: simpleAccountExecuteAbi, ...decoded } as Parameters<typeof encodeFunctionData>[0]), callData)) {
      return undefined;
    }
    if (decoded.functionName === 'execute') {
      const [to, value, data] = decoded.args;
      return [{ to, value, data }];
    }
    const [targets, values, datas] = decoded.args;
    // SimpleAccount's own rule: one func per dest, and values either absent (all zero) or one per dest
    if (targets.length !== datas.length || (values.length !== 0 && values.length !== targets.length)) return undefined;
    return targets.map((to, i) => ({ to, value: values[i] ?? 0n, data: datas[i] as Hex }));
  } catch {
    return undefined;
  }
}

/**
 * The calls `callData` makes on an account of `kind`: empty for empty callData (the EntryPoint then calls nothing),
 * undefined when it is not a call this kind of account executes or is not canonically encoded.
 */
export function decodeAccountCalls(kind: AccountKind, callData: Hex): AccountCall[] | undefined {
  if (callData === '0x') return [];
  return kind === 'passkey' ? passkeyCalls(callData) : simpleCalls(callData);
}
