// ERC-4337 helpers for tests: a software WebAuthn authenticator over a P-256 key, the sponsor paymaster's
// approval, and UserOperations sent straight to EntryPoint.handleOps by a funded EOA (the bundler's part).
import { randomBytes } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import {
  type Address,
  bytesToHex,
  concat,
  encodeAbiParameters,
  type Hex,
  hexToBytes,
  keccak256,
  type LocalAccount,
  numberToHex,
  pad,
  parseEventLogs,
  sha256,
  stringToBytes,
  type TransactionReceipt,
} from 'viem';
import {
  entryPoint07Abi,
  entryPoint07Address,
  toPackedUserOperation,
  toWebAuthnAccount,
  type UserOperation,
  type WebAuthnAccount,
} from 'viem/account-abstraction';
import type { PasskeySmartAccount } from '../../src/aa/passkey-account.js';
import type { ChainClient, ChainWallet } from '../../src/chain/clients.js';

const RP_ID = 'registry.localhost';
const ORIGIN = `https://${RP_ID}`;
const FLAGS_UP_UV = 0x05;

/**
 * A passkey held in memory: viem's WebAuthn account with a `getFn` that answers `navigator.credentials.get` as an
 * authenticator does — authenticator data (rpIdHash, UP|UV, counter), the client data JSON with the challenge in
 * base64url, and a DER ECDSA signature over authenticatorData ‖ sha256(clientDataJSON).
 */
export function softwarePasskey(): WebAuthnAccount {
  const secretKey = p256.utils.randomSecretKey();
  const publicKey = bytesToHex(p256.getPublicKey(secretKey, false).slice(1)); // x ‖ y, as viem's credentials give it
  const id = randomBytes(16).toString('base64url');
  let counter = 0;
  return toWebAuthnAccount({
    credential: { id, publicKey },
    rpId: RP_ID,
    async getFn(options) {
      const request = options?.publicKey;
      if (!request) throw new Error('not a public key credential request');
      const challenge = Buffer.from(request.challenge as Uint8Array).toString('base64url');
      const clientDataJSON = JSON.stringify({ type: 'webauthn.get', challenge, origin: ORIGIN, crossOrigin: false });
      counter += 1;
      const authenticatorData = concat([
        sha256(stringToBytes(request.rpId ?? RP_ID)),
        numberToHex(FLAGS_UP_UV, { size: 1 }),
        numberToHex(counter, { size: 4 }),
      ]);
      const signed = hexToBytes(concat([authenticatorData, sha256(stringToBytes(clientDataJSON))]));
      // prehash: the authenticator signs sha256 of the data, as ECDSA-SHA256 (COSE -7) does
      const signature = p256.sign(signed, secretKey, { prehash: true, format: 'der' });
      return {
        id,
        type: 'public-key',
        response: { authenticatorData: hexToBytes(authenticatorData), clientDataJSON: stringToBytes(clientDataJSON), signature },
      } as never;
    },
  });
}

/** SponsorPaymaster.getHash, computed off chain: the layout the service's paymaster signer follows. */
export function sponsorPaymasterHash(
  op: UserOperation<'0.7'>,
  options: { chainId: number; paymaster: Address; validUntil: number; validAfter: number },
): Hex {
  const packed = toPackedUserOperation(op);
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'address' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'uint48' },
        { type: 'uint48' },
      ],
      [
        packed.sender,
        packed.nonce,
        keccak256(packed.initCode),
        keccak256(packed.callData),
        packed.accountGasLimits,
        concat([
          pad(numberToHex(op.paymasterVerificationGasLimit ?? 0n), { size: 16 }),
          pad(numberToHex(op.paymasterPostOpGasLimit ?? 0n), { size: 16 }),
        ]),
        packed.preVerificationGas,
        packed.gasFees,
        BigInt(options.chainId),
        options.paymaster,
        options.validUntil,
        options.validAfter,
      ],
    ),
  );
}

/** paymasterData = abi.encode(validUntil, validAfter) ‖ signature (65 bytes). */
export const encodePaymasterData = (validUntil: number, validAfter: number, signature: Hex): Hex =>
  concat([encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [validUntil, validAfter]), signature]);

export interface Sponsorship {
  paymaster: Address;
  signer: LocalAccount;
  validUntil?: number;
  validAfter?: number;
  /** Replaces the paymasterData after signing (malformed-data tests). */
  paymasterData?: Hex;
}

/** A signed, sponsored UserOperation of `account` running `calls` (gas limits fixed: there is no bundler to estimate). */
export async function sponsoredUserOperation(
  client: ChainClient,
  account: PasskeySmartAccount,
  calls: readonly { to: Address; value?: bigint; data?: Hex }[],
  sponsorship: Sponsorship,
): Promise<UserOperation<'0.7'>> {
  const [nonce, { factory, factoryData }, callData, block] = await Promise.all([
    account.getNonce(),
    account.getFactoryArgs(),
    account.encodeCalls(calls),
    client.getBlock(),
  ]);
  const validUntil = sponsorship.validUntil ?? Number(block.timestamp) + 600;
  const validAfter = sponsorship.validAfter ?? 0;
  const op: UserOperation<'0.7'> = {
    sender: account.address,
    nonce,
    ...(factory ? { factory, factoryData } : {}),
    callData,
    callGasLimit: 300_000n,
    verificationGasLimit: factory ? 1_000_000n : 400_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymaster: sponsorship.paymaster,
    paymasterVerificationGasLimit: 100_000n,
    paymasterPostOpGasLimit: 0n,
    paymasterData: '0x',
    signature: '0x',
  };
  const hash = sponsorPaymasterHash(op, { chainId: client.chain.id, paymaster: sponsorship.paymaster, validUntil, validAfter });
  const approval = await sponsorship.signer.signMessage({ message: { raw: hash } });
  op.paymasterData = sponsorship.paymasterData ?? encodePaymasterData(validUntil, validAfter, approval);
  op.signature = await account.signUserOperation(op);
  return op;
}

export interface HandledOperation {
  receipt: TransactionReceipt;
  /** From the EntryPoint's UserOperationEvent. */
  success: boolean;
  actualGasUsed: bigint;
  paymaster: Address;
}

/** Sends the operations to EntryPoint.handleOps from `bundler`, as a bundler would. */
export async function handleOps(client: ChainClient, bundler: ChainWallet, ops: UserOperation<'0.7'>[]): Promise<HandledOperation> {
  const hash = await bundler.writeContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [ops.map((op) => toPackedUserOperation(op)), bundler.account.address],
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  if (!event) throw new Error(`no UserOperationEvent in ${hash}`);
  return { receipt, success: event.args.success, actualGasUsed: event.args.actualGasUsed, paymaster: event.args.paymaster };
}
