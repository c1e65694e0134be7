// Reading a UserOperation's calls for our two account kinds: what viem and permissionless encode is read back call
// for call; another function, another ERC-7821 mode, inconsistent batch arrays and any non-canonical encoding (the
// same calls with bytes appended, an offset moved) are unreadable, so the paymaster refuses them.
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { concat, createClient, custom, encodeAbiParameters, encodeFunctionData, getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { encodePasskeyAccountCalls } from '../../src/aa/passkey-account.js';
import { passkeyAccountAbi } from '../../src/contracts/artifacts/PasskeyAccount.js';
import { decodeAccountCalls, simpleAccountExecuteAbi } from '../../src/devnet/aa/account-calls.js';

const A = getAddress('0x00000000000000000000000000000000000000aa');
const B = getAddress('0x00000000000000000000000000000000000000bb');
const calls = [
  { to: A, value: 0n, data: '0x1234' as Hex },
  { to: B, value: 5n, data: '0x' as Hex },
];

/** permissionless' SimpleAccount v0.7, which needs a client only for addresses: its encodeCalls is pure. */
const simpleAccount = () =>
  toSimpleSmartAccount({
    client: createClient({ transport: custom({ request: async () => null }) }),
    owner: privateKeyToAccount(generatePrivateKey()),
    address: A,
    entryPoint: { address: '0x0000000071727De22E5E9d8BAf0edAc6f37da032', version: '0.7' },
  });

describe('decodeAccountCalls', () => {
  it('reads empty callData as no calls, for both kinds', () => {
    expect(decodeAccountCalls('passkey', '0x')).toEqual([]);
    expect(decodeAccountCalls('simple', '0x')).toEqual([]);
  });

  it("reads a passkey account's ERC-7821 batch, and nothing else", () => {
    const data = encodePasskeyAccountCalls(calls);
    expect(decodeAccountCalls('passkey', data)).toEqual(calls);
    expect(decodeAccountCalls('passkey', encodePasskeyAccountCalls([]))).toEqual([]);
    expect(decodeAccountCalls('simple', data), 'not a SimpleAccount function').toBeUndefined();
    const executions = encodeAbiParameters(
      [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
      [calls.map((c) => [c.to, c.value, c.data] as const)],
    );
    const withOpData = `0x0100000000007821000100000000000000000000000000000000000000000000` as const;
    const otherMode = encodeFunctionData({ abi: passkeyAccountAbi, functionName: 'execute', args: [withOpData, executions] });
    expect(decodeAccountCalls('passkey', otherMode), 'batch mode with opData').toBeUndefined();
    expect(decodeAccountCalls('passkey', concat([data, '0x00'])), 'a byte appended').toBeUndefined();
    expect(decodeAccountCalls('passkey', '0xdeadbeef')).toBeUndefined();
  });

  it("reads a SimpleAccount's execute and executeBatch as permissionless encodes them", async () => {
    const account = await simpleAccount();
    expect(decodeAccountCalls('simple', await account.encodeCalls([calls[0]!]))).toEqual([calls[0]]);
    expect(decodeAccountCalls('simple', await account.encodeCalls(calls))).toEqual(calls);
    // executeBatch with no values: all zero, as SimpleAccount reads it
    const noValues = encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'executeBatch', args: [[A, B], [], ['0x', '0x01']] });
    expect(decodeAccountCalls('simple', noValues)).toEqual([
      { to: A, value: 0n, data: '0x' },
      { to: B, value: 0n, data: '0x01' },
    ]);
    expect(decodeAccountCalls('passkey', await account.encodeCalls(calls)), 'not a passkey function').toBeUndefined();
  });

  it('refuses inconsistent batches and non-canonical encodings of SimpleAccount calls', () => {
    const mismatched = encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'executeBatch', args: [[A, B], [1n], ['0x', '0x']] });
    expect(decodeAccountCalls('simple', mismatched)).toBeUndefined();
    const fewerData = encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'executeBatch', args: [[A, B], [], ['0x']] });
    expect(decodeAccountCalls('simple', fewerData)).toBeUndefined();
    const execute = encodeFunctionData({ abi: simpleAccountExecuteAbi, functionName: 'execute', args: [A, 0n, '0x1234'] });
    expect(decodeAccountCalls('simple', concat([execute, '0x'.padEnd(66, '0') as Hex])), 'a word appended').toBeUndefined();
    // the bytes argument's offset moved one word on, with the same bytes behind it: a second reading of one callData
    const words = execute.slice(10).match(/.{64}/g)!;
    const moved =
      `${execute.slice(0, 10)}${words[0]}${words[1]}${(0x80).toString(16).padStart(64, '0')}${'0'.repeat(64)}${words.slice(3).join('')}` as Hex;
    expect(decodeAccountCalls('simple', moved)).toBeUndefined();
  });
});
