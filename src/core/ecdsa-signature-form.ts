// The one accepted encoding of a 65-byte secp256k1 signature (r ‖ s ‖ v): low s (s ≤ n/2, as EIP-2 requires of
// transactions) and v as 27 or 28. ECDSA recovery alone accepts four encodings of one signature (v as 0/1 or
// 27/28, and s or n − s with the other recovery id); refusing all but one leaves a signer a single text per
// signature. 27/28 is what personal_sign and viem's and ethers' signMessage produce, so honest clients never
// meet this rule. Shared by the service's verifier and the client SDK's requireAgent.
import type { Hex } from 'viem';

/** The order of secp256k1's group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N / 2n;

/**
 * Why a 65-byte hex signature (0x + 130 digits) is not in its canonical form, or undefined when it is. r and s
 * out of range are left to recovery, which refuses them.
 */
export function nonCanonicalEcdsa(signature: Hex): string | undefined {
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if (v !== 0 && v !== 1 && v !== 27 && v !== 28) return `Invalid signature: v is ${v}; it must be 27 or 28`;
  const problems: string[] = [];
  if (v < 27) problems.push(`v is ${v} (send 27 or 28: the recovery id + 27)`);
  if (BigInt(`0x${signature.slice(66, 130)}`) > HALF_N) problems.push('s is above n/2 (send the low-s form: n - s, with the other v)');
  if (problems.length === 0) return undefined;
  return `Non-canonical signature: ${problems.join(' and ')}; personal_sign and viem/ethers signMessage produce the canonical form`;
}
