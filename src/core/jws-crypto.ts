// JWS signatures (RFC 7515) with node:crypto, for the SD-JWT library's signer and verifier callbacks: EdDSA
// (Ed25519), ES256 (P-256) and ES256K (secp256k1, RFC 8812; jose does not support it). ECDSA signatures are the raw
// r ‖ s JWS uses (IEEE P1363), not DER. One KeyObject per key, made once: an import costs more than a verification.
// ES256K is verified with libsecp256k1 (the `secp256k1` package's binding), several times faster than OpenSSL's
// generic curve code for that curve, and EdDSA with libsodium where its binding loads (ed25519-libsodium.ts).
import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import secp256k1 from 'secp256k1';
import { isEd25519PublicKey } from './ed25519-key.js';
import { libsodium, libsodiumVerifies, type Sodium } from './ed25519-libsodium.js';

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

/** A public JWK as the members a verifier reads. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
}

/** Checks JWS signatures (base64url) over signing inputs with one public key. */
export type JwsVerifier = (signingInput: string, signature: string) => boolean;

/**
 * A verifier for `jwk`'s signatures, its key imported once (undefined for a key of another kind or a malformed one):
 * build it once per key and call it for every signature. EdDSA is checked by `sodium` (the loaded libsodium binding
 * by default), or by OpenSSL when it is null.
 */
export function jwsVerifierOf(jwk: PublicJwk, sodium: Sodium | null = libsodium ?? null): { alg: JwsAlg; verify: JwsVerifier } | undefined {
  const alg = jwsAlgOfJwk(jwk);
  // a JWK from a fetched JWKS or a credential's cnf is whatever JSON it was
  if (alg === undefined || typeof jwk.x !== 'string' || (jwk.y !== undefined && typeof jwk.y !== 'string')) return undefined;
  const verifier = keyVerifier(alg, jwk, sodium);
  if (verifier === undefined) return undefined;
  // one text per signature: Buffer's base64url decoding skips what is not of its alphabet, and takes padding
  return { alg, verify: (signingInput, signature) => SIGNATURE_TEXT.test(signature) && verifier(signingInput, signature) };
}

/** Every alg here signs 64 bytes (Ed25519's R ‖ S, ECDSA's r ‖ s): 86 base64url characters, unpadded. */
const SIGNATURE_TEXT = /^[A-Za-z0-9_-]{86}$/;

function keyVerifier(alg: JwsAlg, jwk: PublicJwk, sodium: Sodium | null): JwsVerifier | undefined {
  if (alg === 'ES256K') {
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y ?? '', 'base64url')]);
    if (point.length !== 65 || !secp256k1.publicKeyVerify(point)) return undefined;
    return (signingInput, signature) => es256kVerifies(point, signingInput, signature);
  }
  if (alg === 'EdDSA' && sodium) {
    const point = Buffer.from(jwk.x, 'base64url');
    // a key that is no point of the prime-order group is refused here, as below without libsodium, not at each check
    if (point.length !== 32 || !sodium.crypto_core_ed25519_is_valid_point(point)) return undefined;
    return (signingInput, signature) => libsodiumVerifies(sodium, Buffer.from(signature, 'base64url'), Buffer.from(signingInput), point);
  }
  // OpenSSL takes any point: a small-order key "signs" every message (R the identity, S = 0 passes for the identity
  // key), so without libsodium, which refuses such keys itself, the key is checked here (once per key)
  if (alg === 'EdDSA' && !isEd25519PublicKey(Buffer.from(jwk.x, 'base64url'))) return undefined;
  let key: KeyObject;
  try {
    key = publicKeyOfJwk(jwk);
  } catch {
    return undefined;
  }
  return (signingInput, signature) => jwsVerify(alg, key, signingInput, signature);
}

/** ES256K over SHA-256, either form of s (RFC 8812 does not ask for low s: libsecp256k1 does, so s is normalized first). */
function es256kVerifies(point: Uint8Array, signingInput: string, signature: string): boolean {
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.length !== 64) return false;
  try {
    const digest = createHash('sha256').update(signingInput).digest();
    return secp256k1.ecdsaVerify(secp256k1.signatureNormalize(new Uint8Array(bytes)), digest, point);
  } catch {
    return false; // r or s not below the group order
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
