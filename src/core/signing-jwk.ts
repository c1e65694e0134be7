// The service's own signing key as JSON Web Keys (RFC 7517): the private JWK that SIGNING_KEY and the key file under
// DATA_DIR hold, checked whole (a curve the service signs with, a private part, a public part that is the private
// part's), and the public JWK a JWKS lists with its kid, alg and use. The kid is the key's RFC 7638 thumbprint unless
// the key came with one of its own.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';

/** The JWS algorithms of the service's keys: Ed25519 (the default) or P-256. */
export const SIGNING_ALGS = ['EdDSA', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** The public members of a key of each curve, with the JWS alg it signs with. */
export type SigningCurveMembers =
  | { kty: 'OKP'; crv: 'Ed25519'; x: string; alg: 'EdDSA' }
  | { kty: 'EC'; crv: 'P-256'; x: string; y: string; alg: 'ES256' };

/** What a JWKS lists of a key. */
export type PublicSigningJwk = SigningCurveMembers & { kid: string; use: 'sig' };
/** The private key with its kid and alg: what the key file holds, and what SIGNING_KEY may be set to. */
export type PrivateSigningJwk = SigningCurveMembers & { kid: string; d: string };
/** A private key as given: without a kid, its thumbprint is its kid. */
export type SigningJwkInput = SigningCurveMembers & { kid?: string; d: string };

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const KID = /^[\x21-\x7e]{1,256}$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `value` (a parsed JSON value) as a private signing JWK, with only the members the service uses; throws an Error
 * that says what is wrong, never what the key holds.
 */
export function parseSigningJwk(value: unknown): SigningJwkInput {
  if (!isRecord(value)) throw new Error('must be a private JWK: a JSON object');
  const alg: SigningAlg | undefined =
    value.kty === 'OKP' && value.crv === 'Ed25519' ? 'EdDSA' : value.kty === 'EC' && value.crv === 'P-256' ? 'ES256' : undefined;
  if (alg === undefined) throw new Error('must be an Ed25519 (kty OKP, crv Ed25519) or P-256 (kty EC, crv P-256) JWK');
  if (value.alg !== undefined && value.alg !== alg) throw new Error(`has alg ${JSON.stringify(value.alg)}, but ${value.crv} keys sign with ${alg}`);
  if (value.kid !== undefined && (typeof value.kid !== 'string' || !KID.test(value.kid))) {
    throw new Error('has a kid that is not 1 to 256 visible ASCII characters');
  }
  const members = alg === 'ES256' ? (['x', 'y', 'd'] as const) : (['x', 'd'] as const);
  for (const member of members) {
    const part = value[member];
    if (typeof part !== 'string' || !BASE64URL.test(part)) {
      throw new Error(member === 'd' ? 'holds no private part (d): it must be the private key' : `has no base64url "${member}"`);
    }
  }
  const curve: SigningCurveMembers =
    alg === 'ES256'
      ? { kty: 'EC', crv: 'P-256', x: value.x as string, y: value.y as string, alg }
      : { kty: 'OKP', crv: 'Ed25519', x: value.x as string, alg };
  const jwk: SigningJwkInput = { ...curve, d: value.d as string, ...(value.kid !== undefined ? { kid: value.kid as string } : {}) };
  checkKeyPair(jwk);
  return jwk;
}

/** What the key pair check signs. */
const KEY_CHECK = new TextEncoder().encode('signing key pair check');

/**
 * The public part must be the private part's: a key that signs what its own JWKS entry cannot verify is refused. A
 * signature by the private part is checked with the public one (a P-256 import keeps the x and y it is given).
 */
function checkKeyPair(jwk: SigningJwkInput): void {
  const digest = jwk.alg === 'ES256' ? 'sha256' : null;
  let matches: boolean;
  try {
    const privateKey = createPrivateKey({ key: { ...publicMembers(jwk), d: jwk.d }, format: 'jwk' });
    const publicKey = createPublicKey({ key: publicMembers(jwk), format: 'jwk' });
    matches = verify(digest, KEY_CHECK, publicKey, sign(digest, KEY_CHECK, privateKey));
  } catch {
    throw new Error(`is not a valid ${jwk.crv} private key`);
  }
  if (!matches) throw new Error("has a public part (x, y) that is not its private part's (d)");
}

/** The members RFC 7638 hashes (and a JWK import reads): kty, crv, x and, for P-256, y. */
const publicMembers = (jwk: SigningCurveMembers): { kty: string; crv: string; x: string; y?: string } =>
  jwk.kty === 'EC' ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: jwk.kty, crv: jwk.crv, x: jwk.x };

/** The key with its kid: the one it came with, else its RFC 7638 thumbprint (SHA-256, base64url). */
export async function withKid(jwk: SigningJwkInput): Promise<PrivateSigningJwk> {
  if (jwk.kid !== undefined) return { ...jwk, kid: jwk.kid };
  return { ...jwk, kid: await calculateJwkThumbprint(publicMembers(jwk), 'sha256') };
}

/** What a JWKS lists of the key: the public members, kid, alg and use "sig". */
export const publicSigningJwk = (jwk: PrivateSigningJwk): PublicSigningJwk =>
  jwk.kty === 'EC'
    ? { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, alg: 'ES256', kid: jwk.kid, use: 'sig' }
    : { kty: 'OKP', crv: 'Ed25519', x: jwk.x, alg: 'EdDSA', kid: jwk.kid, use: 'sig' };
