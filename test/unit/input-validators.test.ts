// The validators behind the HTTP schemas and the services: account addresses (form, zero, EIP-55), Ed25519 keys
// exactly as strict RFC 8032 verification takes them (noble's zip215: false, which the registry's verifier follows),
// and the bounded decimal patterns the OpenAPI document shows.
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { checksumAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_ADDRESS_PATTERN, accountAddressProblem, parseAccountAddress } from '../../src/core/addresses.js';
import { isEd25519PublicKey } from '../../src/core/ed25519-key.js';
import { decimalPattern } from '../../src/http/schemas/decimal-pattern.js';

const SEED = 20_240_605;

describe('account addresses', () => {
  it('the EIP-55 examples pass; changing the case of one letter fails; one case passes', () => {
    for (const address of [
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      '0xde709f2102306220921060314715629080e2fb77',
      '0x27b1fdb04752bbc536007a920d24acb045561c26',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(accountAddressProblem(address), address).toBeUndefined();
      expect(parseAccountAddress(address.toLowerCase(), 'a')).toBe(checksumAddress(address as `0x${string}`));
    }
    expect(accountAddressProblem('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toMatch(/EIP-55 checksum/);
    expect(accountAddressProblem('0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED')).toBeUndefined();
  });

  it('refuses the zero address, other forms and non-strings, saying which', () => {
    expect(accountAddressProblem(`0x${'0'.repeat(40)}`)).toMatch(/zero address/);
    for (const value of [
      '',
      '0x',
      `0X${'1'.repeat(40)}`,
      `0x${'1'.repeat(39)}`,
      `0x${'1'.repeat(41)}`,
      `${'1'.repeat(42)}`,
      `0x${'g'.repeat(40)}`,
      5,
      null,
    ]) {
      expect(accountAddressProblem(value), String(value)).toMatch(/0x-prefixed 20-byte hex address/);
    }
    expect(() => parseAccountAddress('0x12', 'humanAddress', 'the wallet')).toThrow(
      /^humanAddress must be a 0x-prefixed 20-byte hex address .*\(the wallet\)$/,
    );
  });

  it('agrees with viem on random addresses in every casing, and the pattern is the form without the zero address', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (bytes, upper) => {
        const lower = `0x${Buffer.from(bytes).toString('hex')}`;
        const mixed = `0x${[...lower.slice(2)].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}`;
        const checksummed = checksumAddress(lower as `0x${string}`);
        const oneCase = mixed.slice(2) === mixed.slice(2).toLowerCase() || mixed.slice(2) === mixed.slice(2).toUpperCase();
        const zero = /^0x0{40}$/.test(lower);
        expect(accountAddressProblem(lower) === undefined).toBe(!zero);
        expect(accountAddressProblem(checksummed) === undefined).toBe(!zero);
        expect(accountAddressProblem(mixed) === undefined).toBe(!zero && (oneCase || mixed === checksummed));
        expect(ACCOUNT_ADDRESS_PATTERN.test(mixed)).toBe(!zero);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe('Ed25519 public keys', () => {
  const strictly = (hex: string): boolean => {
    try {
      return !ed25519.Point.fromHex(hex, false).isSmallOrder();
    } catch {
      return false;
    }
  };

  it('generated keys are accepted', () => {
    for (let i = 0; i < 50; i++) expect(isEd25519PublicKey(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))).toBe(true);
  });

  it('accepts exactly what strict RFC 8032 verification accepts: random bytes, y near p, small-order points', () => {
    const P = 2n ** 255n - 19n;
    const encode = (y: bigint, sign: boolean): string =>
      Array.from({ length: 32 }, (_, i) => (((y | (sign ? 1n << 255n : 0n)) >> BigInt(8 * i)) & 0xffn).toString(16).padStart(2, '0')).join('');
    const special = [0n, 1n, 2n, P - 1n, P, P + 1n, P + 3n, P + 18n, 2n ** 255n - 1n].flatMap((y) => [encode(y, false), encode(y, true)]);
    const random = Array.from({ length: 2000 }, () => randomBytes(32).toString('hex'));
    for (const hex of [...special, ...random]) expect(isEd25519PublicKey(hex), hex).toBe(strictly(hex));
    // every small-order point: [8]P = identity for P = [k]T8, T8 a point of order 8
    const t8 = ed25519.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
    for (let k = 0n; k < 8n; k++) {
      const point = k === 0n ? ed25519.Point.ZERO : t8.multiplyUnsafe(k);
      expect(isEd25519PublicKey(point.toBytes()), point.toHex()).toBe(false);
      // a small-order component on an honest key is not small order: accepted, as the verifier does
      const honest = ed25519.Point.fromHex(Buffer.from(ed25519.getPublicKey(ed25519.utils.randomSecretKey())).toString('hex'));
      expect(isEd25519PublicKey(honest.add(point).toBytes())).toBe(strictly(honest.add(point).toHex()));
    }
  });
});

describe('decimal patterns', () => {
  const canonical = /^(0|[1-9][0-9]*)$/;
  const cases: [bigint, 0n | 1n][] = [
    [0n, 0n],
    [9n, 0n],
    [1n, 1n],
    [10n, 1n],
    [250n, 1n],
    [1000n, 1n],
    [1999n, 0n],
    [BigInt(Number.MAX_SAFE_INTEGER), 1n],
    [2n ** 256n - 1n, 0n],
  ];

  it.each(cases)('up to %s from %s: exactly the canonical decimals in range', (max, min) => {
    const pattern = new RegExp(decimalPattern(max, min));
    const accepts = (text: string): boolean => canonical.test(text) && BigInt(text) >= min && BigInt(text) <= max;
    for (const text of ['', '-1', '+1', '01', '00', '0x1', ' 1', '1 ', '1.0', '1e3', (max + 1n).toString(), max.toString(), min.toString()]) {
      expect(pattern.test(text), text).toBe(accepts(text));
    }
    const near = fc.bigInt({ min: max > 5000n ? max - 5000n : 0n, max: max + 5000n }).map(String);
    const digits = fc.stringMatching(new RegExp(`^[0-9]{1,${max.toString().length + 1}}$`));
    fc.assert(
      fc.property(fc.oneof(near, digits), (text) => pattern.test(text) === accepts(text)),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
