// The service's signing key as JWKs, and the ring of its keys over time: pure, no store.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseSigningJwk, publicSigningJwk, type SigningAlg, withKid } from '../../src/core/signing-jwk.js';
import { publishedKeys, type SigningKeyRing, succeed } from '../../src/core/signing-key-ring.js';

const privateJwk = async (alg: SigningAlg): Promise<JWK> => exportJWK((await generateKeyPair(alg, { extractable: true })).privateKey);

/** What parseSigningJwk says of `value`, or 'ok'. */
const refusal = (value: unknown): string => {
  try {
    parseSigningJwk(value);
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('parseSigningJwk', () => {
  it('takes Ed25519 and P-256 private JWKs, with their alg inferred and only the members a key needs', async () => {
    const ed = await privateJwk('EdDSA');
    expect(parseSigningJwk({ ...ed, use: 'sig', key_ops: ['sign'], ext: true })).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: ed.x,
      d: ed.d,
      alg: 'EdDSA',
    });
    const ec = await privateJwk('ES256');
    expect(parseSigningJwk({ ...ec, alg: 'ES256', kid: 'ops-2026-11' })).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: ec.x,
      y: ec.y,
      d: ec.d,
      alg: 'ES256',
      kid: 'ops-2026-11',
    });
  });

  it('refuses what is not a private signing key, saying why and never echoing the key', async () => {
    const ed = await privateJwk('EdDSA');
    const other = await privateJwk('EdDSA');
    const ec = await privateJwk('ES256');
    const secp256k1 = { kty: 'EC', crv: 'secp256k1', x: ec.x, y: ec.y, d: ec.d };
    const cases: [unknown, RegExp][] = [
      ['a string', /must be a private JWK: a JSON object/],
      [[ed], /a JSON object/],
      [{ kty: 'RSA', n: 'AQAB', e: 'AQAB', d: 'AQAB' }, /Ed25519 .* or P-256/],
      [secp256k1, /Ed25519 .* or P-256/],
      [{ kty: 'OKP', crv: 'X25519', x: ed.x, d: ed.d }, /Ed25519 .* or P-256/],
      [{ ...ed, d: undefined }, /holds no private part \(d\)/],
      [{ ...ec, y: undefined }, /has no base64url "y"/],
      [{ ...ed, x: 'not base64url!' }, /has no base64url "x"/],
      [{ ...ed, alg: 'ES256' }, /has alg "ES256", but Ed25519 keys sign with EdDSA/],
      [{ ...ed, kid: '' }, /kid that is not 1 to 256 visible ASCII/],
      [{ ...ed, kid: 'with space' }, /kid/],
      [{ ...ed, x: other.x }, /public part \(x, y\) that is not its private part's/],
      [{ ...ec, y: (await privateJwk('ES256')).y }, /not a valid P-256 private key|not its private part's/],
      [{ ...ed, d: 'AAAA' }, /not a valid Ed25519 private key/],
    ];
    for (const [value, expected] of cases) {
      const message = refusal(value);
      expect(message, JSON.stringify(value)).toMatch(expected);
      expect(message).not.toContain(ed.d);
      expect(message).not.toContain(ec.d);
    }
  });
});

describe('withKid and publicSigningJwk', () => {
  it("the kid is the key's RFC 7638 thumbprint unless it came with one; the public JWK has no private part", async () => {
    for (const alg of ['EdDSA', 'ES256'] as const) {
      const jwk = parseSigningJwk(await privateJwk(alg));
      const keyed = await withKid(jwk);
      expect(keyed.kid).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
      const listed = publicSigningJwk(keyed);
      expect(listed).toMatchObject({ kid: keyed.kid, alg, use: 'sig' });
      expect(listed).not.toHaveProperty('d');
      // a jose JWK, as verifiers take it
      const asJose: JWK = listed;
      expect(await calculateJwkThumbprint(asJose)).toBe(keyed.kid);
    }
    const given = await withKid({ ...parseSigningJwk(await privateJwk('EdDSA')), kid: 'ops-1' });
    expect(given.kid).toBe('ops-1');
  });
});

describe('the key ring', () => {
  const key = async (): Promise<ReturnType<typeof publicSigningJwk>> => publicSigningJwk(await withKid(parseSigningJwk(await privateJwk('EdDSA'))));
  const kids = (ring: SigningKeyRing, now: number): string[] => publishedKeys(ring, now).map((k) => k.kid);

  it('a new key signs from now on; the one it replaces is listed until its retire time, then not', async () => {
    const [a, b, c] = [await key(), await key(), await key()];
    const first = succeed(undefined, { publicJwk: a }, 1_000, 60_000);
    expect(first).toEqual({ current: { publicJwk: a, since: 1_000 }, retired: [] });
    const second = succeed(first, { publicJwk: b }, 2_000, 60_000);
    expect(second.current).toEqual({ publicJwk: b, since: 2_000 });
    expect(second.retired).toEqual([{ publicJwk: a, retireAt: 62_000 }]);
    expect(kids(second, 61_999)).toEqual([b.kid, a.kid]);
    expect(kids(second, 62_000)).toEqual([b.kid]);
    // a third key, after the first's time: the first is gone from the ring itself
    const third = succeed(second, { publicJwk: c }, 70_000, 10_000);
    expect(third.retired).toEqual([{ publicJwk: b, retireAt: 80_000 }]);
  });

  it('the same key changes nothing; 0 withdraws the replaced key at once; a retired key that comes back is current only', async () => {
    const [a, b] = [await key(), await key()];
    const ring = succeed(succeed(undefined, { publicJwk: a }, 0, 1), { publicJwk: b }, 10, 1_000);
    expect(succeed(ring, { publicJwk: b }, 500, 1_000)).toEqual(ring);
    expect(succeed(ring, { publicJwk: a }, 20, 0)).toEqual({ current: { publicJwk: a, since: 20 }, retired: [] });
    const back = succeed(ring, { publicJwk: a }, 20, 1_000);
    expect(back.retired.map((k) => k.publicJwk.kid)).toEqual([b.kid]);
    expect(kids(back, 20)).toEqual([a.kid, b.kid]);
  });

  it('keeps the private part of the current key only when given, and never of a retired one', async () => {
    const jwk = await withKid(parseSigningJwk(await privateJwk('EdDSA')));
    const held = succeed(undefined, { publicJwk: publicSigningJwk(jwk), privateJwk: jwk }, 0, 1_000);
    expect(held.current.privateJwk).toEqual(jwk);
    const next = succeed(held, { publicJwk: await key() }, 1, 1_000);
    expect(JSON.stringify(next)).not.toContain(jwk.d);
  });
});
