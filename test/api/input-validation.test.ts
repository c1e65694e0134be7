// Inputs refused before anyone acts on them, with a 400 that says what to fix: the zero address (a proof bound to
// it fails on chain only after the human has proved), a mixed-case address whose EIP-55 checksum does not match
// (a typo), and Ed25519 keys the registry's verifier refuses (small-order points, non-canonical encodings), at every
// endpoint that takes one, and in the services the A2A agent calls too. One-case and checksummed addresses pass.
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Express } from 'express';
import request from 'supertest';
import { bytesToHex, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/errors.js';
import type { Services } from '../../src/services/index.js';
import { newAccount } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const ZERO = `0x${'0'.repeat(40)}`;
/** EIP-55's own examples: checksummed, and the same with one letter's case changed. */
const CHECKSUMMED = '0x52908400098527886E0F7030069857D2E4169EE7';
const BAD_CHECKSUM = '0x52908400098527886E0F7030069857D2E4169Ee7';
const OTHER_CHECKSUMMED = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const OTHER_BAD_CHECKSUM = '0xFb6916095ca1df60bB79Ce92cE3Ea74c37c5d359';

/** The eight points of order dividing 8, as their canonical encodings (identity, order 2, 4 and 8). */
const SMALL_ORDER_KEYS = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
];

const P = 2n ** 255n - 19n;
/** 32 little-endian bytes of `value` as hex. */
const littleEndian = (value: bigint): string =>
  Array.from({ length: 32 }, (_, i) => ((value >> BigInt(8 * i)) & 0xffn).toString(16).padStart(2, '0')).join('');
/** y >= p: y = p + k encodes the same field element as k; p + 3 .. p + 18 include points on the curve (zip215 accepts them). */
const NON_CANONICAL_KEYS = [
  ...[0n, 1n, 3n, 4n, 9n, 18n].map((k) => littleEndian(P + k)),
  littleEndian(P + 4n + (1n << 255n)),
  // x = 0 with the sign bit set ("negative zero"): the identity and the point of order 2
  '0100000000000000000000000000000000000000000000000000000000000080',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
];

const KEY_RULE = /must be a 64-hex-character Ed25519 public key: the canonical encoding of a curve point that is not of small order/;

function expect400(res: request.Response, field: string, rule: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(Object.keys(res.body as object)).toEqual(['error']);
  expect(res.body.error).toMatch(new RegExp(`^${field}:? `));
  expect(res.body.error).toMatch(rule);
}

async function expectRefused(promise: Promise<unknown>, rule: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).status).toBe(400);
  expect((error as ServiceError).message).toMatch(rule);
}

describe('input validation: addresses and Ed25519 keys', () => {
  let networks: TestNetworks;
  let app: Express;
  let services: Services;
  /** Each request from its own client address, so the session-creation limit never answers instead. */
  let client = 0;
  const post = (path: string, body: unknown) =>
    request(app)
      .post(path)
      .set('X-Forwarded-For', `10.9.${Math.floor(++client / 250)}.${client % 250}`)
      .send(body as object);

  beforeAll(async () => {
    networks = await deployTestNetworks();
    ({ app, services } = testApp(networks.chains));
  });

  describe('the zero address', () => {
    const zeroRule = /must not be the zero address/;

    it('is refused as humanAddress by every mode that needs one, and by both challenges', async () => {
      for (const mode of ['linked', 'ed25519-linked', 'privy', 'smartwallet']) {
        expect400(await post('/api/agent/register', { mode, network: 'testnet', humanAddress: ZERO }), 'humanAddress', zeroRule);
      }
      expect400(
        await post('/api/agent/register/challenge', { mode: 'privy', network: 'testnet', agentAddress: newAccount().address, humanAddress: ZERO }),
        'humanAddress',
        zeroRule,
      );
      const pubkey = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
      expect400(await post('/api/agent/register/ed25519-challenge', { pubkey, network: 'testnet', humanAddress: ZERO }), 'humanAddress', zeroRule);
    });

    it('is refused as agentAddress (register, challenge, deregister) and as the address of the agents query', async () => {
      const humanAddress = newAccount().address;
      expect400(
        await post('/api/agent/register', {
          mode: 'privy',
          network: 'testnet',
          humanAddress,
          agentAddress: ZERO,
          agentSignature: `0x${'11'.repeat(65)}`,
        }),
        'agentAddress',
        zeroRule,
      );
      expect400(
        await post('/api/agent/register/challenge', { mode: 'smartwallet', network: 'testnet', agentAddress: ZERO, humanAddress }),
        'agentAddress',
        zeroRule,
      );
      expect400(await post('/api/agent/deregister', { network: 'testnet', agentAddress: ZERO }), 'agentAddress', zeroRule);
      expect400(await request(app).get(`/api/agent/agents/11142220/${ZERO}`), 'address', zeroRule);
    });

    it('is refused by the services themselves (the A2A agent calls them without the HTTP schemas)', async () => {
      await expectRefused(
        services.registration.start({ mode: 'linked', network: 'testnet', humanAddress: ZERO }),
        /^humanAddress must not be the zero address/,
      );
      await expectRefused(
        services.registration.challenge({ mode: 'privy', network: 'testnet', agentAddress: newAccount().address, humanAddress: ZERO }),
        /^humanAddress must not be the zero address/,
      );
      await expectRefused(
        services.registration.ed25519Challenge({ pubkey: bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())), humanAddress: ZERO }),
        /^humanAddress must not be the zero address/,
      );
      await expectRefused(
        services.registration.start({
          mode: 'privy',
          network: 'testnet',
          humanAddress: newAccount().address,
          agentAddress: ZERO,
          agentSignature: `0x${'11'.repeat(65)}`,
        }),
        /^agentAddress must not be the zero address/,
      );
      await expectRefused(services.deregistration.start({ network: 'testnet', agentAddress: ZERO }), /^agentAddress must not be the zero address/);
    });
  });

  describe('EIP-55 checksums', () => {
    const checksumRule = /mixed case that does not match its EIP-55 checksum/;

    it('a mixed-case address with a bad checksum is refused wherever an address is taken', async () => {
      const humanAddress = newAccount().address;
      expect400(await post('/api/agent/register', { mode: 'linked', network: 'testnet', humanAddress: BAD_CHECKSUM }), 'humanAddress', checksumRule);
      expect400(
        await post('/api/agent/register', { mode: 'wallet-free', network: 'testnet', humanAddress: BAD_CHECKSUM }),
        'humanAddress',
        checksumRule,
      );
      expect400(
        await post('/api/agent/register', {
          mode: 'privy',
          network: 'testnet',
          humanAddress,
          agentAddress: OTHER_BAD_CHECKSUM,
          agentSignature: `0x${'11'.repeat(65)}`,
        }),
        'agentAddress',
        checksumRule,
      );
      expect400(
        await post('/api/agent/register/challenge', { mode: 'privy', network: 'testnet', agentAddress: OTHER_BAD_CHECKSUM, humanAddress }),
        'agentAddress',
        checksumRule,
      );
      expect400(
        await post('/api/agent/register/challenge', {
          mode: 'privy',
          network: 'testnet',
          agentAddress: OTHER_CHECKSUMMED,
          humanAddress: BAD_CHECKSUM,
        }),
        'humanAddress',
        checksumRule,
      );
      const pubkey = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
      expect400(
        await post('/api/agent/register/ed25519-challenge', { pubkey, network: 'testnet', humanAddress: BAD_CHECKSUM }),
        'humanAddress',
        checksumRule,
      );
      expect400(await post('/api/agent/deregister', { network: 'testnet', agentAddress: BAD_CHECKSUM }), 'agentAddress', checksumRule);
      expect400(await request(app).get(`/api/agent/agents/11142220/${BAD_CHECKSUM}`), 'address', checksumRule);

      await expectRefused(services.registration.start({ mode: 'linked', network: 'testnet', humanAddress: BAD_CHECKSUM }), checksumRule);
      await expectRefused(services.deregistration.start({ network: 'testnet', agentAddress: BAD_CHECKSUM }), checksumRule);
    });

    it('all-lowercase, all-uppercase and checksummed addresses are accepted, and answered checksummed', async () => {
      for (const humanAddress of [CHECKSUMMED, CHECKSUMMED.toLowerCase(), `0x${CHECKSUMMED.slice(2).toUpperCase()}`]) {
        const res = await post('/api/agent/register', { mode: 'linked', network: 'testnet', humanAddress });
        expect(res.status, `${humanAddress}: ${JSON.stringify(res.body)}`).toBe(200);
        const agents = await request(app).get(`/api/agent/agents/11142220/${humanAddress}`);
        expect(agents.status).toBe(200);
        expect(agents.body.humanAddress).toBe(CHECKSUMMED);
      }
      const challenge = await post('/api/agent/register/challenge', {
        mode: 'privy',
        network: 'testnet',
        agentAddress: OTHER_CHECKSUMMED.toLowerCase(),
        humanAddress: CHECKSUMMED,
      });
      expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
      expect(challenge.body.human).toBe(CHECKSUMMED);
      // a well-formed address of no agent gets past validation to the registry: 404
      const deregister = await post('/api/agent/deregister', { network: 'testnet', agentAddress: newAccount().address.toLowerCase() });
      expect(deregister.status, JSON.stringify(deregister.body)).toBe(404);
    });
  });

  describe('ECDSA signatures', () => {
    it('a recovery byte other than 1b, 1c, 00 or 01 is a 400 naming it, not a failure of the service', async () => {
      const body = { mode: 'privy', network: 'testnet', humanAddress: newAccount().address, agentAddress: newAccount().address };
      for (const v of ['02', '1d', 'ff']) {
        const agentSignature = `0x${'11'.repeat(64)}${v}`;
        expect400(
          await post('/api/agent/register', { ...body, agentSignature }),
          'agentSignature',
          /ending in its recovery byte \(1b, 1c, 00 or 01\)/,
        );
        await expectRefused(
          services.registration.start({ ...body, agentSignature }),
          new RegExp(`^agentSignature must end in its recovery byte v: .*; got ${v}$`),
        );
      }
    });
  });

  describe('Ed25519 public keys the registry refuses', () => {
    const signature = 'ab'.repeat(64);

    it.each(SMALL_ORDER_KEYS.map((key) => [key]))('small order %s: no challenge, no session', async (key) => {
      for (const pubkey of [key, `0x${key}`]) {
        expect400(await post('/api/agent/register/ed25519-challenge', { pubkey, network: 'testnet' }), 'pubkey', KEY_RULE);
        for (const mode of ['ed25519', 'ed25519-linked']) {
          const body = { mode, network: 'testnet', humanAddress: newAccount().address, ed25519Pubkey: pubkey, ed25519Signature: signature };
          expect400(await post('/api/agent/register', body), 'ed25519Pubkey', KEY_RULE);
        }
      }
      await expectRefused(services.registration.ed25519Challenge({ pubkey: key }), KEY_RULE);
      await expectRefused(
        services.registration.start({ mode: 'ed25519', network: 'testnet', ed25519Pubkey: key, ed25519Signature: signature }),
        KEY_RULE,
      );
    });

    it.each(NON_CANONICAL_KEYS.map((key) => [key]))('non-canonical %s: no challenge, no session', async (key) => {
      expect400(await post('/api/agent/register/ed25519-challenge', { pubkey: key, network: 'testnet' }), 'pubkey', KEY_RULE);
      expect400(
        await post('/api/agent/register', { mode: 'ed25519', network: 'testnet', ed25519Pubkey: key, ed25519Signature: signature }),
        'ed25519Pubkey',
        KEY_RULE,
      );
      await expectRefused(services.registration.ed25519Challenge({ pubkey: key }), KEY_RULE);
    });

    it('an honest key still gets its challenge, with or without 0x, in either case', async () => {
      const key = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())) as Hex;
      for (const pubkey of [key, key.slice(2), `0x${key.slice(2).toUpperCase()}`]) {
        const res = await post('/api/agent/register/ed25519-challenge', { pubkey, network: 'testnet' });
        expect(res.status, `${pubkey}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });
  });
});
