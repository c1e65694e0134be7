// /api/agent/key-directory/{chainId}/{agentId} on real local chains, agents registered through the mock identity app:
// GET serves an Ed25519 agent's key as a JWKS (its kid the RFC 7638 thumbprint, computed here with jose) with the
// registry's proof-of-human claims, and 404 for a secp256k1 agent or an unknown id; POST publishes the agent's
// signature of its directory for the Host it is sent to, which GET then carries. A signature for another host, by
// another key, expired, with another tag or older than the one published is refused; one made by Cloudflare's
// web-bot-auth (directoryResponseHeaders) is accepted.
import { ed25519 } from '@noble/curves/ed25519.js';
import { calculateJwkThumbprint } from 'jose';
import request from 'supertest';
import { bytesToHex, hexToBytes } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders as cloudflareSign, directoryResponseHeaders } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import { KEY_DIRECTORY_MEDIA_TYPE, type KeyDirectorySignature, signKeyDirectory } from '../../src/core/key-directory.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { directoryOf, HOST, privateJwkOf, TESTNET_CHAIN_ID } from '../support/rfc9421.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';

describe('Ed25519 agents’ key directories', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let ed: RegisteredSigner;
  let secp: RegisteredSigner;
  /** The agent's public JWK and its RFC 7638 thumbprint, as jose computes it. */
  let jwk: { kty: string; crv: string; x: string };
  let kid: string;

  const pathOf = (agentId: number | bigint, chainId = TESTNET_CHAIN_ID) => `/api/agent/key-directory/${chainId}/${agentId}`;
  const get = (agentId: number | bigint, host = HOST) => request(q.app).get(pathOf(agentId)).set('host', host);
  const publish = (signature: KeyDirectorySignature, { agentId = ed.key.agentId, host = HOST }: { agentId?: number; host?: string } = {}) =>
    request(q.app).post(pathOf(agentId)).set('host', host).send(signature);
  const nowS = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    networks = await deployTestNetworks();
    q = await queryTestApp(networks);
    ed = await registeredSigner(q.app, networks, { mode: 'ed25519' });
    secp = await registeredSigner(q.app, networks, { mode: 'wallet-free' });
    jwk = { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hexToBytes(ed.key.publicKey!)).toString('base64url') };
    kid = await calculateJwkThumbprint(jwk, 'sha256');
  });

  afterAll(async () => {
    await q.stop();
  });

  it('GET serves the Ed25519 agent’s key as a JWKS, its kid the JWK thumbprint, with the proof-of-human claims', async () => {
    const res = await get(ed.key.agentId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.type).toBe(KEY_DIRECTORY_MEDIA_TYPE);
    // unsigned until the agent publishes a signature for this host
    expect(res.headers['signature']).toBeUndefined();
    expect(res.headers['signature-input']).toBeUndefined();

    expect(res.body.keys).toEqual([{ ...jwk, kid, use: 'sig' }]);

    const card = await request(q.app).get(`/api/cards/${TESTNET_CHAIN_ID}/${ed.key.agentId}`);
    expect(card.status).toBe(200);
    expect(res.body.proofOfHuman).toEqual(card.body.proofOfHuman);
    expect(res.body.proofOfHuman).toMatchObject({
      agentId: ed.key.agentId,
      chainId: TESTNET_CHAIN_ID,
      network: 'testnet',
      agentAddress: ed.key.agentAddress,
      isVerified: true,
      providerName: expect.any(String),
      verificationStrength: expect.any(Number),
    });
    expect(res.body.proofOfHuman.verificationStrength).toBeGreaterThan(0);
    expect(res.body.proofOfHuman.proofExpiresAt).toBeGreaterThan(nowS());
    expect(res.body.purpose).toEqual(expect.any(String));
  });

  it('404 for a secp256k1 agent and for an id no agent has', async () => {
    const secpDirectory = await get(secp.key.agentId);
    expect(secpDirectory.status).toBe(404);
    expect(secpDirectory.body).toEqual({
      error: `Agent ${secp.key.agentId} has a secp256k1 key: its ERC-8128 keyid names its address, it has no key directory`,
    });
    const unknown = await get(987_654);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Agent 987654 is not registered on testnet' });
    const published = await publish(await signKeyDirectory(ed.key.privateKey, { authority: HOST }), { agentId: secp.key.agentId });
    expect(published.status).toBe(404);
  });

  it('POST publishes the agent’s signature for this host, and GET at this host then carries it', async () => {
    const created = nowS() - 60;
    const signature = await signKeyDirectory(ed.key.privateKey, { authority: HOST, created });
    const res = await publish(signature);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ published: true, expires: created + 7 * 24 * 3600, directory: directoryOf(ed.key.agentId) });
    const served = await get(ed.key.agentId);
    expect(served.status).toBe(200);
    expect(served.headers['signature-input']).toBe(signature.signatureInput);
    expect(served.headers['signature']).toBe(signature.signature);
    expect(served.headers['signature-input']).toMatch(/^binding0=\("@authority";req\);.*tag="http-message-signatures-directory"/);
    // another host the service answers at: signed for none yet
    const elsewhere = await get(ed.key.agentId, '[::1]');
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers['signature']).toBeUndefined();
  });

  it('refuses a signature for another host, by another key, expired or with another tag (403), and a malformed one (400)', async () => {
    const otherSeed = bytesToHex(ed25519.utils.randomSecretKey());
    const expiredAt = nowS() - 100;
    // the request tag of Web Bot Auth on a directory signature: web-bot-auth signs a response only with that tag
    const requestTagged = await cloudflareSign(
      { response: { status: 200, headers: {} }, request: { method: 'GET', url: `http://${HOST}${pathOf(ed.key.agentId)}`, headers: {} } },
      await signerFromJWK(privateJwkOf(ed.key.privateKey, ed.key.publicKey!)),
      {
        created: new Date(),
        expires: new Date(Date.now() + 3600_000),
        components: [{ name: '@authority', parameters: new Map([['req', true]]) }],
      },
    );
    const cases: [string, KeyDirectorySignature, string][] = [
      [
        'another host',
        await signKeyDirectory(ed.key.privateKey, { authority: 'other.example' }),
        `Invalid signature: it does not verify with the agent's key over the directory at ${HOST}`,
      ],
      [
        'another key',
        await signKeyDirectory(otherSeed, { authority: HOST }),
        `keyid must be the JWK thumbprint of the agent's registered key (${kid})`,
      ],
      [
        'expired',
        await signKeyDirectory(ed.key.privateKey, { authority: HOST, created: expiredAt - 3600, lifetimeS: 3600 }),
        `The signature expired at ${expiredAt}: sign the directory again`,
      ],
      [
        'another tag',
        { signatureInput: requestTagged['Signature-Input'], signature: requestTagged.Signature },
        'The signature needs tag="http-message-signatures-directory"',
      ],
    ];
    for (const [name, signature, error] of cases) {
      const res = await publish(signature);
      expect(res.status, name).toBe(403);
      expect(res.body, name).toEqual({ error });
    }

    const good = await signKeyDirectory(ed.key.privateKey, { authority: HOST });
    const malformed = await publish({ ...good, signatureInput: 'binding0=("@authority";req' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/^signatureInput and signature must be structured dictionaries \(RFC 9651\): /);
    const two = await publish({
      signatureInput: `${good.signatureInput}, ${good.signatureInput.replace('binding0', 'binding1')}`,
      signature: good.signature,
    });
    expect(two.status).toBe(400);
    expect(two.body).toEqual({ error: 'Publish one signature: one member in signatureInput and in signature' });
    const notOurs = await publish(await signKeyDirectory(ed.key.privateKey, { authority: 'other.example' }), { host: 'other.example' });
    expect(notOurs.status).toBe(403);
    expect(notOurs.body.error).toMatch(/^A directory signature for other\.example would never be served: /);
  });

  it('409 for a signature older than the one published; a newer one replaces it', async () => {
    const older = await publish(await signKeyDirectory(ed.key.privateKey, { authority: HOST, created: nowS() - 3600 }));
    expect(older.status).toBe(409);
    expect(older.body).toEqual({ error: 'A newer directory signature is published already: sign with a later created time' });
    const newer = await signKeyDirectory(ed.key.privateKey, { authority: HOST, created: nowS() });
    expect((await publish(newer)).status).toBe(200);
    expect((await get(ed.key.agentId)).headers['signature']).toBe(newer.signature);
  });

  it('a directory signature made by Cloudflare’s web-bot-auth (directoryResponseHeaders) is accepted and served', async () => {
    const host = '127.0.0.1';
    const created = new Date();
    const headers = await directoryResponseHeaders(
      { response: { status: 200, headers: {} }, request: { method: 'GET', url: `http://${host}${pathOf(ed.key.agentId)}`, headers: {} } },
      [await signerFromJWK(privateJwkOf(ed.key.privateKey, ed.key.publicKey!))],
      { created, expires: new Date(created.getTime() + 24 * 3600_000) },
    );
    const signature = { signatureInput: headers['Signature-Input'], signature: headers.Signature };
    const res = await publish(signature, { host });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ published: true, directory: directoryOf(ed.key.agentId, host) });
    const served = await get(ed.key.agentId, host);
    expect(served.headers['signature-input']).toBe(signature.signatureInput);
    expect(served.headers['signature']).toBe(signature.signature);
  });
});
