// A viem smart account for PasskeyAccount (src/contracts/solidity/aa): ERC-4337 v0.7, one WebAuthn P-256 passkey,
// ERC-7821 batched calls, ERC-7739 signatures. Only viem and the generated ABIs: the client SDK can use it as is.
import {
  type Address,
  type Chain,
  type Client,
  concat,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  type Hash,
  type Hex,
  hashDomain,
  hashMessage,
  type JsonRpcAccount,
  keccak256,
  type LocalAccount,
  type NonceManager,
  size,
  slice,
  stringToHex,
  type Transport,
  type TypedData,
  type TypedDataDefinition,
  toHex,
  zeroHash,
} from 'viem';
import {
  entryPoint07Abi,
  entryPoint07Address,
  getUserOperationHash,
  type SmartAccount,
  type SmartAccountImplementation,
  toSmartAccount,
  type UserOperation,
  type WebAuthnAccount,
} from 'viem/account-abstraction';
import { readContract } from 'viem/actions';
import { hashTypedData as hashNestedTypedData, wrapTypedDataSignature } from 'viem/experimental/erc7739';
import { passkeyAccountAbi } from '../contracts/artifacts/PasskeyAccount.js';
import { passkeyAccountFactoryAbi } from '../contracts/artifacts/PasskeyAccountFactory.js';

/** PasskeyAccount's EIP-712 domain name and version (its constructor), the domain of its ERC-7739 signatures. */
const DOMAIN_NAME = 'PasskeyAccount';
const DOMAIN_VERSION = '1';
/** ERC-7821 single batch mode, no opData: the one mode PasskeyAccount executes. */
export const ERC7821_BATCH_MODE: Hex = '0x0100000000000000000000000000000000000000000000000000000000000000';
const PERSONAL_SIGN_TYPEHASH = keccak256(stringToHex('PersonalSign(bytes prefixed)'));

const executionsParameter = [
  {
    type: 'tuple[]',
    components: [
      { name: 'target', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'callData', type: 'bytes' },
    ],
  },
] as const;

/** OpenZeppelin's WebAuthn.WebAuthnAuth fields, ABI-encoded flat: what SignerWebAuthn decodes. */
const webAuthnAuthParameters = [
  { name: 'r', type: 'bytes32' },
  { name: 's', type: 'bytes32' },
  { name: 'challengeIndex', type: 'uint256' },
  { name: 'typeIndex', type: 'uint256' },
  { name: 'authenticatorData', type: 'bytes' },
  { name: 'clientDataJSON', type: 'string' },
] as const;

type WebAuthnSignature = Awaited<ReturnType<WebAuthnAccount['sign']>>;

/** Encodes a WebAuthn assertion (viem's WebAuthnAccount.sign result) the way PasskeyAccount verifies it. */
export function encodeWebAuthnSignature({ signature, webauthn }: Pick<WebAuthnSignature, 'signature' | 'webauthn'>): Hex {
  return encodeAbiParameters(webAuthnAuthParameters, [
    slice(signature, 0, 32),
    slice(signature, 32, 64),
    BigInt(webauthn.challengeIndex ?? webauthn.clientDataJSON.indexOf('"challenge"')),
    BigInt(webauthn.typeIndex ?? webauthn.clientDataJSON.indexOf('"type"')),
    webauthn.authenticatorData,
    webauthn.clientDataJSON,
  ]);
}

/**
 * A well-formed assertion that fails verification, as long as a real one (37-byte authenticator data with UP and
 * UV, a browser-sized clientDataJSON), for gas estimation.
 */
const STUB_SIGNATURE: Hex = encodeWebAuthnSignature({
  signature: concat([toHex(1n, { size: 32 }), toHex(1n, { size: 32 })]),
  webauthn: {
    authenticatorData: concat([keccak256(stringToHex('localhost')), '0x05', '0x00000000']),
    clientDataJSON: `{"type":"webauthn.get","challenge":"${'A'.repeat(43)}","origin":"https://passkey.localhost:3000","crossOrigin":false}`,
    challengeIndex: 23,
    typeIndex: 1,
    userVerificationRequired: true,
  },
});

/**
 * Estimation with the stub signature stops at its challenge, before the curve arithmetic. With a P-256 precompile
 * (EIP-7951, as on anvil) that arithmetic is a few thousand gas; without one OpenZeppelin verifies in Solidity,
 * about 350,000 gas more (measured on anvil --hardfork prague). Keep at least this much verification gas.
 */
const MIN_VERIFICATION_GAS = 800_000n;

/** The passkey's public key as the two 32-byte coordinates (viem gives x ‖ y, with or without the 0x04 prefix). */
export function passkeyCoordinates(publicKey: Hex): { x: Hex; y: Hex } {
  const key = size(publicKey) === 65 ? slice(publicKey, 1) : publicKey;
  if (size(key) !== 64) throw new Error(`a P-256 public key is 64 bytes (x ‖ y), got ${size(publicKey)}`);
  return { x: slice(key, 0, 32), y: slice(key, 32, 64) };
}

export interface Call {
  to: Address;
  value?: bigint | undefined;
  data?: Hex | undefined;
}

/** PasskeyAccount calldata for `calls`: ERC-7821 `execute(batch mode, abi.encode(Execution[]))`. */
export function encodePasskeyAccountCalls(calls: readonly Call[]): Hex {
  const executions = calls.map((call) => ({ target: call.to, value: call.value ?? 0n, callData: call.data ?? '0x' }));
  return encodeFunctionData({
    abi: passkeyAccountAbi,
    functionName: 'execute',
    args: [ERC7821_BATCH_MODE, encodeAbiParameters(executionsParameter, [executions])],
  });
}

/** The calls of PasskeyAccount calldata made by encodePasskeyAccountCalls. */
export function decodePasskeyAccountCalls(data: Hex): Call[] {
  const { functionName, args } = decodeFunctionData({ abi: passkeyAccountAbi, data });
  if (functionName !== 'execute' || args[0] !== ERC7821_BATCH_MODE) throw new Error(`not a PasskeyAccount batch call (${functionName})`);
  const [executions] = decodeAbiParameters(executionsParameter, args[1]);
  return executions.map((e) => ({ to: e.target, value: e.value, data: e.callData }));
}

/**
 * The hash the passkey signs so that PasskeyAccount `account` on `chainId` accepts `hash` through ERC-1271:
 * ERC-7739's PersonalSign envelope, bound to that account and chain.
 */
export function passkeyAccountSignableHash(hash: Hash, account: Address, chainId: number): Hash {
  const domainSeparator = hashDomain({
    domain: { name: DOMAIN_NAME, version: DOMAIN_VERSION, chainId: BigInt(chainId), verifyingContract: account },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
    },
  });
  const structHash = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }], [PERSONAL_SIGN_TYPEHASH, hash]));
  return keccak256(concat(['0x1901', domainSeparator, structHash]));
}

/**
 * One nonce sequence (key 0), as an EOA has. viem's default takes a fresh key per UserOperation, and each new key
 * costs the EntryPoint a new storage slot (~17,000 gas more per UserOperation); pass `nonce` or a key explicitly
 * for operations that must not wait for each other.
 */
const SINGLE_NONCE_SEQUENCE: NonceManager = {
  consume: async () => 0,
  increment: () => undefined,
  get: async () => 0,
  reset: () => undefined,
};

type PasskeyAccountClient = Client<Transport, Chain | undefined, JsonRpcAccount | LocalAccount | undefined>;

export interface PasskeySmartAccountParameters {
  /** Reads the factory and the EntryPoint; its chain is the chain UserOperations and signatures are for. */
  client: PasskeyAccountClient;
  /** The passkey, e.g. viem's `toWebAuthnAccount({ credential })`. */
  owner: WebAuthnAccount;
  /** PasskeyAccountFactory's address. */
  factory: Address;
  /** Several accounts per passkey, one per salt (default 0). */
  salt?: bigint;
}

export type PasskeySmartAccountImplementation = SmartAccountImplementation<
  typeof entryPoint07Abi,
  '0.7',
  { abi: typeof passkeyAccountAbi; factory: { abi: typeof passkeyAccountFactoryAbi; address: Address }; owner: WebAuthnAccount; salt: bigint }
>;
/** viem's SmartAccount, with `sign({ hash })` (ERC-1271 signature of a hash) always there. */
export type PasskeySmartAccount = SmartAccount<PasskeySmartAccountImplementation> & {
  sign: NonNullable<SmartAccount<PasskeySmartAccountImplementation>['sign']>;
};

/**
 * A PasskeyAccount as a viem smart account (EntryPoint v0.7): its counterfactual address from the factory, the
 * factory call for its first UserOperation, batched calls, WebAuthn-signed UserOperations, and ERC-1271 signatures
 * (ERC-7739 envelopes; wrapped in ERC-6492 with the factory call while the account is not deployed).
 */
export async function toPasskeySmartAccount(parameters: PasskeySmartAccountParameters): Promise<PasskeySmartAccount> {
  const { client, owner, salt = 0n } = parameters;
  const { x, y } = passkeyCoordinates(owner.publicKey);
  const factory = { abi: passkeyAccountFactoryAbi, address: parameters.factory } as const;
  const entryPoint = { abi: entryPoint07Abi, address: entryPoint07Address, version: '0.7' } as const;
  const chainId = (): number => {
    if (!client.chain) throw new Error('toPasskeySmartAccount needs a client with a chain');
    return client.chain.id;
  };

  const address = await readContract(client, { ...factory, functionName: 'getAddress', args: [x, y, salt] });
  const passkeySign = async (hash: Hash): Promise<Hex> => encodeWebAuthnSignature(await owner.sign({ hash }));
  // ERC-1271 signature of a hash: the passkey signs the ERC-7739 PersonalSign envelope
  const signHash = (hash: Hash): Promise<Hex> => passkeySign(passkeyAccountSignableHash(hash, address, chainId()));

  const account = await toSmartAccount({
    client,
    entryPoint,
    nonceKeyManager: SINGLE_NONCE_SEQUENCE,
    extend: { abi: passkeyAccountAbi, factory, owner, salt },

    async getAddress() {
      return address;
    },

    async getFactoryArgs() {
      return { factory: factory.address, factoryData: encodeFunctionData({ ...factory, functionName: 'createAccount', args: [x, y, salt] }) };
    },

    async encodeCalls(calls) {
      return encodePasskeyAccountCalls(calls);
    },

    async decodeCalls(data) {
      return decodePasskeyAccountCalls(data);
    },

    async getNonce(options) {
      return readContract(client, { ...entryPoint, functionName: 'getNonce', args: [address, options?.key ?? 0n] });
    },

    async getStubSignature() {
      return STUB_SIGNATURE;
    },

    async signUserOperation(userOperation) {
      const { chainId: opChainId = chainId(), ...op } = userOperation;
      const hash = getUserOperationHash({
        chainId: opChainId,
        entryPointAddress: entryPoint.address,
        entryPointVersion: entryPoint.version,
        userOperation: { ...(op as UserOperation<'0.7'>), sender: address },
      });
      return passkeySign(hash);
    },

    async sign({ hash }) {
      return signHash(hash);
    },

    async signMessage({ message }) {
      // PersonalSign(bytes prefixed) hashes `prefixed` to the EIP-191 hash of the message
      return signHash(hashMessage(message));
    },

    async signTypedData(typedData) {
      const definition = typedData as TypedDataDefinition<TypedData, string>;
      const nested = hashNestedTypedData({
        ...definition,
        verifierDomain: { name: DOMAIN_NAME, version: DOMAIN_VERSION, chainId: chainId(), verifyingContract: address, salt: zeroHash },
      });
      return wrapTypedDataSignature({ ...definition, signature: await passkeySign(nested) });
    },

    userOperation: {
      async estimateGas(userOperation) {
        const estimated = userOperation.verificationGasLimit ?? 0n;
        return { verificationGasLimit: estimated > MIN_VERIFICATION_GAS ? estimated : MIN_VERIFICATION_GAS };
      },
    },
  });
  return account as PasskeySmartAccount;
}
