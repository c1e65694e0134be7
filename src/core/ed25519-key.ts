// Ed25519 agent keys as the registry sees them: the owner address derived from the raw public key, and the
// five-value "extKpub" that the on-chain verifier (SCL's Weierstrass form of curve25519) needs, computed with
// plain bigint field arithmetic (onchain-facts 8, reference-service-facts 4.5).
import { ed25519 } from '@noble/curves/ed25519.js';
import { type Address, bytesToHex, getAddress, type Hex, hexToBytes, isHex, keccak256, slice } from 'viem';
import { libsodium, libsodiumVerifies } from './ed25519-libsodium.js';

/** A 32-byte compressed Edwards25519 public key: bytes, 0x-hex, or 64 bare hex chars (as in userData). */
export type Ed25519PublicKey = Uint8Array | string;

export type ExtKpub = readonly [bigint, bigint, bigint, bigint, bigint];

const P = 2n ** 255n - 19n;
/** Edwards d = -121665/121666 mod p. */
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
/** sqrt(-1) mod p = 2^((p-1)/4). */
const SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752n;
/** Edwards -> Weierstrass shift (A/3 for Montgomery A = 486662) and scale sqrt(-(A+2)), from SCL_wei25519. */
const WEI_DELTA = 0x2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaad2451n;
const WEI_C = 0x70d9120b9f5ff9442d84f723fc03b0813a5e2c2eb482e57d3391fb5500ba81e7n;
/** Wei25519 coefficient a. */
export const WEI25519_A = 19298681539552699237261830834781317975544997444273427339909597334573241639236n;

const mod = (a: bigint): bigint => {
  const r = a % P;
  return r >= 0n ? r : r + P;
};

function pow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

const inv = (a: bigint): bigint => {
  if (mod(a) === 0n) throw new Error('ed25519: inverse of zero');
  return pow(a, P - 2n);
};

/** The 32 key bytes; throws on anything that is not exactly 32 bytes of hex or binary. */
export function ed25519PublicKeyBytes(pubkey: Ed25519PublicKey): Uint8Array {
  if (pubkey instanceof Uint8Array) {
    if (pubkey.length !== 32) throw new Error('ed25519 public key must be 32 bytes');
    return pubkey;
  }
  const prefixed = pubkey.startsWith('0x') || pubkey.startsWith('0X') ? `0x${pubkey.slice(2)}` : `0x${pubkey}`;
  if (!isHex(prefixed, { strict: true }) || prefixed.length !== 66) {
    throw new Error('ed25519 public key must be 64 hex characters');
  }
  return hexToBytes(prefixed);
}

/** Lowercase 0x-hex of the key; the registry's agentKey for Ed25519 agents is this value as bytes32. */
export function ed25519PublicKeyHex(pubkey: Ed25519PublicKey): Hex {
  return bytesToHex(ed25519PublicKeyBytes(pubkey));
}

/** Decompresses a key per RFC 8032 5.1.3; null when it is not a point on the curve. */
export function decodeEd25519Point(pubkey: Ed25519PublicKey): { x: bigint; y: bigint } | null {
  const bytes = ed25519PublicKeyBytes(pubkey);
  let le = 0n;
  for (let i = 31; i >= 0; i--) le = (le << 8n) | BigInt(bytes[i] ?? 0);
  const sign = le >> 255n;
  const y = le & ((1n << 255n) - 1n);
  if (y >= P) return null;
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  const x2 = mod(u * inv(v));
  let x = pow(x2, (P + 3n) / 8n);
  if (mod(x * x) !== x2) x = mod(x * SQRT_M1);
  if (mod(x * x) !== x2) return null;
  if (x === 0n && sign === 1n) return null;
  if ((x & 1n) !== sign) x = P - x;
  return { x, y };
}

/** Affine doubling on -x^2 + y^2 = 1 + d x^2 y^2 (complete: no exceptional points on the curve). */
function edwardsDouble(x: bigint, y: bigint): [bigint, bigint] {
  const xx = mod(x * x);
  const yy = mod(y * y);
  return [mod(2n * x * y * inv(yy - xx)), mod((yy + xx) * inv(2n + xx - yy))];
}

/** Whether [8]P is the identity: P is one of the 8 points of the torsion subgroup. */
function hasSmallOrder(point: { x: bigint; y: bigint }): boolean {
  let [x, y] = [point.x, point.y];
  for (let i = 0; i < 3; i++) [x, y] = edwardsDouble(x, y);
  return x === 0n && y === 1n;
}

/** What isEd25519PublicKey demands, said to a caller whose key it refused. */
export const ED25519_PUBLIC_KEY_RULE =
  'must be a 64-hex-character Ed25519 public key: the canonical encoding of a curve point that is not of small order (the registry refuses other keys)';

/**
 * A key is usable when it is what the registry's verifier accepts (strict RFC 8032, as noble's zip215: false): the
 * canonical encoding (y < p, no negative zero) of a curve point that does not have small order. A small-order key
 * verifies signatures its holder never made, and the registry refuses it, so it is refused before any challenge.
 */
export function isEd25519PublicKey(pubkey: Ed25519PublicKey): boolean {
  try {
    const point = decodeEd25519Point(pubkey);
    return point !== null && !hasSmallOrder(point);
  } catch {
    return false;
  }
}

/** The agent's owner address: the last 20 bytes of keccak256(pubkey), checksummed. */
export function ed25519AgentAddress(pubkey: Ed25519PublicKey): Address {
  return getAddress(slice(keccak256(ed25519PublicKeyBytes(pubkey)), 12));
}

/** Affine doubling on y^2 = x^3 + a*x + b. */
function weierstrassDouble(x: bigint, y: bigint): [bigint, bigint] {
  const lambda = mod((3n * x * x + WEI25519_A) * inv(2n * y));
  const x2 = mod(lambda * lambda - 2n * x);
  return [x2, mod(lambda * (x - x2) - y)];
}

/**
 * [Wx, Wy, Wx128, Wy128, compressedLE]: the key as a Wei25519 point, that point times 2^128, and the
 * compressed key read big-endian (equal to the pubkey bytes as a uint256 for a canonical key).
 */
export function ed25519ExtKpub(pubkey: Ed25519PublicKey): ExtKpub {
  const point = decodeEd25519Point(pubkey);
  if (!point) throw new Error('ed25519 public key is not a point on the curve');
  const { x, y } = point;
  // The identity and the 2-torsion points have no affine Weierstrass image; they are never honest keys.
  if (y === 1n || x === 0n) throw new Error('ed25519 public key is a small-order point');
  const wx = mod((1n + y) * inv(1n - y) + WEI_DELTA);
  const wy = mod(WEI_C * (1n + y) * inv(mod((1n - y) * x)));
  let [qx, qy] = [wx, wy];
  for (let i = 0; i < 128; i++) [qx, qy] = weierstrassDouble(qx, qy);
  const compressed = y + ((x & 1n) << 255n);
  let compressedLE = 0n;
  for (let i = 0; i < 32; i++) compressedLE = (compressedLE << 8n) | ((compressed >> BigInt(8 * i)) & 0xffn);
  return [wx, wy, qx, qy, compressedLE];
}

/**
 * Strict RFC 8032 verification: S must be below the group order and R and the key canonical encodings, small-order
 * keys are refused, so no second text of a signature verifies. libsodium checks it where its binding loads (25 times
 * faster, and it accepts nothing the registry's own verifier refuses, though it refuses most signatures of a key with
 * a small-order component, which that verifier takes: ed25519-libsodium.ts), noble otherwise. Malformed input is false.
 */
export function ed25519Verifies(signature: Uint8Array, message: Uint8Array, key: Ed25519PublicKey): boolean {
  try {
    const publicKey = ed25519PublicKeyBytes(key);
    return libsodium ? libsodiumVerifies(libsodium, signature, message, publicKey) : nobleVerifies(signature, message, publicKey);
  } catch {
    return false;
  }
}

/** The strict check in JavaScript (noble, zip215: false): where libsodium cannot load, and the reference in tests. */
export function nobleVerifies(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
