// Ed25519 checks by libsodium against the two it replaces: noble's strict check (the registry's on-chain semantics,
// what signed requests used) and OpenSSL through node:crypto (what JWS verification used). Signatures are made by
// OpenSSL, an implementation other than both checkers'. libsodium must accept every honest signature and nothing the
// strict check refuses.
import { generateKeyPairSync, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519Verifies, nobleVerifies } from '../../src/core/ed25519-key.js';
import { libsodium, libsodiumVerifies } from '../../src/core/ed25519-libsodium.js';
import { jwsSign, jwsVerifierOf } from '../../src/core/jws-crypto.js';

/** The group order L, little-endian in a signature's S. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const rawPublicKey = (key: KeyObject): Buffer => Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url');
const opensslVerifies = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean => {
  try {
    const key = { key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' } as const;
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
};
const littleEndian = (bytes: Uint8Array): bigint => bytes.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
const toLittleEndian = (value: bigint): Buffer => Buffer.from(Array.from({ length: 32 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn)));

describe('Ed25519 checks by libsodium', () => {
  const sodium = libsodium;
  if (!sodium) throw new Error('sodium-native did not load: its linux-x64 prebuild is expected on this machine');
  const pairs = Array.from({ length: 40 }, () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    return { privateKey, publicKey: rawPublicKey(publicKey) };
  });

  it('accepts every honest signature, as noble and OpenSSL do, and refuses it for another message or key', () => {
    for (const [i, { privateKey, publicKey }] of pairs.entries()) {
      const message = randomBytes(i * 7);
      const signature = sign(null, message, privateKey);
      for (const check of [libsodiumVerifies.bind(null, sodium), nobleVerifies, opensslVerifies, ed25519Verifies]) {
        expect(check(signature, message, publicKey)).toBe(true);
        expect(check(signature, Buffer.concat([message, Buffer.from([0])]), publicKey)).toBe(false);
        expect(check(signature, message, pairs[(i + 1) % pairs.length]!.publicKey)).toBe(false);
      }
    }
  });

  it('refuses every single-bit change of a signature, as the strict check does', () => {
    const { privateKey, publicKey } = pairs[0]!;
    const message = Buffer.from('a signing input');
    const signature = sign(null, message, privateKey);
    for (let bit = 0; bit < 512; bit++) {
      const changed = Buffer.from(signature);
      changed[bit >> 3]! ^= 1 << (bit & 7);
      expect(libsodiumVerifies(sodium, changed, message, publicKey), `bit ${bit}`).toBe(false);
      expect(nobleVerifies(changed, message, publicKey), `bit ${bit}`).toBe(false);
    }
  });

  it('refuses the second text of a signature (S + L), small-order keys and R, and wrong lengths, without throwing', () => {
    const { privateKey, publicKey } = pairs[1]!;
    const message = Buffer.from('pay 10');
    const signature = sign(null, message, privateKey);
    const malleated = Buffer.concat([signature.subarray(0, 32), toLittleEndian(littleEndian(signature.subarray(32)) + L)]);
    expect(libsodiumVerifies(sodium, malleated, message, publicKey)).toBe(false);
    expect(nobleVerifies(malleated, message, publicKey)).toBe(false);

    // the identity as key and as R, S = 0: [0]B = R + [h]A holds for every message under the plain equation
    const identity = toLittleEndian(1n);
    const forged = Buffer.concat([identity, Buffer.alloc(32)]);
    expect(libsodiumVerifies(sodium, forged, message, identity)).toBe(false);
    expect(nobleVerifies(forged, message, identity)).toBe(false);
    expect(ed25519Verifies(forged, message, identity)).toBe(false);

    expect(libsodiumVerifies(sodium, signature.subarray(0, 63), message, publicKey)).toBe(false);
    expect(libsodiumVerifies(sodium, Buffer.concat([signature, Buffer.from([0])]), message, publicKey)).toBe(false);
    expect(libsodiumVerifies(sodium, signature, message, publicKey.subarray(0, 31))).toBe(false);
    expect(ed25519Verifies(signature, message, '0x1234')).toBe(false);
  });

  it('agrees with noble on random signatures and keys: every one refused', () => {
    for (let i = 0; i < 200; i++) {
      const [signature, message, publicKey] = [randomBytes(64), randomBytes(32), i % 2 ? randomBytes(32) : pairs[i % pairs.length]!.publicKey];
      expect(libsodiumVerifies(sodium, signature, message, publicKey)).toBe(nobleVerifies(signature, message, publicKey));
    }
  });

  it('checks EdDSA JWS signatures for a JWK, from views into larger buffers too', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
    const verifier = jwsVerifierOf(jwk);
    expect(verifier?.alg).toBe('EdDSA');
    const input = `${Buffer.from('{"alg":"EdDSA"}').toString('base64url')}.${Buffer.from('{"n":1}').toString('base64url')}`;
    const signature = jwsSign('EdDSA', privateKey, input);
    expect(verifier?.verify(input, signature)).toBe(true);
    expect(verifier?.verify(`${input}x`, signature)).toBe(false);
    expect(verifier?.verify(input, `${signature}AA`)).toBe(false);
    expect(verifier?.verify(input, 'not base64url!')).toBe(false);
    expect(jwsVerifierOf({ ...jwk, x: jwk.x.slice(0, 20) })).toBeUndefined();

    // OpenSSL, where libsodium cannot load: the same answers, and the small-order key refused before it is used
    const openssl = jwsVerifierOf(jwk, null);
    expect(openssl?.verify(input, signature)).toBe(true);
    expect(openssl?.verify(`${input}x`, signature)).toBe(false);
    const identity = { kty: 'OKP', crv: 'Ed25519', x: toLittleEndian(1n).toString('base64url') };
    const forgery = Buffer.concat([toLittleEndian(1n), Buffer.alloc(32)]).toString('base64url');
    expect(opensslVerifies(Buffer.from(forgery, 'base64url'), Buffer.from(input), toLittleEndian(1n))).toBe(true);
    expect(jwsVerifierOf(identity, null)).toBeUndefined();
    expect(jwsVerifierOf(identity)).toBeUndefined();

    // one text per signature (Buffer's decoder would skip spaces and foreign characters and take padding), and a JWK
    // from the network that is not what it says is no key, whichever library checks
    for (const sodiumOrNot of [sodium, null]) {
      const checker = jwsVerifierOf(jwk, sodiumOrNot);
      for (const text of [`${signature}==`, ` ${signature}`, `${signature.slice(0, 40)}!${signature.slice(40)}`, signature.slice(1)]) {
        expect(checker?.verify(input, text), text).toBe(false);
      }
      for (const x of [5, null, undefined, ['a']]) {
        expect(jwsVerifierOf({ ...jwk, x } as unknown as typeof jwk, sodiumOrNot)).toBeUndefined();
      }
    }
    expect(jwsVerifierOf({ kty: 'EC', crv: 'secp256k1', x: jwk.x, y: 7 } as unknown as typeof jwk)).toBeUndefined();

    const raw = Buffer.from(jwk.x, 'base64url');
    const bytes = Buffer.from(signature, 'base64url');
    const backing = new Uint8Array(200);
    backing.set(bytes, 11);
    backing.set(raw, 101);
    expect(libsodiumVerifies(sodium, backing.subarray(11, 75), Buffer.from(input), backing.subarray(101, 133))).toBe(true);
  });
});
