// Ed25519 signature checks with libsodium, through `sodium-native`'s prebuilt binding: about 43 µs per check on a
// 2-core EPYC, against 76-101 µs for OpenSSL through node:crypto and about 1.1 ms for noble's JavaScript. A verifier
// of EdDSA presentations and Ed25519-signed requests spends most of its time here.
//
// libsodium's check is strict: S below the group order, the key and R canonical encodings, small-order keys and R
// refused, and the cofactorless equation on the encoded R. Every signature it accepts is therefore accepted by the
// cofactored RFC 8032 check with strict encodings (noble's zip215: false, the registry's on-chain verifier) and by
// OpenSSL; an honest signer's signature passes all of them. It is the stricter of the two only for keys with a
// small-order component (A = aB + T, which no key generation makes: the registry takes them), whose signatures the
// cofactorless equation mostly refuses. Where the binding cannot load (a platform without a prebuild), `libsodium`
// is undefined and callers keep their own check.
import { createRequire } from 'node:module';

export type Sodium = typeof import('sodium-native');

/** The binding, or undefined where it cannot load (a require, so that a failed load can be caught). */
export const libsodium: Sodium | undefined = (() => {
  const require = createRequire(import.meta.url);
  try {
    return require('sodium-native') as Sodium;
  } catch {
    return undefined;
  }
})();

/**
 * Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) Ed25519 signature of `message`, checked by `sodium`;
 * false for any other length, where the binding would throw or, for a longer signature, read only its first 64 bytes.
 */
export function libsodiumVerifies(sodium: Sodium, signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  return sodium.crypto_sign_verify_detached(asBuffer(signature), asBuffer(message), asBuffer(publicKey));
}

/** The binding's types ask for Buffers; any Uint8Array works, so a view is made without a copy. */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
