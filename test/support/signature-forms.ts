// What an attacker makes of a signature it has seen, without the key: the other encodings ECDSA recovery accepts
// (v as a 0/1 recovery id, and the high-s twin s' = n - s with the other recovery id, in either v form), and
// Ed25519's S + L. And what the key's holder can make: another valid signature of the same message (a fresh
// nonce), which a replay guard keyed on the signature's bytes would take for a new request.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { type Hex, hashMessage, hexToBytes } from 'viem';
import { SECP256K1_N } from '../../src/core/ecdsa-signature-form.js';
import { AGENT_HEADERS } from '../../src/core/signed-request.js';

export const MALLEATED_FORMS = ['v as 0/1', 'high s (v flipped)', 'high s (v flipped, as 0/1)'] as const;
export type MalleatedForm = (typeof MALLEATED_FORMS)[number];

const word = (n: bigint): string => n.toString(16).padStart(64, '0');
const byte = (n: number): string => n.toString(16).padStart(2, '0');

/** `form` of a canonical 65-byte signature (r ‖ s ‖ v, v 27/28): every one recovers the same signer. */
export function malleate(signature: Hex, form: MalleatedForm): Hex {
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const flipped = v === 27 ? 28 : 27;
  switch (form) {
    case 'v as 0/1':
      return `0x${r}${word(s)}${byte(v - 27)}`;
    case 'high s (v flipped)':
      return `0x${r}${word(SECP256K1_N - s)}${byte(flipped)}`;
    case 'high s (v flipped, as 0/1)':
      return `0x${r}${word(SECP256K1_N - s)}${byte(flipped - 27)}`;
  }
}

/** Another canonical personal_sign signature of the 32-byte `message` by `privateKey`: a fresh random nonce. */
export function resign(privateKey: Hex, message: Hex): Hex {
  const bytes = secp256k1.sign(hexToBytes(hashMessage({ raw: message })), hexToBytes(privateKey), {
    prehash: false,
    extraEntropy: true,
    format: 'recovered',
  });
  const signature = secp256k1.Signature.fromBytes(bytes, 'recovered');
  return `0x${word(signature.r)}${word(signature.s)}${byte(27 + (signature.recovery ?? 0))}`;
}

/** The order of Ed25519's base point. */
const ED25519_L = 2n ** 252n + 27742317777372353535851777723790477n;

/** An Ed25519 signature (R ‖ S, S little-endian) with S + L in place of S: what a non-strict verifier accepts. */
export function ed25519PlusL(signature: Hex): Hex {
  const sBytes = hexToBytes(signature).subarray(32);
  const s = BigInt(`0x${Buffer.from(sBytes).reverse().toString('hex')}`) + ED25519_L;
  const encoded = Buffer.from(word(s), 'hex').reverse().toString('hex');
  return `${signature.slice(0, 66)}${encoded}` as Hex;
}

/** `headers` with another signature in place of theirs. */
export const withSignature = (headers: Record<string, string>, signature: Hex): Record<string, string> => ({
  ...headers,
  [AGENT_HEADERS.signature]: signature,
});
