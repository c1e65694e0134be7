// Registration sessions at their edges, over real HTTP and real chains: token lifetime and integrity, token
// scopes and types, stage rules (QR, export), request validation, the identity app's callback, the
// registry's one-agent-per-human limit, a restart between register and approve, the token transports,
// the rate limit, token rotation, caching, and where the generated private key must never appear.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Express } from 'express';
import request from 'supertest';
import { type Address, bytesToHex, type Hex, hexToBytes, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { SessionTokens } from '../../src/sessions/session-token.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { expectSubmitted, newAccount } from '../support/agents.js';
import { type TestApp, type TestAppOptions, testApp } from '../support/app.js';
import type { TestSystem } from '../support/chain.js';
import {
  approveDeepLink,
  callbackTarget,
  callbackTokenOf,
  deployTestNetworks,
  newDocument,
  selfAppOf,
  type TestNetworks,
} from '../support/registration-flow.js';
import { nullifierOf } from '../support/registry.js';

const THIRTY_MINUTES = 30 * 60 * 1000;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

type Body = Record<string, unknown>;

/** A clock the test moves by hand. */
function manualClock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The token with one character of part `index` (0 header, 2 iv, 3 ciphertext, 4 tag) changed. */
function tampered(token: string, index: number): string {
  const parts = token.split('.');
  const part = parts[index]!;
  const at = Math.floor(part.length / 2);
  const replacement = part[at] === 'A' ? 'B' : 'A';
  parts[index] = `${part.slice(0, at)}${replacement}${part.slice(at + 1)}`;
  return parts.join('.');
}

describe('registration sessions: errors, limits and transports', () => {
  let net: TestNetworks;
  let testnet: TestSystem;

  beforeAll(async () => {
    net = await deployTestNetworks();
    testnet = net.testnet;
  });

  /** A fresh service over the shared chains (its own store: its own sessions and rate-limit counters). */
  const newService = (options: TestAppOptions = {}): TestApp => testApp(net.chains, options);
  const newApp = (): Express => newService().app;

  async function register(app: Express, body: Body = { mode: 'wallet-free', network: 'testnet' }): Promise<Body> {
    const res = await request(app).post('/api/agent/register').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Body;
  }

  const linkedBody = (): Body => ({ mode: 'linked', network: 'testnet', humanAddress: newAccount().address });

  const status = (app: Express, token: string) => request(app).get('/api/agent/register/status').query({ token });
  const qr = (app: Express, token: string) => request(app).get('/api/agent/register/qr').query({ token });
  const exportKey = (app: Express, token: string) => request(app).get('/api/agent/register/export').query({ token });
  const callback = (app: Express, token: string, body: unknown) =>
    request(app)
      .post('/api/agent/register/callback')
      .query({ token })
      .send(body as object);

  /** Registers and has the human approve; the session is completed. */
  async function completed(app: Express, body: Body = { mode: 'wallet-free', network: 'testnet' }) {
    const session = await register(app, body);
    const approval = await approveDeepLink(app, net, session['deepLink'] as string);
    expectSubmitted(approval.proof);
    expect(approval.callback?.body).toEqual({ received: true, stage: 'completed' });
    return { session, txHash: approval.proof.txHash, token: session['sessionToken'] as string };
  }

  async function expectError(res: request.Response, code: number, message: RegExp | string): Promise<void> {
    expect(res.status, JSON.stringify(res.body)).toBe(code);
    if (typeof message === 'string') expect(res.body).toEqual({ error: message });
    else expect(res.body.error).toMatch(message);
  }

  describe('session tokens', () => {
    it('a token expires 30 minutes after the session opened: 410 on status, QR, export and callback', async () => {
      const clock = manualClock();
      const { app } = newService({ clock: clock.now });
      const session = await register(app);
      const token = session['sessionToken'] as string;
      expect(session['timeRemainingMs']).toBe(THIRTY_MINUTES);
      expect(Date.parse(session['expiresAt'] as string)).toBe(clock.now() + THIRTY_MINUTES);

      clock.advance(THIRTY_MINUTES - 1);
      const last = await status(app, token);
      expect(last.status).toBe(200);
      expect(last.body.timeRemainingMs).toBe(1);

      clock.advance(1);
      await expectError(await status(app, token), 410, 'Session expired');
      await expectError(await qr(app, token), 410, 'Session expired');
      await expectError(await exportKey(app, token), 410, 'Session expired');
      const deepLink = session['deepLink'] as string;
      await expectError(await callback(app, callbackTokenOf(deepLink), { status: 'error', error: 'too late' }), 410, 'Session expired');
    });

    it('an altered token answers 401, whichever part was changed', async () => {
      const app = newApp();
      const token = (await register(app))['sessionToken'] as string;
      for (const index of [0, 2, 3, 4]) {
        await expectError(await status(app, tampered(token, index)), 401, 'Invalid session token');
      }
      await expectError(await status(app, 'not-a-token'), 401, 'Invalid session token');
      await expectError(await exportKey(app, `${token}x`), 401, 'Invalid session token');
      // The genuine token still works.
      expect((await status(app, token)).status).toBe(200);
    });

    it('a token made with another secret answers 401, even for a session id this service knows', async () => {
      const service = newService();
      const session = await register(service.app);
      const other = newService();
      const foreign = (await register(other.app))['sessionToken'] as string;
      await expectError(await status(service.app, foreign), 401, 'Invalid session token');

      const forged = await new SessionTokens(randomBytes(32)).issue({
        sessionId: selfAppOf(session['deepLink'] as string).sessionId,
        type: 'register',
        scope: 'session',
        expiresAt: Date.parse(session['expiresAt'] as string),
      });
      await expectError(await status(service.app, forged), 401, 'Invalid session token');
      await expectError(await exportKey(service.app, forged), 401, 'Invalid session token');
    });

    it('the callback token of the deep link opens nothing but the callback: 401 on status, QR and export', async () => {
      const app = newApp();
      const session = await register(app);
      const callbackToken = callbackTokenOf(session['deepLink'] as string);
      await expectError(await status(app, callbackToken), 401, 'Invalid session token');
      await expectError(await qr(app, callbackToken), 401, 'Invalid session token');
      await expectError(await exportKey(app, callbackToken), 401, 'Invalid session token');
    });

    it("the caller's session token is not a callback token: 401, and the session does not move", async () => {
      const app = newApp();
      const session = await register(app);
      const token = session['sessionToken'] as string;
      await expectError(await callback(app, token, { status: 'error', error: 'forged by the caller' }), 401, 'Invalid session token');
      await expectError(await callback(app, token, { status: 'success', txHash: keccak256(randomBytes(32)) }), 401, 'Invalid session token');
      expect((await status(app, token)).body.stage).toBe('qr-ready');
    });

    it('a genuine token of another session type answers 400', async () => {
      const clock = manualClock();
      const service = newService({ clock: clock.now });
      const session = await register(service.app);
      const tokens = new SessionTokens(service.sessionSecret, clock.now);
      const claims = {
        sessionId: selfAppOf(session['deepLink'] as string).sessionId,
        expiresAt: Date.parse(session['expiresAt'] as string),
      };
      const deregister = await tokens.issue({ ...claims, type: 'deregister', scope: 'session' });
      await expectError(await status(service.app, deregister), 400, 'Token is not for a register session');
      await expectError(await qr(service.app, deregister), 400, 'Token is not for a register session');
      await expectError(await exportKey(service.app, deregister), 400, 'Token is not for a register session');
      const refreshCallback = await tokens.issue({ ...claims, type: 'refresh', scope: 'callback' });
      await expectError(await callback(service.app, refreshCallback, { status: 'error', error: 'x' }), 400, 'Token is not for a register session');
      expect((await status(service.app, session['sessionToken'] as string)).body.stage).toBe('qr-ready');
    });

    it('every answer of a session carries a new token for the same session, secrets and expiry (no sliding)', async () => {
      const clock = manualClock();
      const service = newService({ clock: clock.now });
      const tokens = new SessionTokens(service.sessionSecret, clock.now);
      const session = await register(service.app);
      const first = session['sessionToken'] as string;
      const expiresAt = session['expiresAt'] as string;
      const opened = await tokens.open(first, { type: 'register' });
      expect(opened.secrets?.agentPrivateKey).toMatch(/^0x[0-9a-f]{64}$/i);

      const seen = [first];
      const next = async (res: request.Response): Promise<string> => {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const token = res.body.sessionToken as string;
        expect(typeof token).toBe('string');
        expect(seen).not.toContain(token);
        seen.push(token);
        expect(res.body.expiresAt).toBe(expiresAt);
        expect(res.body.timeRemainingMs).toBe(Date.parse(expiresAt) - clock.now());
        expect(await tokens.open(token, { type: 'register' })).toEqual(opened);
        return token;
      };

      clock.advance(5 * 60 * 1000);
      const second = await next(await status(service.app, first));
      const third = await next(await qr(service.app, second));
      // The deep link's callback answers the identity app only: no session token for it.
      const approval = await approveDeepLink(service.app, net, session['deepLink'] as string);
      expectSubmitted(approval.proof);
      expect(approval.callback?.body).toEqual({ received: true, stage: 'completed' });
      clock.advance(60 * 1000);
      const fourth = await next(await status(service.app, third));

      // Every token, old or new, carries the key (the secrets travel in each), until the one expiry; the key is
      // handed out once, so the first export is the only one, whichever token asks again.
      const exported = await exportKey(service.app, fourth);
      expect(exported.status).toBe(200);
      expect(exported.body.privateKey).toBe(opened.secrets?.agentPrivateKey);
      await expectError(await exportKey(service.app, first), 409, /^The key was already exported/);

      clock.advance(Date.parse(expiresAt) - clock.now());
      for (const token of seen) await expectError(await status(service.app, token), 410, 'Session expired');
    });
  });

  describe('QR and export by stage', () => {
    it('the QR again while the session waits: JSON with the same request, or a PNG with format=png', async () => {
      const app = newApp();
      const session = await register(app);
      const token = session['sessionToken'] as string;

      const json = await qr(app, token);
      expect(json.status).toBe(200);
      expect(json.headers['content-type']).toMatch(/^application\/json/);
      expect(json.body).toMatchObject({ stage: 'qr-ready', expiresAt: session['expiresAt'] });
      expect(json.body.qrData).toBe(json.body.deepLink);
      expect(json.body.qrImageBase64).toMatch(/^iVBORw0KGgo/);
      // The same request to the app (the callback URL carries a freshly encrypted token).
      const { deeplinkCallback: _a, ...before } = selfAppOf(session['deepLink'] as string);
      const { deeplinkCallback: _b, ...after } = selfAppOf(json.body.deepLink as string);
      expect(after).toEqual(before);

      const png = await request(app).get('/api/agent/register/qr').query({ token, format: 'png' });
      expect(png.status).toBe(200);
      expect(png.headers['content-type']).toMatch(/^image\/png/);
      const bytes = png.body as Buffer;
      expect(Buffer.isBuffer(bytes)).toBe(true);
      expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      expect(bytes.length).toBeGreaterThan(100);
    });

    it('the QR after completion answers 409', async () => {
      const app = newApp();
      const { token } = await completed(app);
      await expectError(await qr(app, token), 409, /completed/);
      const png = await request(app).get('/api/agent/register/qr').query({ token, format: 'png' });
      expect(png.status).toBe(409);
    });

    it('export before completion answers 409 and says why', async () => {
      const app = newApp();
      const session = await register(app, linkedBody());
      await expectError(await exportKey(app, session['sessionToken'] as string), 409, /completed.*qr-ready/);
    });

    it('export for privy answers 400: the service never had the key', async () => {
      const app = newApp();
      const human = newAccount().address;
      const agent = newAccount();
      const challenge = await request(app)
        .post('/api/agent/register/challenge')
        .send({ mode: 'privy', network: 'testnet', agentAddress: agent.address, humanAddress: human });
      expect(challenge.status).toBe(200);
      const agentSignature = await agent.signMessage({ message: { raw: challenge.body.challengeHash as Hex } });
      const session = await register(app, { mode: 'privy', network: 'testnet', humanAddress: human, agentAddress: agent.address, agentSignature });
      const token = session['sessionToken'] as string;
      await expectError(await exportKey(app, token), 400, /not available for privy.*wallet provider/);

      const approval = await approveDeepLink(app, net, session['deepLink'] as string);
      expectSubmitted(approval.proof);
      expect((await status(app, token)).body.stage).toBe('completed');
      await expectError(await exportKey(app, token), 400, /not available for privy/);
    });

    it('export for an Ed25519 key the caller brought answers 400 once completed', async () => {
      const app = newApp();
      const seed = ed25519.utils.randomSecretKey();
      const pubkey = bytesToHex(ed25519.getPublicKey(seed));
      const challenge = await request(app).post('/api/agent/register/ed25519-challenge').send({ pubkey, network: 'testnet' });
      expect(challenge.status).toBe(200);
      const signature = bytesToHex(ed25519.sign(hexToBytes(challenge.body.challengeHash as Hex), seed));
      const { token } = await completed(app, { mode: 'ed25519', network: 'testnet', ed25519Pubkey: pubkey, ed25519Signature: signature });
      await expectError(await exportKey(app, token), 400, /never had its private key/);
    });
  });

  describe('request validation: 400 naming what to fix', () => {
    const human = '0x1111111111111111111111111111111111111111';
    const cases: Array<[string, Body, RegExp]> = [
      ['mode missing', { network: 'testnet' }, /^mode: must be a string: one of linked, wallet-free, ed25519, ed25519-linked, privy, smartwallet/],
      ['mode not a string', { mode: 5 }, /^mode: must be a string/],
      [
        'mode unknown',
        { mode: 'verified-wallet', network: 'testnet' },
        /^mode: unknown mode "verified-wallet": use one of linked, wallet-free, ed25519, ed25519-linked, privy, smartwallet \(aliases: agent-identity = linked, walletfree = wallet-free\)/,
      ],
      [
        'network unknown',
        { mode: 'wallet-free', network: 'goerli' },
        /^network: unsupported network "goerli": use "mainnet" \(chain id 42220\) or "testnet" \(chain id 11142220\)/,
      ],
      ['network deprecated 44787', { mode: 'wallet-free', network: '44787' }, /^network: unsupported network "44787"/],
      [
        'humanAddress missing for linked',
        { mode: 'linked', network: 'testnet' },
        /^humanAddress is required for mode linked and must be a 0x-prefixed 20-byte hex address/,
      ],
      [
        'humanAddress invalid for linked',
        { mode: 'linked', network: 'testnet', humanAddress: '0x1234' },
        /^humanAddress: must be a 0x-prefixed 20-byte hex address/,
      ],
      [
        'humanAddress missing for ed25519-linked',
        { mode: 'ed25519-linked', network: 'testnet' },
        /^humanAddress is required for mode ed25519-linked/,
      ],
      ['humanAddress missing for smartwallet', { mode: 'smartwallet', network: 'testnet' }, /^humanAddress is required for mode smartwallet/],
      [
        'minimumAge 17',
        { mode: 'wallet-free', network: 'testnet', disclosures: { minimumAge: 17 } },
        /^disclosures\.minimumAge: must be the number 0, 18 or 21/,
      ],
      [
        'minimumAge as text',
        { mode: 'wallet-free', network: 'testnet', disclosures: { minimumAge: '18' } },
        /^disclosures\.minimumAge: must be the number 0, 18 or 21/,
      ],
      ['ofac "yes"', { mode: 'wallet-free', network: 'testnet', disclosures: { ofac: 'yes' } }, /^disclosures\.ofac: must be true or false/],
      [
        'nationality 1',
        { mode: 'wallet-free', network: 'testnet', disclosures: { nationality: 1 } },
        /^disclosures\.nationality: must be true or false/,
      ],
      ['name "no"', { mode: 'wallet-free', network: 'testnet', disclosures: { name: 'no' } }, /^disclosures\.name: must be true or false/],
      ['disclosures not an object', { mode: 'wallet-free', network: 'testnet', disclosures: 'all' }, /^disclosures: must be an object/],
      [
        'agentSignature missing for privy',
        { mode: 'privy', network: 'testnet', humanAddress: human, agentAddress: newAccount().address },
        /^privy mode: the agent key lives in the human's Privy embedded wallet.*POST \/api\/agent\/register\/challenge.*agentSignature/,
      ],
      [
        'agentAddress and agentSignature missing for smartwallet',
        { mode: 'smartwallet', network: 'testnet', humanAddress: human },
        /^smartwallet mode: the agent key lives in the human's passkey smart account.*POST \/api\/agent\/register\/challenge/,
      ],
      [
        'agentSignature malformed',
        { mode: 'privy', network: 'testnet', humanAddress: human, agentAddress: newAccount().address, agentSignature: '0x1234' },
        /^agentSignature: must be the 65-byte \(130 hex\) signature/,
      ],
      [
        'agentAddress invalid',
        { mode: 'privy', network: 'testnet', humanAddress: human, agentAddress: 'bob', agentSignature: `0x${'11'.repeat(65)}` },
        /^agentAddress: must be a 0x-prefixed 20-byte hex address/,
      ],
      [
        'ed25519Pubkey without signature',
        { mode: 'ed25519', network: 'testnet', ed25519Pubkey: bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())) },
        /^Send both ed25519Pubkey and ed25519Signature/,
      ],
      [
        'ed25519Signature without pubkey',
        { mode: 'ed25519', network: 'testnet', ed25519Signature: 'ab'.repeat(64) },
        /^Send both ed25519Pubkey and ed25519Signature/,
      ],
      [
        'ed25519Pubkey of the wrong length',
        { mode: 'ed25519', network: 'testnet', ed25519Pubkey: 'abcd', ed25519Signature: 'ab'.repeat(64) },
        /^ed25519Pubkey: must be a 64-hex-character Ed25519 public key/,
      ],
      [
        'ed25519Pubkey not on the curve',
        { mode: 'ed25519', network: 'testnet', ed25519Pubkey: 'ff'.repeat(32), ed25519Signature: 'ab'.repeat(64) },
        /^ed25519Pubkey: must be a 64-hex-character Ed25519 public key: the canonical encoding of a curve point/,
      ],
      [
        'ed25519Signature of the wrong length',
        {
          mode: 'ed25519',
          network: 'testnet',
          ed25519Pubkey: bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey())),
          ed25519Signature: 'abcd',
        },
        /^ed25519Signature: must be 128 hex characters/,
      ],
      ['body an array', [{ mode: 'wallet-free' }] as unknown as Body, /^request body: must be a JSON object/],
    ];

    it.each(cases)('%s', async (_name, body, message) => {
      const res = await request(newApp()).post('/api/agent/register').send(body);
      await expectError(res, 400, message);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it("an agentSignature by another key, or over the other mode's challenge, does not verify", async () => {
      const app = newApp();
      const human = newAccount().address;
      const agent = newAccount();
      const challenge = async (mode: string) =>
        (
          await request(app)
            .post('/api/agent/register/challenge')
            .send({ mode, network: 'testnet', agentAddress: agent.address, humanAddress: human })
        ).body.challengeHash as Hex;
      const stranger = await newAccount().signMessage({ message: { raw: await challenge('privy') } });
      const smartwalletSignature = await agent.signMessage({ message: { raw: await challenge('smartwallet') } });
      for (const agentSignature of [stranger, smartwalletSignature]) {
        const res = await request(app)
          .post('/api/agent/register')
          .send({ mode: 'privy', network: 'testnet', humanAddress: human, agentAddress: agent.address, agentSignature });
        await expectError(res, 400, /^agentSignature does not verify: sign the challengeHash of POST \/api\/agent\/register\/challenge/);
      }
    });

    it('smartwallet needs the guardian to sign the same challenge: missing, malformed, or by another signer is 400', async () => {
      const app = newApp();
      const guardian = newAccount();
      const agent = newAccount();
      const challengeHash = (
        await request(app)
          .post('/api/agent/register/challenge')
          .send({ mode: 'smartwallet', network: 'testnet', agentAddress: agent.address, humanAddress: guardian.address })
      ).body.challengeHash as Hex;
      const agentSignature = await agent.signMessage({ message: { raw: challengeHash } });
      const open = (guardianSignature?: string) =>
        request(app)
          .post('/api/agent/register')
          .send({
            mode: 'smartwallet',
            network: 'testnet',
            humanAddress: guardian.address,
            agentAddress: agent.address,
            agentSignature,
            ...(guardianSignature === undefined ? {} : { guardianSignature }),
          });
      await expectError(
        await open(),
        400,
        /^smartwallet mode needs the guardian's consent: the smart account named as humanAddress signs the same challengeHash/,
      );
      await expectError(
        await open('0x1234'),
        400,
        /^guardianSignature: must be the smart account's signature of the challenge: hex of 65 to 8192 bytes/,
      );
      await expectError(
        await open(`0x${'ab'.repeat(8_193)}`),
        400,
        /^guardianSignature: must be the smart account's signature of the challenge: hex of 65 to 8192 bytes/,
      );
      const byStranger = await newAccount().signMessage({ message: { raw: challengeHash } });
      await expectError(await open(byStranger), 400, /^guardianSignature does not verify/);
      // the agent's own signature is not the guardian's consent
      await expectError(await open(agentSignature), 400, /^guardianSignature does not verify/);
      const consent = await guardian.signMessage({ message: { raw: challengeHash } });
      expect((await open(consent)).status).toBe(200);
    });

    it('an Ed25519 signature over anything but the challenge, or by another key, does not verify', async () => {
      const app = newApp();
      const seed = ed25519.utils.randomSecretKey();
      const pubkey = bytesToHex(ed25519.getPublicKey(seed));
      const challenge = await request(app).post('/api/agent/register/ed25519-challenge').send({ pubkey, network: 'testnet' });
      expect(challenge.status).toBe(200);
      const hash = hexToBytes(challenge.body.challengeHash as Hex);
      const mainnetChallenge = await request(app).post('/api/agent/register/ed25519-challenge').send({ pubkey, network: 'mainnet' });
      const signatures = [
        ed25519.sign(hexToBytes(mainnetChallenge.body.challengeHash as Hex), seed), // another chain's challenge
        ed25519.sign(hash, ed25519.utils.randomSecretKey()), // another key
        ed25519.sign(new TextEncoder().encode(challenge.body.challengeHash as string), seed), // the hex text, not the bytes
      ];
      for (const signature of signatures) {
        const res = await request(app)
          .post('/api/agent/register')
          .send({ mode: 'ed25519', network: 'testnet', ed25519Pubkey: pubkey, ed25519Signature: bytesToHex(signature) });
        await expectError(res, 400, /^ed25519Signature does not verify: sign the challengeHash of POST \/api\/agent\/register\/ed25519-challenge/);
      }
    });

    it('malformed JSON, or JSON that is not an object, answers 400', async () => {
      const app = newApp();
      const send = (raw: string) => request(app).post('/api/agent/register').set('Content-Type', 'application/json').send(raw);
      await expectError(await send('{"mode": "linked",'), 400, 'Request body is not valid JSON');
      for (const raw of ['"linked"', '42', 'null']) {
        const res = await send(raw);
        expect(res.status, raw).toBe(400);
        expect(typeof res.body.error, raw).toBe('string');
      }
    });

    it('the challenges validate too', async () => {
      const app = newApp();
      const agentAddress = newAccount().address;
      const humanAddress = newAccount().address;
      const challenge = (body: Body) => request(app).post('/api/agent/register/challenge').send(body);
      await expectError(
        await challenge({ mode: 'linked', network: 'testnet', agentAddress, humanAddress }),
        400,
        /^mode: must be privy or smartwallet: the ECDSA challenge is for the modes whose agent key a wallet provider holds/,
      );
      await expectError(
        await challenge({ mode: 'privy', network: 'testnet', agentAddress: '0x12', humanAddress }),
        400,
        /^agentAddress: must be a 0x-prefixed 20-byte hex address/,
      );
      await expectError(
        await challenge({ mode: 'privy', network: 'testnet', agentAddress, humanAddress: 'me' }),
        400,
        /^humanAddress: must be a 0x-prefixed 20-byte hex address/,
      );
      const ed = (body: Body) => request(app).post('/api/agent/register/ed25519-challenge').send(body);
      await expectError(await ed({ network: 'testnet' }), 400, /^pubkey: must be a string/);
      await expectError(await ed({ pubkey: 'ff'.repeat(32), network: 'testnet' }), 400, /^pubkey: must be a 64-hex-character Ed25519 public key/);
      const pubkey = bytesToHex(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
      await expectError(
        await ed({ pubkey, network: 'testnet', humanAddress: '0x12' }),
        400,
        /^humanAddress: must be a 0x-prefixed 20-byte hex address/,
      );
    });
  });

  describe("the identity app's callback", () => {
    it("a failure callback fails the session with the app's error", async () => {
      const app = newApp();
      const session = await register(app, linkedBody());
      const token = session['sessionToken'] as string;
      const answer = await request(app)
        .post(callbackTarget(session['deepLink'] as string))
        .send({ status: 'error', error: 'the user rejected the verification request' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ received: true, stage: 'failed' });

      const res = await status(app, token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ stage: 'failed', error: 'the user rejected the verification request' });
      expect(res.body.agentId).toBeUndefined();
      await expectError(await qr(app, token), 409, /failed/);
      await expectError(await exportKey(app, token), 409, /failed/);
    });

    it('a malformed callback answers 400 and changes nothing', async () => {
      const app = newApp();
      const session = await register(app);
      const target = callbackTarget(session['deepLink'] as string);
      const post = (body: unknown) =>
        request(app)
          .post(target)
          .send(body as object);
      await expectError(await post({ status: 'success' }), 400, /^A success callback must carry the txHash/);
      await expectError(await post({ status: 'done', txHash: keccak256(randomBytes(32)) }), 400, /^status: must be "success" or "error"/);
      await expectError(await post({}), 400, /^status: must be "success" or "error"/);
      await expectError(await post({ status: 'error' }), 400, /^An error callback must say what went wrong in "error"/);
      await expectError(await post({ status: 'success', txHash: '0x1234' }), 400, /^txHash: must be a 0x-prefixed 32-byte transaction hash/);
      await expectError(await post([]), 400, /^callback body: must be a JSON object/);
      await expectError(await request(app).post('/api/agent/register/callback').send({ status: 'error', error: 'x' }), 400, /^Missing session token/);
      expect((await status(app, session['sessionToken'] as string)).body.stage).toBe('qr-ready');
    });

    it('is idempotent, and nothing moves a completed session', async () => {
      const app = newApp();
      const { session, txHash, token } = await completed(app);
      const target = callbackTarget(session['deepLink'] as string);
      const before = (await status(app, token)).body;

      for (const body of [
        { status: 'success', txHash },
        { status: 'success', txHash },
        { status: 'error', error: 'a late failure report' },
        { status: 'success', txHash: keccak256(randomBytes(32)) },
      ]) {
        const answer = await request(app).post(target).send(body);
        expect(answer.status, JSON.stringify(body)).toBe(200);
        expect(answer.body).toEqual({ received: true, stage: 'completed' });
      }
      const after = (await status(app, token)).body;
      expect(after).toMatchObject({ stage: 'completed', txHash, agentId: before.agentId, credentials: before.credentials });
      expect(after.error).toBeUndefined();
    });

    it('a success callback naming a transaction that reverted fails the session', async () => {
      const app = newApp();
      const session = await register(app);
      const wallet = await testnet.newWallet();
      // A call the registry refuses, mined anyway (the gas is given, so nothing simulates it first).
      const hash = await wallet.sendTransaction({
        account: wallet.account,
        chain: wallet.chain,
        to: testnet.deployment.contracts.registry,
        data: '0xdeadbeef',
        gas: 100_000n,
      });
      expect((await testnet.client.waitForTransactionReceipt({ hash })).status).toBe('reverted');

      const answer = await request(app)
        .post(callbackTarget(session['deepLink'] as string))
        .send({ status: 'success', txHash: hash });
      expect(answer.body).toEqual({ received: true, stage: 'failed' });
      const res = await status(app, session['sessionToken'] as string);
      expect(res.body).toMatchObject({ stage: 'failed', error: 'The registration transaction reverted on chain' });
    });

    it('waits at proof-received for a reported transaction, and reports the transaction that registered the agent', async () => {
      const app = newApp();
      const session = await register(app);
      const token = session['sessionToken'] as string;
      const unknownTx = keccak256(randomBytes(32));
      const answer = await request(app)
        .post(callbackTarget(session['deepLink'] as string))
        .send({ status: 'success', txHash: unknownTx });
      expect(answer.body).toEqual({ received: true, stage: 'proof-received' });
      const waiting = await status(app, token);
      expect(waiting.body.stage).toBe('proof-received');
      expect(waiting.body.humanInstructions.length).toBeGreaterThan(0);

      // The proof lands in another transaction (e.g. the relayer re-sent it); no further callback arrives.
      const { proof } = await approveDeepLink(app, net, session['deepLink'] as string, { callback: false });
      expectSubmitted(proof);
      const res = await status(app, token);
      expect(res.body.stage).toBe('completed');
      expect(res.body.txHash).toBe(proof.txHash);
    });
  });

  it("a second agent for the same human beyond the registry's limit fails with the registry's reason", async () => {
    const app = newApp();
    expect(await testnet.gateway.registry.maxAgentsPerHuman()).toBe(1n);
    const document = newDocument();

    const first = await register(app, linkedBody());
    const approved = await approveDeepLink(app, net, first['deepLink'] as string, { document });
    expectSubmitted(approved.proof);
    expect((await status(app, first['sessionToken'] as string)).body.stage).toBe('completed');

    const second = await register(app, { mode: 'wallet-free', network: 'testnet' });
    const refused = await approveDeepLink(app, net, second['deepLink'] as string, { document });
    const reason = `TooManyAgentsForHuman(${await nullifierOf(testnet, document)}, 1)`;
    expect(refused.proof.status === 'reverted' ? refused.proof.reason : 'submitted').toBe(reason);
    expect(refused.callback?.status).toBe(200);
    expect(refused.callback?.body).toEqual({ received: true, stage: 'failed' });

    const res = await status(app, second['sessionToken'] as string);
    expect(res.body).toMatchObject({ stage: 'failed', error: reason });
    expect(await testnet.gateway.registry.agentIdOf(addressAgentKey(second['agentAddress'] as Address))).toBe(0n);
  });

  it('a restart between register and approve loses nothing: the new process completes the session', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registration-restart-'));
    const file = join(dir, 'service.sqlite');
    const sessionSecret = randomBytes(32);
    const before = newService({ store: new SqliteStore(file), sessionSecret });
    let reopened: SqliteStore | undefined;
    try {
      const session = await register(before.app, linkedBody());
      const token = session['sessionToken'] as string;
      await before.store.close();

      reopened = new SqliteStore(file);
      const restarted = newService({ store: reopened, sessionSecret });
      expect((await status(restarted.app, token)).body.stage).toBe('qr-ready');
      const approval = await approveDeepLink(restarted.app, net, session['deepLink'] as string);
      expectSubmitted(approval.proof);
      expect(approval.callback?.body).toEqual({ received: true, stage: 'completed' });

      const res = await status(restarted.app, token);
      expect(res.body).toMatchObject({ stage: 'completed', txHash: approval.proof.txHash });
      const exported = await exportKey(restarted.app, token);
      expect(exported.status).toBe(200);
      expect(privateKeyToAccount(exported.body.privateKey as Hex).address).toBe(session['agentAddress']);
    } finally {
      await before.store.close();
      await reopened?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('token transports', () => {
    it('status and QR take the token as ?token= or Authorization: Bearer', async () => {
      const app = newApp();
      const token = (await register(app))['sessionToken'] as string;
      for (const path of ['/api/agent/register/status', '/api/agent/register/qr']) {
        const byQuery = await request(app).get(path).query({ token });
        expect(byQuery.status, path).toBe(200);
        const byHeader = await request(app).get(path).set('Authorization', `Bearer ${token}`);
        expect(byHeader.status, path).toBe(200);
        expect(byHeader.body.stage).toBe('qr-ready');
        const lowerCase = await request(app).get(path).set('Authorization', `bearer ${token}`);
        expect(lowerCase.status, path).toBe(200);
        await expectError(
          await request(app).get(path),
          400,
          /^Missing session token: send it as \?token=<sessionToken> or Authorization: Bearer <sessionToken>/,
        );
      }
    });

    it('export takes the token by GET ?token=, by Bearer, and by POST with {"token"} in the body', async () => {
      const app = newApp();
      const { session, token } = await completed(app, linkedBody());
      const first = await request(app).get('/api/agent/register/export').query({ token });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(privateKeyToAccount(first.body.privateKey as Hex).address).toBe(session['agentAddress']);
      // the key is handed out once: every other transport reaches the session (409, not 400 for a missing token)
      const again = [
        await request(app).get('/api/agent/register/export').set('Authorization', `Bearer ${token}`),
        await request(app).post('/api/agent/register/export').send({ token }),
        await request(app).post('/api/agent/register/export').set('Authorization', `Bearer ${token}`),
        await request(app).post('/api/agent/register/export').query({ token }),
      ];
      for (const res of again) await expectError(res, 409, /^The key was already exported/);
      await expectError(
        await request(app).post('/api/agent/register/export').send({}),
        400,
        /^Missing session token.*\{"token": \.\.\.\} in the body/,
      );
      await expectError(await request(app).post('/api/agent/register/export').send({ token: 'forged' }), 401, 'Invalid session token');
    });
  });

  describe('rate limit of session creation', () => {
    it('the 11th registration from one address within a minute answers 429 with Retry-After; the budget comes back as the window slides', async () => {
      // The limiter counts by Date.now (its library's clock): Date alone is faked, half-way through a minute.
      const start = Math.ceil(Date.now() / 60_000) * 60_000 + 30_000;
      vi.useFakeTimers({ toFake: ['Date'], now: start });
      try {
        await slidingLimit(start);
      } finally {
        vi.useRealTimers();
      }
    });

    async function slidingLimit(start: number): Promise<void> {
      const clock = manualClock(start);
      const advance = (ms: number): void => {
        clock.advance(ms);
        vi.setSystemTime(clock.now());
      };
      const { app } = newService({ clock: clock.now });
      const tokens: string[] = [];
      for (let i = 0; i < 10; i++) tokens.push((await register(app))['sessionToken'] as string);

      const limited = await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatch(/^Too many session creations: at most 10 per 60 s from one address/);
      const retryAfter = Number(limited.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The challenges count as session creation too.
      const challenge = await request(app)
        .post('/api/agent/register/ed25519-challenge')
        .send({ pubkey: 'ff'.repeat(32) });
      expect(challenge.status).toBe(429);

      // The sessions already open are not limited; another client address is not either.
      expect((await status(app, tokens[0]!)).status).toBe(200);
      const elsewhere = await request(app)
        .post('/api/agent/register')
        .set('X-Forwarded-For', '203.0.113.7')
        .send({ mode: 'wallet-free', network: 'testnet' });
      expect(elsewhere.status).toBe(200);

      // A new minute: the last minute's 10 still count in full, and the refused attempts counted nothing.
      advance(30_000);
      expect((await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' })).status).toBe(429);
      // Half-way through it, half of them count: 5 more fit, the 6th is refused.
      advance(30_000);
      for (let i = 0; i < 5; i++)
        expect((await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' })).status).toBe(200);
      expect((await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' })).status).toBe(429);
    }
  });

  it('session answers, errors included, are never cached', async () => {
    const app = newApp();
    const session = await register(app);
    const token = session['sessionToken'] as string;
    const answers = [
      await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' }),
      await request(app).post('/api/agent/register').send({ mode: 'nope' }),
      await status(app, token),
      await status(app, 'forged'),
      await qr(app, token),
      await request(app).get('/api/agent/register/qr').query({ token, format: 'png' }),
      await exportKey(app, token),
      await request(app).post('/api/agent/register/export').send({ token }),
      await request(app)
        .post(callbackTarget(session['deepLink'] as string))
        .send({ status: 'error', error: 'declined' }),
      await request(app).post('/api/agent/register/challenge').send({ mode: 'linked' }),
      await request(app).post('/api/agent/register/ed25519-challenge').send({ pubkey: 'ff' }),
    ];
    for (const res of answers) expect(res.headers['cache-control'], `${res.status} ${JSON.stringify(res.body)}`).toBe('no-store');
  });

  describe('the generated private key appears nowhere but in the export', () => {
    /** Every spelling of the key a body or link could carry. */
    const spellings = (key: Hex): string[] => [key.slice(2).toLowerCase(), key.slice(2).toUpperCase()];

    function expectAbsent(key: Hex, what: string, text: string): void {
      for (const spelling of spellings(key)) {
        expect(text.includes(spelling), `${what} contains the private key`).toBe(false);
        expect(decodeURIComponent(text).includes(spelling), `${what} (decoded) contains the private key`).toBe(false);
      }
    }

    it('linked: not in the register, status, QR or callback answers, nor the deep link; the export has it', async () => {
      const service = newService();
      const { app } = service;
      const session = await register(app, linkedBody());
      const token = session['sessionToken'] as string;
      const claims = await new SessionTokens(service.sessionSecret).open(token, { type: 'register' });
      const key = claims.secrets?.agentPrivateKey as Hex;
      expect(privateKeyToAccount(key).address).toBe(session['agentAddress']);

      const deepLink = session['deepLink'] as string;
      expectAbsent(key, 'deep link', deepLink);
      expectAbsent(key, 'register answer', JSON.stringify(session));
      expectAbsent(key, 'status answer', JSON.stringify((await status(app, token)).body));
      expectAbsent(key, 'QR answer', JSON.stringify((await qr(app, token)).body));
      // The deep link's callback token carries no secrets at all.
      const callbackClaims = await new SessionTokens(service.sessionSecret).open(callbackTokenOf(deepLink), { type: 'register', scope: 'callback' });
      expect(callbackClaims.secrets).toBeUndefined();

      const approval = await approveDeepLink(app, net, deepLink);
      expectSubmitted(approval.proof);
      expectAbsent(key, 'callback answer', JSON.stringify(approval.callback?.body));
      expectAbsent(key, 'completed status answer', JSON.stringify((await status(app, token)).body));
      expect((await exportKey(app, token)).body.privateKey).toBe(key);
    });

    it('ed25519 with a generated key: the seed is in no answer before export, nor in the deep link', async () => {
      const service = newService();
      const { app } = service;
      const session = await register(app, { mode: 'ed25519', network: 'testnet' });
      const token = session['sessionToken'] as string;
      const claims = await new SessionTokens(service.sessionSecret).open(token, { type: 'register' });
      const seed = claims.secrets?.ed25519PrivateKey as Hex;
      expect(seed).toMatch(/^0x[0-9a-f]{64}$/i);
      expect(claims.secrets?.agentPrivateKey).toBeUndefined();

      expectAbsent(seed, 'deep link', session['deepLink'] as string);
      expectAbsent(seed, 'register answer', JSON.stringify(session));
      expectAbsent(seed, 'status answer', JSON.stringify((await status(app, token)).body));
      expectAbsent(seed, 'QR answer', JSON.stringify((await qr(app, token)).body));
      expectAbsent(seed, 'export refusal', JSON.stringify((await exportKey(app, token)).body));
      const callbackClaims = await new SessionTokens(service.sessionSecret).open(callbackTokenOf(session['deepLink'] as string), {
        type: 'register',
        scope: 'callback',
      });
      expect(callbackClaims.secrets).toBeUndefined();
    });
  });
});
