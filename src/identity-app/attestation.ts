// The attester's side of LocalIdentityHub: the EIP-712 attestation over a disclosure and the proof bytes
// the hub decodes. Must mirror LocalIdentityHub.sol exactly (see the comment at the top of that file).
import {
  type Address,
  concat,
  encodeAbiParameters,
  type Hex,
  keccak256,
  type LocalAccount,
  numberToHex,
  pad,
  sha256,
  slice,
  type TypedDataDefinition,
} from 'viem';
import { userDefinedDataBytes } from '../core/user-data.js';
import { type GenericDiscloseOutputV2, genericDiscloseOutputV2AbiType } from './disclosure-output.js';

export const ATTESTATION_DOMAIN_NAME = 'LocalIdentityHub';
export const ATTESTATION_DOMAIN_VERSION = '1';

export const documentAttestationTypes = {
  DocumentAttestation: [
    { name: 'scope', type: 'uint256' },
    { name: 'attestationId', type: 'bytes32' },
    { name: 'userContextHash', type: 'bytes32' },
    { name: 'outputHash', type: 'bytes32' },
    { name: 'mockDocument', type: 'bool' },
    { name: 'currentDate', type: 'uint256' },
  ],
} as const;

/** destChainId (32) || userIdentifier (32) || UTF-8 userDefinedData: what the Self SDK packs. */
export function userContextData(args: { destChainId: number | bigint; userId: Address | bigint; userDefinedData: string }): Hex {
  const userId = typeof args.userId === 'bigint' ? numberToHex(args.userId, { size: 32 }) : pad(args.userId, { size: 32 });
  return concat([numberToHex(BigInt(args.destChainId), { size: 32 }), userId, userDefinedDataBytes(args.userDefinedData)]);
}

/** The hub's proofPayload: attestationId (32) || proof. */
export function proofPayload(attestationId: Hex, proof: Hex): Hex {
  return concat([pad(attestationId, { size: 32 }), proof]);
}

export interface AttestationInput {
  hub: Address;
  chainId: number;
  scope: bigint;
  attestationId: Hex;
  /** destChainId || userIdentifier || userDefinedData (the hub hashes its input minus the configId). */
  userContextData: Hex;
  /** The output as the hub will deliver it: attestationId and userIdentifier equal to the header/context. */
  output: GenericDiscloseOutputV2;
  mockDocument: boolean;
  /** Unix seconds. */
  currentDate: bigint;
}

export function encodeDiscloseOutput(output: GenericDiscloseOutputV2): Hex {
  return encodeAbiParameters([genericDiscloseOutputV2AbiType], [output]);
}

/** The typed data an attester signs; hashTypedData of it equals the hub's attestationDigest(...). */
export function attestationTypedData(input: AttestationInput): TypedDataDefinition<typeof documentAttestationTypes, 'DocumentAttestation'> {
  return {
    domain: {
      name: ATTESTATION_DOMAIN_NAME,
      version: ATTESTATION_DOMAIN_VERSION,
      chainId: input.chainId,
      verifyingContract: input.hub,
    },
    types: documentAttestationTypes,
    primaryType: 'DocumentAttestation',
    message: {
      scope: input.scope,
      attestationId: input.attestationId,
      userContextHash: sha256(input.userContextData),
      outputHash: keccak256(encodeDiscloseOutput(input.output)),
      mockDocument: input.mockDocument,
      currentDate: input.currentDate,
    },
  };
}

/** abi.encode(bool mockDocument, uint256 currentDate, GenericDiscloseOutputV2 output, bytes signature). */
export function encodeAttestedProof(args: { mockDocument: boolean; currentDate: bigint; output: GenericDiscloseOutputV2; signature: Hex }): Hex {
  return encodeAbiParameters(
    [{ type: 'bool' }, { type: 'uint256' }, genericDiscloseOutputV2AbiType, { type: 'bytes' }],
    [args.mockDocument, args.currentDate, args.output, args.signature],
  );
}

/** Signs the disclosure as the attester and returns the proof bytes for proofPayload. */
export async function attestDisclosure(attester: LocalAccount, input: AttestationInput): Promise<Hex> {
  if (input.output.attestationId.toLowerCase() !== pad(input.attestationId, { size: 32 }).toLowerCase()) {
    throw new Error('output.attestationId must equal the header attestationId');
  }
  const userIdentifier = BigInt(slice(input.userContextData, 32, 64));
  if (input.output.userIdentifier !== userIdentifier) throw new Error('output.userIdentifier must equal the context userId');
  const signature = await attester.signTypedData(attestationTypedData(input));
  return encodeAttestedProof({ mockDocument: input.mockDocument, currentDate: input.currentDate, output: input.output, signature });
}
