// The pure parts of proving a request with a credential: the nonce a request binds (each part of the request changes
// it; a verifier may put the authority it answers at in place of the request's), the Authorization field's SD-JWT
// scheme, ES256K key-binding signatures checked with libsecp256k1 (either form of s, as OpenSSL signs them), and the
// per-human quota counted under a credential's pairwise sub.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compilePolicy, enforcePolicy, type PolicySubject } from '../../src/core/agent-policy.js';
import { credentialOfAuthorization, requestBinding, requestNonce } from '../../src/core/credential-request-binding.js';
import { MemoryQuotaStore } from '../../src/core/human-quota.js';
import { jwsVerifierOf } from '../../src/core/jws-crypto.js';

describe('the nonce of a request', () => {
  const base = { method: 'POST', url: 'https://shop.example/orders?size=large', body: '{"item":"tea"}' };
  const nonce = (request: { method: string; url: string; body?: string }) => requestNonce(requestBinding(request));

  it('is base64url of a SHA-256, the same for the same request, and another for any part changed', () => {
    expect(nonce(base)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(nonce({ ...base, method: 'post' })).toBe(nonce(base));
    expect(nonce({ ...base, url: 'https://SHOP.example:443/orders?size=large' })).toBe(nonce(base));
    const changed = [
      { ...base, method: 'PUT' },
      { ...base, url: 'https://shop.example/orders?size=small' },
      { ...base, url: 'https://shop.example/orders' },
      { ...base, url: 'https://shop.example/basket?size=large' },
      { ...base, url: 'https://shop.example:8443/orders?size=large' },
      { ...base, url: 'https://bank.example/orders?size=large' },
      { ...base, body: '{"item":"coffee"}' },
      { ...base, body: '' },
    ];
    const nonces = new Set([nonce(base), ...changed.map(nonce)]);
    expect(nonces.size).toBe(changed.length + 1);
    // no body and an empty body are one and the same
    expect(nonce({ method: 'GET', url: 'https://shop.example/' })).toBe(nonce({ method: 'GET', url: 'https://shop.example', body: '' }));
  });

  it('takes the authority a verifier answers at in place of the one the request reached it with', () => {
    const proxied = requestBinding({ ...base, url: 'http://127.0.0.1:3000/orders?size=large' });
    expect(requestNonce(proxied)).not.toBe(nonce(base));
    expect(requestNonce(proxied, 'shop.example')).toBe(nonce(base));
  });
});

describe('the SD-JWT authorization scheme', () => {
  it('reads the presentation of an SD-JWT field, whatever the scheme name’s case, and nothing of another field', () => {
    const presentation = 'eyJhbGciOiJFZERTQSJ9.eyJpc3MiOiJ4In0.c2ln~WyJzYWx0IiwiYWdlX292ZXJfMTgiLHRydWVd~eyJ0eXAiOiJrYitqd3QifQ.e30.c2ln';
    expect(credentialOfAuthorization(`SD-JWT ${presentation}`)).toBe(presentation);
    expect(credentialOfAuthorization(`sd-jwt ${presentation}`)).toBe(presentation);
    expect(credentialOfAuthorization(`Bearer ${presentation}`)).toBeUndefined();
    expect(credentialOfAuthorization('SD-JWT two words')).toBeUndefined();
    expect(credentialOfAuthorization(undefined)).toBeUndefined();
  });
});

describe('ES256K signatures with libsecp256k1', () => {
  it('verifies what OpenSSL signs (high s too) and refuses another text or a malformed signature', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y: string };
    const verifier = jwsVerifierOf(jwk);
    expect(verifier?.alg).toBe('ES256K');
    const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    let highS = 0;
    for (let i = 0; i < 16; i++) {
      const input = `eyJhbGciOiJFUzI1NksifQ.${Buffer.from(`payload ${i}`).toString('base64url')}`;
      const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
      if (BigInt(`0x${signature.subarray(32).toString('hex')}`) > order / 2n) highS++;
      expect(verifier?.verify(input, signature.toString('base64url'))).toBe(true);
      expect(verifier?.verify(`${input}x`, signature.toString('base64url'))).toBe(false);
    }
    // OpenSSL does not normalize s: about half of these are high
    expect(highS).toBeGreaterThan(0);
    expect(verifier?.verify('a.b', 'c2ln')).toBe(false);
    expect(verifier?.verify('a.b', Buffer.alloc(64, 0xff).toString('base64url'))).toBe(false);
  });

  it('has no verifier for a key off the curve', () => {
    expect(
      jwsVerifierOf({ kty: 'EC', crv: 'secp256k1', x: Buffer.alloc(32, 1).toString('base64url'), y: Buffer.alloc(32, 2).toString('base64url') }),
    ).toBeUndefined();
  });
});

describe('a quota counted under a pairwise sub', () => {
  const subject = (pseudonym: string): PolicySubject => ({
    credentials: { olderThan: 18, ofac: [false, true, true] },
    agentCount: 1,
    strength: 100,
    proofExpiresAt: 2_000_000_000,
    nullifier: 0n,
    pseudonym,
  });

  it('draws on the budget of the sub, another for another sub, and not on a nullifier’s', async () => {
    const policy = compilePolicy({ quota: { limit: 1, windowS: 60 } });
    const quotas = new MemoryQuotaStore();
    const options = { quotas, scope: 'testnet', nowMs: 1_000_000 };
    expect(await enforcePolicy(policy, subject('human-a'), options)).toMatchObject({ ok: true });
    expect(await enforcePolicy(policy, subject('human-a'), options)).toMatchObject({ ok: false, policy: 'quota' });
    expect(await enforcePolicy(policy, subject('human-b'), options)).toMatchObject({ ok: true });
    const { pseudonym: _, ...byNullifier } = { ...subject('x'), nullifier: 7n };
    expect(await enforcePolicy(policy, byNullifier, options)).toMatchObject({ ok: true });
    expect(quotas.size).toBe(3);
  });
});
