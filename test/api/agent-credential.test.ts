// The human-backed-agent credential over real HTTP on real local chains, with agents registered through the mock
// identity app: issuance (either scheme, either key type), offline verification after the service has stopped,
// selective disclosure, the refusals (audience, nonce, expiry, another key), pairwise subs, revocation by a
// deregistration, and a key rotation that leaves earlier credentials verifiable.
import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import request from 'supertest';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialError } from '../../src/client/credential-error.js';
import { verifyAgentCredential } from '../../src/client/credential-verification.js';
import { type AgentCredential, presentCredential, requestCredential } from '../../src/client/credentials.js';
import { HttpCache } from '../../src/client/http-cache.js';
import { AGENT_CREDENTIAL_VCT } from '../../src/core/agent-credential.js';
import { NETWORKS } from '../../src/core/networks.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { registerWalletFree } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';
import { serveOnLoopback } from '../support/service-http.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';

const AUDIENCE = 'https://shop.example';

/** An SD-JWT's parts, unverified: the issuer-signed JWT's header and payload, and the disclosures it carries. */
async function decodeSdJwt(compact: string) {
  const decoded = await new SDJwtVcInstance({ hasher: digest }).decode(compact);
  return {
    jwt: { header: decoded.jwt?.header ?? {}, payload: decoded.jwt?.payload ?? {} },
    disclosures: (decoded.disclosures ?? []).map((d) => ({ key: d.key, value: d.value })),
  };
}

describe('the human-backed-agent credential', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let served: { base: string; close(): Promise<void> };
  let handler: RequestListener = (_req, res) => res.end();
  /** A French human who proved 21+ and cleared the OFAC checks, with two agents (secp256k1, Ed25519). */
  let ecdsa: RegisteredSigner;
  let ed: RegisteredSigner;
  let twinDocument: ReturnType<typeof newDocument>;
  /** Another human's agent. */
  let other: RegisteredSigner;

  const request_ = (who: RegisteredSigner, options: { audience?: string; scheme?: 'x-svc-agent' | 'rfc9421' } = {}) =>
    requestCredential(who.signer, {
      registryUrl: served.base,
      audience: options.audience ?? AUDIENCE,
      ...(options.scheme ? { scheme: options.scheme } : {}),
    });

  /** Why the verifier refuses a fresh presentation of `issued` (undefined: it accepts it). */
  const refusal = async (issued: AgentCredential, who: RegisteredSigner): Promise<CredentialError | undefined> => {
    const nonce = randomUUID();
    const presentation = await presentCredential(issued, who.signer, { audience: AUDIENCE, nonce });
    return verifyAgentCredential(presentation, { audience: AUDIENCE, nonce, issuer: served.base, cache: new HttpCache() }).then(
      () => undefined,
      (error: unknown) => error as CredentialError,
    );
  };

  beforeAll(async () => {
    networks = await deployTestNetworks();
    await setMaxAgentsPerHuman(networks.testnet, 0n);
    // the service names its own URL in what it signs: the port is taken before the app is made
    served = await serveOnLoopback((req, res) => handler(req, res));
    q = await queryTestApp(networks, { publicUrl: served.base, eventPollIntervalMs: 3_600_000 });
    handler = q.app;
    twinDocument = newDocument({ nationality: 'FRA' });
    const disclosures = { minimumAge: 21, ofac: true, nationality: true };
    [ecdsa, other] = await Promise.all([
      registeredSigner(q.app, networks, { mode: 'wallet-free', disclosures, document: twinDocument }),
      registeredSigner(q.app, networks, { mode: 'wallet-free' }),
    ]);
    ed = await registeredSigner(q.app, networks, { mode: 'ed25519', disclosures, document: twinDocument });
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await served.close();
    await q.stop();
  });

  it('issues an SD-JWT VC: the service key signs it, 15 minutes at most, bound to the agent key, the disclosures selectively disclosable', async () => {
    const issued = await request_(ecdsa);
    const decoded = await decodeSdJwt(issued.credential);
    const { header, payload } = decoded.jwt;
    const key = await q.services.signingKeys.current();
    expect(header).toMatchObject({ typ: 'dc+sd-jwt', alg: key.alg, kid: key.kid });
    expect(payload).toMatchObject({
      iss: served.base,
      vct: AGENT_CREDENTIAL_VCT,
      sub: issued.sub,
      agent_id: String(ecdsa.key.agentId),
      chain_id: NETWORKS.testnet.chainId,
      registry: networks.testnet.deployment.contracts.registry,
      agent_address: privateKeyToAccount(ecdsa.key.privateKey).address,
      strength: expect.any(Number),
      cnf: { jwk: { kty: 'EC', crv: 'secp256k1' } },
      status: { status_list: { idx: issued.status.idx, uri: issued.status.uri } },
    });
    expect(issued.expiresAt - (payload.iat as number)).toBeLessThanOrEqual(15 * 60);
    expect(issued.expiresAt).toBeLessThanOrEqual(payload.proof_expires_at as number);
    // nothing the human disclosed is in the signed payload itself: only digests
    for (const claim of ['age_over_18', 'age_over_21', 'ofac_clear', 'nationality']) expect(payload).not.toHaveProperty(claim);
    expect(decoded.disclosures.map((d) => [d.key, d.value]).sort()).toEqual(
      [
        ['age_over_18', true],
        ['age_over_21', true],
        ['nationality', 'FRA'],
        ['ofac_clear', true],
      ].sort(),
    );
    const ed25519 = await requestCredential(ed.signer, {
      registryUrl: served.base,
      audience: AUDIENCE,
      scheme: 'rfc9421',
      agentId: BigInt(ed.key.agentId),
    });
    const rfcEcdsa = await request_(ecdsa, { scheme: 'rfc9421' });
    expect(rfcEcdsa.sub).toBe(issued.sub);
    expect((await decodeSdJwt(ed25519.credential)).jwt.payload).toMatchObject({ cnf: { jwk: { kty: 'OKP', crv: 'Ed25519' } } });
  });

  it('a presentation verifies, revealing only the disclosures chosen', async () => {
    const issued = await request_(ed);
    const nonce = randomUUID();
    const presentation = await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce, disclose: ['age_over_18'] });
    const verified = await verifyAgentCredential(presentation, { audience: AUDIENCE, nonce, issuer: served.base, cache: new HttpCache() });
    expect(verified).toMatchObject({
      sub: issued.sub,
      agentId: BigInt(ed.key.agentId),
      chainId: NETWORKS.testnet.chainId,
      disclosed: { age_over_18: true },
    });
    expect(Object.keys(verified.disclosed)).toEqual(['age_over_18']);
    // the presentation itself carries one disclosure only
    expect((await decodeSdJwt(presentation)).disclosures.map((d) => d.key)).toEqual(['age_over_18']);
    const none = await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce });
    expect((await verifyAgentCredential(none, { audience: AUDIENCE, nonce, issuer: served.base })).disclosed).toEqual({});
  });

  it('refuses a wrong audience, a wrong nonce, an expired credential and a key-binding JWT by another key', async () => {
    const issued = await request_(ecdsa);
    const nonce = randomUUID();
    const cache = new HttpCache();
    const check = (presentation: string, options: { audience?: string; nonce?: string; now?: number } = {}) =>
      verifyAgentCredential(presentation, {
        audience: options.audience ?? AUDIENCE,
        nonce: options.nonce ?? nonce,
        issuer: served.base,
        cache,
        ...(options.now ? { now: options.now } : {}),
      });
    const reason = async (verification: Promise<unknown>) => {
      const error = await verification.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CredentialError);
      return (error as CredentialError).reason;
    };
    const good = await presentCredential(issued, ecdsa.signer, { audience: AUDIENCE, nonce, disclose: ['ofac_clear'] });
    await expect(check(good)).resolves.toMatchObject({ disclosed: { ofac_clear: true } });
    expect(await reason(check(good, { audience: 'https://elsewhere.example' }))).toBe('audience');
    expect(await reason(check(await presentCredential(issued, ecdsa.signer, { audience: 'https://elsewhere.example', nonce })))).toBe('audience');
    expect(await reason(check(good, { nonce: randomUUID() }))).toBe('nonce');
    // a credential asked for another verifier, presented here: its sub is the human's pseudonym there
    const elsewhere = await request_(ecdsa, { audience: 'https://elsewhere.example' });
    expect(await reason(check(await presentCredential(elsewhere, ecdsa.signer, { audience: AUDIENCE, nonce })))).toBe('audience');
    // past the expiry and the 5 s allowed for clock differences
    const later = issued.expiresAt + 6;
    const lateKb = await presentCredential(issued, ecdsa.signer, { audience: AUDIENCE, nonce, now: later });
    expect(await reason(check(lateKb, { now: later }))).toBe('expired');
    // another agent's key signs the KB-JWT over this agent's credential
    expect(await reason(check(await presentCredential(issued, other.signer, { audience: AUDIENCE, nonce })))).toBe('key-binding');
    expect(await reason(check(await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce })))).toBe('key-binding');
  });

  it("one audience sees one sub for both of a human's agents; two audiences see unrelated subs; another human another", async () => {
    const [a, b, elsewhere, stranger] = await Promise.all([
      request_(ecdsa),
      request_(ed),
      request_(ecdsa, { audience: 'https://bank.example' }),
      request_(other),
    ]);
    expect(a.sub).toBe(b.sub);
    expect(elsewhere.sub).not.toBe(a.sub);
    expect(stranger.sub).not.toBe(a.sub);
    expect(a.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a malformed body (400), an unsigned request (401), and a secp256k1 jwk that is not the agent key (403)', async () => {
    const post = (body: string) => request(q.app).post('/api/agent/credential').set('content-type', 'application/json').send(body);
    expect((await post(JSON.stringify({ audience: AUDIENCE }))).status).toBe(401);
    const bad = await post('{"audience": 5}');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/audience/);
    const wrongKey = privateKeyToAccount(other.key.privateKey);
    const signer = {
      ...ecdsa.signer,
      account: { ...privateKeyToAccount(ecdsa.key.privateKey), publicKey: wrongKey.publicKey },
    } as RegisteredSigner['signer'];
    await expect(requestCredential(signer, { registryUrl: served.base, audience: AUDIENCE })).rejects.toThrow(/403.*not the signing agent/);
  });

  it('a key rotation leaves credentials signed before it verifiable until they expire', async () => {
    const before = await request_(ecdsa);
    const cache = new HttpCache();
    const nonce = randomUUID();
    const present = (issued: AgentCredential) => presentCredential(issued, ecdsa.signer, { audience: AUDIENCE, nonce });
    await verifyAgentCredential(await present(before), { audience: AUDIENCE, nonce, issuer: served.base, cache });
    await q.services.signingKeys.rotate();
    const after = await request_(ecdsa);
    expect((await decodeSdJwt(after.credential)).jwt.header.kid).not.toBe((await decodeSdJwt(before.credential)).jwt.header.kid);
    // a fresh verifier (the new JWKS) takes both; the old key is still listed
    const fresh = new HttpCache();
    await expect(
      verifyAgentCredential(await present(before), { audience: AUDIENCE, nonce, issuer: served.base, cache: fresh }),
    ).resolves.toBeDefined();
    await expect(
      verifyAgentCredential(await present(after), { audience: AUDIENCE, nonce, issuer: served.base, cache: fresh }),
    ).resolves.toBeDefined();
  });

  it('revokes a credential whose agent left in a range that changed many agents at once (a backfill window)', async () => {
    const human = newDocument();
    const doomed = await registeredSigner(q.app, networks, { mode: 'wallet-free', document: human });
    const issued = await request_(doomed);
    await q.services.queries.syncNow();
    await q.services.credentialStatus.settled();
    const session = await request(q.app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: doomed.key.agentAddress });
    await approveDeepLink(q.app, networks, session.body.deepLink, { document: human });
    // more agents than are read one by one, in the same range as the deregistration
    for (let i = 0; i < 20; i++) await registerWalletFree(networks.testnet);
    await q.services.queries.syncNow();
    await q.services.credentialStatus.settled();

    expect((await refusal(issued, doomed))?.reason).toBe('revoked');
  });

  it('revokes a credential whose agent left while the service was stopped, once the restarted service has caught up', async () => {
    const store = new MemoryStore();
    const first = await queryTestApp(networks, { publicUrl: served.base, eventPollIntervalMs: 3_600_000, store });
    handler = first.app;
    try {
      const human = newDocument();
      const doomed = await registeredSigner(first.app, networks, { mode: 'wallet-free', document: human });
      await first.services.queries.syncNow();
      const issued = await request_(doomed);
      await first.stop();
      // the human leaves through another instance while this one is stopped
      const session = await request(q.app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: doomed.key.agentAddress });
      await approveDeepLink(q.app, networks, session.body.deepLink, { document: human });

      const restarted = await queryTestApp(networks, { publicUrl: served.base, eventPollIntervalMs: 3_600_000, store });
      handler = restarted.app;
      try {
        await restarted.services.credentialStatus.settled();
        expect((await refusal(issued, doomed))?.reason).toBe('revoked');
      } finally {
        await restarted.stop();
      }
    } finally {
      handler = q.app;
    }
  });

  it('after a deregistration the status list marks the credential revoked and the verifier refuses it', async () => {
    const human = newDocument();
    const doomed = await registeredSigner(q.app, networks, { mode: 'wallet-free', document: human });
    const issued = await request_(doomed);
    const nonce = randomUUID();
    const presentation = await presentCredential(issued, doomed.signer, { audience: AUDIENCE, nonce });
    await verifyAgentCredential(presentation, { audience: AUDIENCE, nonce, issuer: served.base, cache: new HttpCache() });

    const session = await request(q.app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: doomed.key.agentAddress });
    expect(session.status).toBe(200);
    await approveDeepLink(q.app, networks, session.body.deepLink, { document: human });
    await q.services.queries.syncNow();
    await q.services.credentialStatus.settled();

    const list = await fetch(issued.status.uri);
    expect(list.headers.get('content-type')).toMatch(/^application\/statuslist\+jwt/);
    expect(list.headers.get('cache-control')).toBe('public, max-age=60');
    const error = await verifyAgentCredential(presentation, { audience: AUDIENCE, nonce, issuer: served.base, cache: new HttpCache() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CredentialError);
    expect((error as CredentialError).reason).toBe('revoked');
    // the other credentials stay good
    const still = await request_(ecdsa);
    const stillNonce = randomUUID();
    await verifyAgentCredential(await presentCredential(still, ecdsa.signer, { audience: AUDIENCE, nonce: stillNonce }), {
      audience: AUDIENCE,
      nonce: stillNonce,
      issuer: served.base,
      cache: new HttpCache(),
    });
  });

  it('a credential verifies offline after the service has stopped, from the JWKS and status list fetched before', async () => {
    const issued = await request_(ed);
    const cache = new HttpCache();
    const first = randomUUID();
    await verifyAgentCredential(await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce: first }), {
      audience: AUDIENCE,
      nonce: first,
      issuer: served.base,
      cache,
    });
    await served.close();
    const nonce = randomUUID();
    const verified = await verifyAgentCredential(
      await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce, disclose: ['nationality'] }),
      {
        audience: AUDIENCE,
        nonce,
        issuer: served.base,
        cache,
      },
    );
    expect(verified.disclosed).toEqual({ nationality: 'FRA' });
    // a verifier that fetched nothing before cannot check it
    await expect(
      verifyAgentCredential(await presentCredential(issued, ed.signer, { audience: AUDIENCE, nonce }), {
        audience: AUDIENCE,
        nonce,
        issuer: served.base,
        cache: new HttpCache(),
      }),
    ).rejects.toThrow();
  });
});
