// The credential's pure parts: which claims a proof backs, the pairwise sub, the secp256k1 key binding, the lifetime.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_LIFETIME_S,
  credentialExpiry,
  pairwiseSubject,
  secp256k1Jwk,
  secp256k1JwkAddress,
  selectiveClaims,
} from '../../src/core/agent-credential.js';

const secret = new Uint8Array(32).fill(7);

describe('the human-backed-agent credential', () => {
  it('discloses only what the proof shows true: a threshold not proved is absent, not false', () => {
    expect(selectiveClaims({ olderThan: 0, ofac: [false, false, false], nationality: '' })).toEqual({});
    expect(selectiveClaims({ olderThan: 18, ofac: [false, true, true], nationality: 'FRA' })).toEqual({
      age_over_18: true,
      ofac_clear: true,
      nationality: 'FRA',
    });
    expect(selectiveClaims({ olderThan: 21, ofac: [true, true, false], nationality: '' })).toEqual({ age_over_18: true, age_over_21: true });
  });

  it('the pairwise sub: one per human and audience, unrelated across audiences and humans', () => {
    const sub = pairwiseSubject(secret, 42n, 'https://a.example');
    expect(sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pairwiseSubject(secret, 42n, 'https://a.example')).toBe(sub);
    expect(pairwiseSubject(secret, 42n, 'https://b.example')).not.toBe(sub);
    expect(pairwiseSubject(secret, 43n, 'https://a.example')).not.toBe(sub);
    expect(pairwiseSubject(new Uint8Array(32).fill(8), 42n, 'https://a.example')).not.toBe(sub);
    // the nullifier has a fixed width: no nullifier and audience pair reads as another
    expect(pairwiseSubject(secret, 1n, '2x')).not.toBe(pairwiseSubject(secret, 12n, 'x'));
  });

  it("a secp256k1 agent's public key as a JWK hashes to its address", () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const jwk = secp256k1Jwk(account.publicKey);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'secp256k1' });
    expect(secp256k1JwkAddress(jwk as { x: string; y: string }).toLowerCase()).toBe(account.address.toLowerCase());
    expect(() => secp256k1Jwk('0x02aa')).toThrow(/uncompressed/);
  });

  it('lives 15 minutes at most, never past the proof', () => {
    expect(credentialExpiry(1_000, 1_000_000)).toBe(1_000 + CREDENTIAL_LIFETIME_S);
    expect(credentialExpiry(1_000, 1_100)).toBe(1_100);
  });
});
