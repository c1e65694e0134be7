// Pure codecs of src/core checked against the published vectors (onchain-facts 1.6, 1.8, 8) and for exact
// userDefinedData layouts. Ed25519 signing uses node:crypto only to reproduce the RFC 8032 vector.
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { type Hex, hashMessage, recoverAddress, serializeSignature } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ed25519ChallengeHash, registrationChallengeHash, signRegistrationChallenge } from '../../src/core/challenge.js';
import {
  CONFIG_INDEXES,
  configIndexFor,
  disclosuresForConfigIndex,
  type MinimumAge,
  VERIFICATION_CONFIG_IDS,
  VERIFICATION_CONFIGS,
  verificationConfigId,
} from '../../src/core/disclosures.js';
import { decodeEd25519Point, ed25519AgentAddress, ed25519ExtKpub, isEd25519PublicKey, WEI25519_A } from '../../src/core/ed25519-key.js';
import {
  advancedDeregisterUserData,
  advancedRegisterUserData,
  deregisterUserData,
  ed25519RegisterUserData,
  identifyUserData,
  parseUserData,
  refreshUserData,
  registerUserData,
  USER_DATA_LENGTH,
  UserDataError,
  userDefinedDataBytes,
  walletFreeRegisterUserData,
} from '../../src/core/user-data.js';
import { DOCUMENTED_CONFIG_IDS } from '../support/onchain-facts.js';

// RFC 8032 section 7.1, TEST 2.
const RFC_SECRET = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const RFC_PUBKEY = '0x3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';

function ed25519Sign(secretHex: string, message: Hex): Hex {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(secretHex, 'hex')]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return `0x${cryptoSign(null, Buffer.from(message.slice(2), 'hex'), key).toString('hex')}`;
}

describe('disclosures -> config', () => {
  it('maps (minimumAge, ofac) to the six config indexes', () => {
    const cases: [MinimumAge, boolean, number][] = [
      [0, false, 0],
      [18, false, 1],
      [21, false, 2],
      [0, true, 3],
      [18, true, 4],
      [21, true, 5],
    ];
    for (const [minimumAge, ofac, index] of cases) {
      expect(configIndexFor({ minimumAge, ofac })).toBe(index);
      expect(disclosuresForConfigIndex(index as 0)).toEqual({ minimumAge, ofac });
    }
  });

  it('config ids equal the deployed table (sha256 of the abi-encoded config)', () => {
    expect(VERIFICATION_CONFIG_IDS).toEqual(DOCUMENTED_CONFIG_IDS);
    for (const i of CONFIG_INDEXES) expect(verificationConfigId(VERIFICATION_CONFIGS[i]!)).toBe(DOCUMENTED_CONFIG_IDS[i]);
    expect(VERIFICATION_CONFIGS[4]).toEqual({
      olderThanEnabled: true,
      olderThan: 18n,
      forbiddenCountriesEnabled: false,
      forbiddenCountriesListPacked: [0n, 0n, 0n, 0n],
      ofacEnabled: [true, true, true],
    });
  });
});

describe('challenges', () => {
  const input = {
    human: '0x0000000000000000000000000000000000000000',
    chainId: 31337,
    registry: '0x1111111111111111111111111111111111111111',
    nonce: 0,
  } as const;

  it('reproduces the Ed25519E2E challenge and its RFC 8032 signature', () => {
    const challenge = ed25519ChallengeHash(input);
    expect(challenge).toBe('0xd536b8dc2c02a056000a899c6812f0a6431aed4992f19075aea13a803e111652');
    const signature = ed25519Sign(RFC_SECRET, challenge);
    expect(signature.slice(0, 66)).toBe('0x010a463562451f03d37cbf5d51b3a798e69b56ac0643a1802e03cecb59446d99');
    expect(`0x${signature.slice(66)}`).toBe('0x524870a6e28eaef00a8bee48a2bc237b5a0b3afa89965be6eed0a1229a30f507');
  });

  it('ECDSA challenge differs by prefix and is signed as an EIP-191 message with v 27/28', async () => {
    const hash = registrationChallengeHash(input);
    expect(hash).not.toBe(ed25519ChallengeHash(input));
    const account = privateKeyToAccount('0x00000000000000000000000000000000000000000000000000000000000a11ce');
    const { r, s, v } = await signRegistrationChallenge(account, hash);
    expect([27, 28]).toContain(v);
    const recovered = await recoverAddress({
      hash: hashMessage({ raw: hash }),
      signature: serializeSignature({ r, s, v: BigInt(v) }),
    });
    expect(recovered).toBe(account.address);
  });
});

describe('ed25519 keys', () => {
  it('derives the owner address of the RFC 8032 test-2 key', () => {
    expect(ed25519AgentAddress(RFC_PUBKEY).toLowerCase()).toBe('0x4ff1ba61d0a4d021d1e3dd7d77f3311e91e09d2c');
    expect(ed25519AgentAddress(RFC_PUBKEY.slice(2))).toBe(ed25519AgentAddress(RFC_PUBKEY));
  });

  it('extKpub is a Wei25519 point, its 2^128 multiple, and the compressed key', () => {
    const p = 2n ** 255n - 19n;
    const m = (a: bigint): bigint => ((a % p) + p) % p;
    const inv = (a: bigint): bigint => {
      let r = 1n,
        b = m(a),
        e = p - 2n;
      while (e > 0n) {
        if (e & 1n) r = (r * b) % p;
        b = (b * b) % p;
        e >>= 1n;
      }
      return r;
    };
    // Wei25519 from Montgomery A = 486662, B = 1: a = (3 - A^2)/3, b = (2A^3 - 9A)/27.
    const A = 486662n;
    expect(m((3n - A * A) * inv(3n))).toBe(WEI25519_A);
    const b = m((2n * A ** 3n - 9n * A) * inv(27n));
    const onCurve = (x: bigint, y: bigint): boolean => m(y * y) === m(x ** 3n + WEI25519_A * x + b);

    const ext = ed25519ExtKpub(RFC_PUBKEY);
    expect(onCurve(ext[0], ext[1])).toBe(true);
    expect(onCurve(ext[2], ext[3])).toBe(true);
    expect(ext[4]).toBe(BigInt(RFC_PUBKEY));

    // Cross-check the doubling chain against Edwards arithmetic: map 2^128 * P (Edwards) to Weierstrass.
    const d = m(-121665n * inv(121666n));
    let { x, y } = decodeEd25519Point(RFC_PUBKEY)!;
    for (let i = 0; i < 128; i++) {
      const xy = m(x * y),
        x2 = m(x * x),
        y2 = m(y * y),
        k = m(d * xy * xy);
      [x, y] = [m(2n * xy * inv(1n + k)), m((y2 + x2) * inv(1n - k))];
    }
    const delta = 0x2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaad2451n;
    const c = 0x70d9120b9f5ff9442d84f723fc03b0813a5e2c2eb482e57d3391fb5500ba81e7n;
    expect(ext[2]).toBe(m((1n + y) * inv(1n - y) + delta));
    expect(ext[3]).toBe(m(c * (1n + y) * inv(m((1n - y) * x))));
  });

  it('rejects keys that are not curve points', () => {
    expect(isEd25519PublicKey(RFC_PUBKEY)).toBe(true);
    expect(isEd25519PublicKey(`0x${'ff'.repeat(32)}`)).toBe(false); // y >= p
    expect(isEd25519PublicKey('abc')).toBe(false);
  });
});

describe('userDefinedData builders and parser', () => {
  const agent = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4';
  const guardian = '0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2';
  const sig = { r: `0x${'12'.repeat(32)}`, s: `0x${'3a'.repeat(32)}`, v: 28 } as const;

  it('simple actions are two ASCII characters', () => {
    expect(registerUserData(0)).toBe('R0');
    expect(deregisterUserData(4)).toBe('D4');
    expect(identifyUserData()).toBe('I0');
    expect(parseUserData('R3')).toEqual({ action: 'R', configIndex: 3 });
    expect(parseUserData('R')).toEqual({ action: 'R', configIndex: 0 });
    expect(parseUserData(new Uint8Array([0x44, 0x05]))).toEqual({ action: 'D', configIndex: 5 });
  });

  it('K: agent40 r64 s64 v2, 172 chars', () => {
    const s = advancedRegisterUserData({ configIndex: 1, agent, signature: sig });
    expect(s).toHaveLength(USER_DATA_LENGTH.registerAdvanced);
    expect(s).toBe(`K1${agent.slice(2).toLowerCase()}${'12'.repeat(32)}${'3a'.repeat(32)}1c`);
    expect(parseUserData(s)).toEqual({ action: 'K', configIndex: 1, agent, signature: sig });
  });

  it('X: agent40, 42 chars', () => {
    const s = advancedDeregisterUserData({ configIndex: 2, agent });
    expect(s).toBe(`X2${agent.slice(2).toLowerCase()}`);
    expect(parseUserData(s)).toEqual({ action: 'X', configIndex: 2, agent });
  });

  it('W: agent40 guardian40 r64 s64 v2, 212 chars; zeros mean no guardian', () => {
    const without = walletFreeRegisterUserData({ configIndex: 0, agent, signature: sig });
    expect(without).toHaveLength(USER_DATA_LENGTH.registerWalletFree);
    expect(without.slice(42, 82)).toBe('0'.repeat(40));
    expect(parseUserData(without)).toEqual({ action: 'W', configIndex: 0, agent, guardian: null, signature: sig });
    const withGuardian = walletFreeRegisterUserData({ configIndex: 3, agent, guardian, signature: sig });
    expect(parseUserData(withGuardian)).toMatchObject({ guardian });
  });

  it('E: pubkey64 sig128 5 x extKpub64 guardian40, 554 chars', () => {
    const challenge = ed25519ChallengeHash({ human: guardian, chainId: 11142220, registry: agent, nonce: 0 });
    const signature = ed25519Sign(RFC_SECRET, challenge);
    const extKpub = ed25519ExtKpub(RFC_PUBKEY);
    const s = ed25519RegisterUserData({ configIndex: 5, pubkey: RFC_PUBKEY, signature, extKpub, guardian });
    expect(s).toHaveLength(USER_DATA_LENGTH.registerEd25519);
    expect(s.slice(0, 66)).toBe(`E5${RFC_PUBKEY.slice(2)}`);
    expect(s.slice(66, 194)).toBe(signature.slice(2));
    expect(s.slice(450, 514)).toBe(RFC_PUBKEY.slice(2));
    expect(s.slice(514)).toBe(guardian.slice(2).toLowerCase());
    expect(parseUserData(s)).toEqual({ action: 'E', configIndex: 5, pubkey: RFC_PUBKEY, signature, extKpub, guardian });
  });

  it('F: hex agentId by default (66 chars), legacy binary form on request (34 chars)', () => {
    const hex = refreshUserData({ configIndex: 1, agentId: 300 });
    expect(hex).toBe(`F1${(300).toString(16).padStart(64, '0')}`);
    expect(hex).toHaveLength(USER_DATA_LENGTH.refresh);
    expect(parseUserData(hex)).toEqual({ action: 'F', configIndex: 1, agentId: 300n, encoding: 'hex' });

    const binary = refreshUserData({ configIndex: 1, agentId: 300, encoding: 'binary' });
    expect(binary).toHaveLength(USER_DATA_LENGTH.refreshBinary);
    expect(binary.charCodeAt(32)).toBe(0x01);
    expect(binary.charCodeAt(33)).toBe(0x2c);
    expect(parseUserData(binary)).toEqual({ action: 'F', configIndex: 1, agentId: 300n, encoding: 'binary' });
    // ASCII forms keep their byte length under UTF-8; the binary form with a byte >= 0x80 would not.
    expect(userDefinedDataBytes(hex).length).toBe(2 + 66 * 2);
  });

  it('rejects what the registry rejects', () => {
    expect(() => parseUserData('')).toThrow(UserDataError);
    expect(() => parseUserData('R9')).toThrow(/config index/);
    expect(() => parseUserData('Z0')).toThrow(/unknown action/);
    expect(() => parseUserData('K0abc')).toThrow(/172/);
    expect(() => parseUserData(`X0${'g'.repeat(40)}`)).toThrow(/hex/);
  });
});
