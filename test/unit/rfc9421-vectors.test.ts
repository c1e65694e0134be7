// RFC 9421 Appendix B: each test case's signature base, rebuilt by our signatureBase (http-message-signatures over
// the parsed Signature-Input member) from the test request or response, equals the RFC's byte for byte, and the
// RFC's own signature verifies over it with the Appendix B.1 key (RSA-PSS and ECDSA are randomized, so verifying is
// the byte-exact check; HMAC and Ed25519 are deterministic, so those signatures are also reproduced). The B.2.6
// Ed25519 signature comes out of the library's signing exactly as our Web Bot Auth signer drives it.
import { constants, createHmac, createPublicKey, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { httpbis } from 'http-message-signatures';
import { type InnerList, parseDictionary } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { ed25519JwkThumbprint } from '../../src/core/agent-jwk.js';
import { contentDigestMismatch } from '../../src/core/content-digest.js';
import { signatureBase } from '../../src/core/rfc9421-signature.js';
import {
  APPENDIX_B_CASES,
  type AppendixBCase,
  TEST_KEY_ECC_P256_PUBLIC,
  TEST_KEY_ED25519,
  TEST_KEY_RSA_PSS_PUBLIC,
  TEST_REQUEST,
  TEST_RESPONSE,
  TEST_SHARED_SECRET,
} from '../support/rfc9421-appendix-b.js';

const message = (c: AppendixBCase) =>
  c.message === 'request' ? { method: TEST_REQUEST.method, url: new URL(TEST_REQUEST.url), headers: TEST_REQUEST.headers } : TEST_RESPONSE;

const inputOf = (c: AppendixBCase): InnerList => parseDictionary(`${c.label}=${c.signatureInput}`).get(c.label) as InnerList;

const caseOf = (label: string): AppendixBCase => APPENDIX_B_CASES.find((c) => c.label === label)!;

const signatureOf = (c: AppendixBCase): Buffer => Buffer.from(c.signature, 'base64');

const ed25519Seed = Buffer.from(TEST_KEY_ED25519.d, 'base64url');

describe('RFC 9421 Appendix B', () => {
  it.each(APPENDIX_B_CASES.map((c) => [c.label, c] as const))('%s: the signature base reproduces byte for byte', (_label, c) => {
    expect(signatureBase(message(c), inputOf(c))).toBe(c.base);
  });

  it('B.2.1 to B.2.3: the RFC’s RSA-PSS (SHA-512, 64-byte salt) signatures verify over the rebuilt bases', () => {
    const key = createPublicKey(TEST_KEY_RSA_PSS_PUBLIC);
    for (const label of ['sig-b21', 'sig-b22', 'sig-b23']) {
      const c = caseOf(label);
      const base = Buffer.from(signatureBase(message(c), inputOf(c)));
      expect(verify('sha512', base, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, signatureOf(c)), label).toBe(true);
    }
  });

  it('B.2.4: the RFC’s ECDSA P-256 signature of the response verifies over the rebuilt base', () => {
    const c = caseOf('sig-b24');
    const base = Buffer.from(signatureBase(message(c), inputOf(c)));
    expect(verify('sha256', base, { key: createPublicKey(TEST_KEY_ECC_P256_PUBLIC), dsaEncoding: 'ieee-p1363' }, signatureOf(c))).toBe(true);
  });

  it('B.2.5: the HMAC-SHA256 signature reproduces exactly', () => {
    const c = caseOf('sig-b25');
    const mac = createHmac('sha256', Buffer.from(TEST_SHARED_SECRET, 'base64'))
      .update(signatureBase(message(c), inputOf(c)))
      .digest();
    expect(mac.toString('base64')).toBe(c.signature);
  });

  it('B.2.6: the Ed25519 signature reproduces exactly, and verifies strictly with the B.1.4 key', () => {
    const c = caseOf('sig-b26');
    const base = Buffer.from(signatureBase(message(c), inputOf(c)));
    expect(Buffer.from(ed25519.getPublicKey(ed25519Seed)).toString('base64url')).toBe(TEST_KEY_ED25519.x);
    expect(Buffer.from(ed25519.sign(base, ed25519Seed)).toString('base64')).toBe(c.signature);
    expect(ed25519.verify(signatureOf(c), base, ed25519.getPublicKey(ed25519Seed), { zip215: false })).toBe(true);
  });

  it('B.2.6: the library signs the test request to the RFC’s Signature-Input and Signature', async () => {
    const c = caseOf('sig-b26');
    const signed = await httpbis.signMessage(
      {
        key: { id: TEST_KEY_ED25519.kid, sign: async (data) => Buffer.from(ed25519.sign(data, ed25519Seed)) },
        name: c.label,
        fields: ['date', '@method', '@path', '@authority', 'content-type', 'content-length'],
        params: ['created', 'keyid'],
        paramValues: { created: new Date(1618884473 * 1000) },
      },
      message(c) as Parameters<typeof httpbis.signMessage>[1],
    );
    expect(signed.headers['Signature-Input']).toBe(`${c.label}=${c.signatureInput}`);
    expect(signed.headers['Signature']).toBe(`${c.label}=:${c.signature}:`);
  });

  it('the test request’s sha-512 Content-Digest matches its body (RFC 9530), and fails for another body', () => {
    expect(contentDigestMismatch(TEST_REQUEST.headers['content-digest'], TEST_REQUEST.body)).toBeUndefined();
    expect(contentDigestMismatch(TEST_RESPONSE.headers['content-digest'], TEST_RESPONSE.body)).toBeUndefined();
    expect(contentDigestMismatch(TEST_REQUEST.headers['content-digest'], TEST_RESPONSE.body)).toMatch(/sha-512 does not match the body/);
  });

  it('the B.1.4 key’s JWK thumbprint is its Web Bot Auth keyid, and RFC 8037 A.3’s example reproduces', async () => {
    expect(await ed25519JwkThumbprint(Buffer.from(TEST_KEY_ED25519.x, 'base64url'))).toBe('poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U');
    // RFC 8037 Appendix A.3: the thumbprint of its example Ed25519 key
    expect(await ed25519JwkThumbprint(Buffer.from('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', 'base64url'))).toBe(
      'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });
});
