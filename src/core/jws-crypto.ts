// JWS signatures (RFC 7515) with node:crypto, for the SD-JWT library's signer and verifier callbacks: EdDSA
// (Ed25519), ES256 (P-256) and ES256K (secp256k1, RFC 8812; jose does not support it). ECDSA signatures are the raw
// r ‖ s JWS uses (IEEE P1363), not DER. One KeyObject per key, made once: an import costs more than a verification.
import { createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

export type JwsAlg = 'EdDSA' | 'ES256' | 'ES256K';

const DIGEST: Record<JwsAlg, string | null> = { EdDSA: null, ES256: 'sha256', ES256K: 'sha256' };

/** The alg a public JWK verifies, by its curve; undefined for a key of another kind. */
export function jwsAlgOfJwk(jwk: { kty?: unknown; crv?: unknown }): JwsAlg | undefined {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'EC' && jwk.crv === 'secp256k1') return 'ES256K';
  return undefined;
}

/** A public JWK (its public members only are read) as a KeyObject. */
export function publicKeyOfJwk(jwk: { kty: string; crv: string; x: string; y?: string }): KeyObject {
  const members = jwk.kty === 'EC' ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  return createPublicKey({ key: members, format: 'jwk' });
}

/** The base64url JWS signature of `signingInput` (header.payload). */
export function jwsSign(alg: JwsAlg, privateKey: KeyObject, signingInput: string): string {
  return sign(DIGEST[alg], Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
}

/** Whether `signature` (base64url) is `publicKey`'s JWS signature of `signingInput`; false for anything malformed. */
export function jwsVerify(alg: JwsAlg, publicKey: KeyObject, signingInput: string, signature: string): boolean {
  try {
    return verify(DIGEST[alg], Buffer.from(signingInput), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** The protected header of a compact JWS's signing input, or undefined when it is not a JSON object. */
export function jwsHeaderOf(signingInput: string): Record<string, unknown> | undefined {
  const dot = signingInput.indexOf('.');
  try {
    const header: unknown = JSON.parse(Buffer.from(dot < 0 ? signingInput : signingInput.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
