// Human-level policies and the per-human quota at the service, on real local chains with agents registered through
// the mock identity app: a caller's `policy` in the signed body of POST /api/demo/verify (and in the A2A verify
// intent) refuses with 403 {error, policy} naming the policy, passes when met, and is 400 when malformed or when it
// asks for a quota (the quota is the service's). The service's quota (services option humanQuota) is one budget per
// human over all of the human's agents and both signature schemes, counted on the sqlite store: a replay or a
// request a policy refused draws nothing, a trial tier is served first and once, and a restart keeps the budget.
// The quota apps run on a clock the test moves, so windows end without waiting.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY_MAX_PROOF_AGE_S } from '../../src/core/agent-policy.js';
import { NETWORKS } from '../../src/core/networks.js';
import { signRfc9421 } from '../../src/core/rfc9421-sign.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import type { OpenApiDocument } from '../../src/http/openapi/document.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { legacyDataOf, legacySend } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { registryOf, setMaxAgentsPerHuman } from '../support/registry.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';

const PATH = '/api/demo/verify?network=testnet';
const HOUR_MS = 3_600_000;
const QUOTA = { limit: 2, windowS: 3600 };

/** The answer's shape as the document gives it: only error and policy, both present. */
const refusal = (policy: string, error: RegExp | string) => ({
  error: typeof error === 'string' ? expect.stringContaining(error) : expect.stringMatching(error),
  policy,
});

describe('human-level policies and the per-human quota at the service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-policies-'));
  let networks: TestNetworks;
  let q: QueryTestApp;

  /** A human who disclosed nothing: no age, no OFAC check, no nationality. */
  let plain: RegisteredSigner;
  /** A French human who proved 18+ and cleared the OFAC checks. */
  let french: RegisteredSigner;
  /** Another human who disclosed nothing (the trial tier's). */
  let newcomer: RegisteredSigner;
  /** Two agents (secp256k1, Ed25519) of one human. */
  let twinA: RegisteredSigner;
  let twinB: RegisteredSigner;

  /** A signed POST /api/demo/verify of a JSON body (its own nonce, so every request is a new message). */
  const verify = async (app: Express, who: RegisteredSigner, body: object = {}, options: { nowMs?: number } = {}) => {
    const text = JSON.stringify({ nonce: randomUUID(), ...body });
    const headers = await signedHeaders(who.signer, {
      method: 'POST',
      url: PATH,
      body: text,
      ...(options.nowMs !== undefined ? { timestamp: String(options.nowMs) } : {}),
    });
    const send = () => request(app).post(PATH).set(headers).set('content-type', 'application/json').send(text);
    return { res: await send(), replay: send };
  };
  const withPolicy = async (who: RegisteredSigner, policy: unknown, app: Express = q.app) => (await verify(app, who, { policy })).res;

  /** The A2A verify intent (raw v0.3 message/send) of a request signed for another service: its task's state and data. */
  const a2aVerify = async (app: Express, who: RegisteredSigner, fields: object = {}, nowMs?: number) => {
    const body = JSON.stringify({ order: randomUUID() });
    const headers = await signedHeaders(who.signer, {
      method: 'POST',
      url: '/orders',
      body,
      ...(nowMs !== undefined ? { timestamp: String(nowMs) } : {}),
    });
    const res = await request(app)
      .post('/api/a2a')
      .send(legacySend({ intent: 'verify', network: 'testnet', signedRequest: { headers, method: 'POST', url: '/orders', body }, ...fields }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { state: res.body.result.status.state as string, data: legacyDataOf(res.body.result) };
  };

  beforeAll(async () => {
    networks = await deployTestNetworks();
    // the twins' human holds two agents: this file's registry takes any number
    await setMaxAgentsPerHuman(networks.testnet, 0n);
    // the log follower polls only when told to (syncNow): the agent counts below are read once every agent is in
    q = await queryTestApp(networks, { a2a: true, eventPollIntervalMs: 3_600_000 });
    const twins = newDocument();
    [plain, french, newcomer, twinA] = await Promise.all([
      registeredSigner(q.app, networks, { mode: 'wallet-free' }),
      registeredSigner(q.app, networks, {
        mode: 'wallet-free',
        disclosures: { minimumAge: 18, ofac: true, nationality: true },
        document: newDocument({ nationality: 'FRA' }),
      }),
      registeredSigner(q.app, networks, { mode: 'wallet-free' }),
      registeredSigner(q.app, networks, { mode: 'wallet-free', document: twins }),
    ]);
    twinB = await registeredSigner(q.app, networks, { mode: 'ed25519', document: twins });
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('a caller policy in the signed body of POST /api/demo/verify', () => {
    it('minimumAge: refused above the age the human proved (or when none was), passed at or under it', async () => {
      const none = await withPolicy(plain, { minimumAge: 18 });
      expect(none.status).toBe(403);
      expect(none.body).toEqual(refusal('minimumAge', 'The human proved no minimum age; this service needs 18 or over'));
      const over21 = await withPolicy(french, { minimumAge: 21 });
      expect(over21.status).toBe(403);
      expect(over21.body).toEqual(refusal('minimumAge', 'The human proved an age over 18; this service needs 21 or over'));
      const over18 = await withPolicy(french, { minimumAge: 18 });
      expect(over18.status, JSON.stringify(over18.body)).toBe(200);
      expect(over18.body).toMatchObject({ valid: true, agentId: String(french.key.agentId), credentials: { olderThan: 18 } });
    });

    it('ofac: refused when the proof did not ask for the checks, passed when they cleared', async () => {
      // (a sanctioned human cannot register with the OFAC check asked: the hub refuses the proof)
      const res = await withPolicy(plain, { ofac: true });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(refusal('ofac', /^The proof does not show the OFAC checks passed \(ofac \[false,false,false\]\)/));
      expect((await withPolicy(french, { ofac: true })).status).toBe(200);
      // ofac: false asks nothing
      expect((await withPolicy(plain, { ofac: false })).status).toBe(200);
    });

    it('nationalities: allow and deny lists over the disclosed nationality; an undisclosed one is refused', async () => {
      const outside = await withPolicy(french, { nationalities: { allow: ['DEU', 'GBR'] } });
      expect(outside.status).toBe(403);
      expect(outside.body).toEqual(refusal('nationalities', 'Nationality FRA is not accepted; this service accepts DEU, GBR'));
      const denied = await withPolicy(french, { nationalities: { deny: ['FRA'] } });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual(refusal('nationalities', 'Nationality FRA is not accepted; this service refuses FRA'));
      const undisclosed = await withPolicy(plain, { nationalities: { deny: ['FRA'] } });
      expect(undisclosed.status).toBe(403);
      expect(undisclosed.body).toEqual(refusal('nationalities', 'The human did not disclose a nationality'));

      expect((await withPolicy(french, { nationalities: { allow: ['fra'] } })).status).toBe(200); // codes are read upper-cased
      expect((await withPolicy(french, { nationalities: { allow: ['FRA', 'DEU'], deny: ['GBR'] } })).status).toBe(200);
    });

    it('maxAgentsPerHuman: refused for either agent of a human with more, passed for a human within it', async () => {
      for (const twin of [twinA, twinB]) {
        const res = await withPolicy(twin, { maxAgentsPerHuman: 1 });
        expect(res.status).toBe(403);
        expect(res.body).toEqual(
          refusal('maxAgentsPerHuman', 'The human has 2 live agents; this service accepts humans with at most 1: deregister 1'),
        );
      }
      const withinTwo = await withPolicy(twinB, { maxAgentsPerHuman: 2 });
      expect(withinTwo.status).toBe(200);
      expect(withinTwo.body).toMatchObject({ keyType: 'ed25519', agentCount: '2' });
      expect((await withPolicy(plain, { maxAgentsPerHuman: 1 })).status).toBe(200);
    });

    it('maxProofAgeS: a proof made just now passes a day; two hours on, it is refused past an hour', async () => {
      expect((await withPolicy(plain, { maxProofAgeS: 86_400 })).status).toBe(200);

      // the same registry, seen by a service whose clock is two hours later (the request signed at that time)
      const later = testApp(networks.chains, { clock: () => Date.now() + 2 * HOUR_MS });
      try {
        // the age the service estimates (expiry minus the registry's maximum proof age) is over an hour then
        const expiresAt = await registryOf(networks.testnet).read.proofExpiresAt([BigInt(plain.key.agentId)]);
        const issuedAt = Number(expiresAt) - DEFAULT_REGISTRY_MAX_PROOF_AGE_S;
        expect(Math.floor((Date.now() + 2 * HOUR_MS) / 1000) - issuedAt).toBeGreaterThan(3600);
        const refused = (await verify(later.app, plain, { policy: { maxProofAgeS: 3600 } }, { nowMs: Date.now() + 2 * HOUR_MS })).res;
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual(
          refusal('maxProofAgeS', /^The human's proof is about \d+ (min|h) old; this service accepts proofs at most 60 min old/),
        );
        const passed = (await verify(later.app, plain, { policy: { maxProofAgeS: 3 * 3600 } }, { nowMs: Date.now() + 2 * HOUR_MS })).res;
        expect(passed.status, JSON.stringify(passed.body)).toBe(200);
      } finally {
        await later.services.queries.stop();
        later.a2a.close();
      }
    });

    it('minimumStrength: the registry’s own provider (strength 100, the most there is) meets any; above 100 is malformed', async () => {
      // the service accepts only agents proved by the registry's provider, so no honest local agent falls short of a
      // minimumStrength here; the refusal itself is covered by the policy's unit tests
      const res = await withPolicy(plain, { minimumStrength: 100 });
      expect(res.status).toBe(200);
      const above = await withPolicy(plain, { minimumStrength: 101 });
      expect(above.status).toBe(400);
      expect(above.body.error).toMatch(/^Invalid policy: .*minimumStrength/s);
    });

    it('every policy at once: the first unmet one is named, all met passes', async () => {
      const all = { minimumAge: 18, ofac: true, nationalities: { allow: ['FRA'] }, maxAgentsPerHuman: 1, maxProofAgeS: 86_400, minimumStrength: 100 };
      expect((await withPolicy(french, all)).status).toBe(200);
      expect((await withPolicy(plain, all)).body.policy).toBe('minimumAge');
      expect((await withPolicy(french, { ...all, minimumAge: 21 })).body.policy).toBe('minimumAge');
      expect((await withPolicy(french, { ...all, nationalities: { deny: ['FRA'] } })).body.policy).toBe('nationalities');
    });

    it('400 naming the field for a malformed policy, and for a quota: the quota is the service’s', async () => {
      const cases: [unknown, RegExp][] = [
        [{ minimumAge: 'eighteen' }, /minimumAge/],
        [{ minimumAge: 18.5 }, /minimumAge/],
        [{ nationalities: { allow: ['France'] } }, /nationalities\.allow/],
        [{ nationalities: {} }, /give allow, deny or both/],
        [{ nationalities: { allow: ['FRA'], deny: ['FRA'] } }, /both allowed and denied/],
        [{ maxAgentsPerHuman: 0 }, /maxAgentsPerHuman/],
        [{ maxProofAgeS: -1 }, /maxProofAgeS/],
        [{ minAge: 18 }, /minAge/],
        ['over 18', /expected object/],
        [{ quota: { limit: 1000, windowS: 1 } }, /quota/],
      ];
      for (const [policy, named] of cases) {
        const res = await withPolicy(french, policy);
        expect(res.status, JSON.stringify(policy)).toBe(400);
        expect(Object.keys(res.body)).toEqual(['error']);
        expect(res.body.error, JSON.stringify(policy)).toMatch(/^Invalid policy: /);
        expect(res.body.error, JSON.stringify(policy)).toMatch(named);
      }
    });

    it('the refusals conform to the OpenAPI document, which lists 403 and 429 with the SignedRequestRefusal schema', async () => {
      const doc = (await request(q.app).get('/openapi.json')).body as OpenApiDocument;
      const responses = doc.paths['/api/demo/verify']?.post?.responses ?? {};
      for (const status of ['403', '429']) {
        expect(responses[status]?.content?.['application/json']?.schema, status).toEqual({ $ref: '#/components/schemas/SignedRequestRefusal' });
      }
      expect(responses['429']?.description).toMatch(/quota/);
      const schema = doc.components.schemas['SignedRequestRefusal'] as { properties: { policy: { enum: string[] } }; required: string[] };
      expect(schema.required).toEqual(['error']);
      expect([...schema.properties.policy.enum].sort()).toEqual(
        ['maxAgentsPerHuman', 'maxProofAgeS', 'minimumAge', 'minimumStrength', 'nationalities', 'ofac', 'quota'].sort(),
      );

      const ajv = new Ajv2020({ strict: false });
      ajv.addSchema({ $id: 'api', components: doc.components });
      const validate = ajv.compile({ $ref: 'api#/components/schemas/SignedRequestRefusal' });
      const refused = await withPolicy(plain, { ofac: true });
      expect(validate(refused.body), JSON.stringify(validate.errors)).toBe(true);
    });
  });

  describe('the A2A verify intent with a policy field', () => {
    it('refuses alike: a failed task whose data carries the error, its status and the policy', async () => {
      const refused = await a2aVerify(q.app, plain, { policy: { minimumAge: 18 } });
      expect(refused.state).toBe('failed');
      expect(refused.data).toEqual({
        status: 403,
        intent: 'verify',
        policy: 'minimumAge',
        error: expect.stringContaining('The human proved no minimum age; this service needs 18 or over'),
      });
      const twins = await a2aVerify(q.app, twinA, { policy: { maxAgentsPerHuman: 1 } });
      expect(twins).toMatchObject({ state: 'failed', data: { status: 403, policy: 'maxAgentsPerHuman' } });

      const passed = await a2aVerify(q.app, french, { policy: { minimumAge: 18, ofac: true, nationalities: { allow: ['FRA'] } } });
      expect(passed.state).toBe('completed');
      expect(passed.data).toMatchObject({ valid: true, agentId: String(french.key.agentId) });
    });

    it('a malformed policy or a quota: input required, naming the field', async () => {
      for (const [policy, named] of [
        [{ minimumAge: 'eighteen' }, /minimumAge/],
        [{ quota: { limit: 1000, windowS: 1 } }, /quota/],
      ] as const) {
        const answer = await a2aVerify(q.app, french, { policy });
        expect(answer.state).toBe('input-required');
        expect(answer.data).toMatchObject({ status: 400, intent: 'verify', error: expect.stringMatching(named) });
      }
    });
  });

  describe('the service quota (humanQuota: 2 per hour per human)', () => {
    let store: SqliteStore;
    let nowMs = Date.now();
    const clock = () => nowMs;
    let app: TestApp;
    const quotaApp = () => testApp(networks.chains, { store, clock, humanQuota: QUOTA });
    const stop = async (t: TestApp) => {
      await t.services.queries.stop();
      t.a2a.close();
    };
    const at = (who: RegisteredSigner, body: object = {}, on: Express = app.app) => verify(on, who, body, { nowMs });

    /** An ERC-8128 (RFC 9421) signed POST /api/demo/verify, as a client at localhost sends it. */
    const erc8128 = async (who: RegisteredSigner) => {
      const body = JSON.stringify({ nonce: randomUUID() });
      const headers = await signRfc9421(
        who.signer,
        { method: 'POST', url: `http://localhost${PATH}`, body },
        { chainId: NETWORKS.testnet.chainId, created: Math.floor(nowMs / 1000) },
      );
      return request(app.app).post(PATH).set(headers).set('host', 'localhost').set('content-type', 'application/json').send(body);
    };

    const expectExhausted = (res: request.Response, retryAfterS: number) => {
      expect(res.status, JSON.stringify(res.body)).toBe(429);
      expect(res.headers['retry-after']).toBe(String(retryAfterS));
      expect(res.body).toEqual(
        refusal('quota', `Quota exhausted: at most 2 requests per 3600 s per human, shared by all of the human's agents; retry in ${retryAfterS} s`),
      );
    };

    beforeAll(() => {
      store = new SqliteStore(join(dir, 'quota.sqlite'));
      app = quotaApp();
    });

    afterAll(async () => {
      await stop(app);
      await store.close();
    });

    it('two agents of one human share one budget over both schemes; another human has its own', async () => {
      expect((await at(twinA)).res.status).toBe(200);
      expect((await at(twinB)).res.status).toBe(200);
      expectExhausted((await at(twinA)).res, 3600);
      expectExhausted((await at(twinB)).res, 3600);
      expectExhausted(await erc8128(twinA), 3600);
      // the A2A verify intent draws on the same budget and refuses alike
      const overA2a = await a2aVerify(app.app, twinB, {}, nowMs);
      expect(overA2a).toMatchObject({ state: 'failed', data: { status: 429, policy: 'quota', retryAfterSeconds: 3600 } });

      // another human: a budget of its own, drawn by either scheme
      expect((await erc8128(plain)).status).toBe(200);
      expect((await at(plain)).res.status).toBe(200);
      expectExhausted((await at(plain)).res, 3600);
    });

    it('a replay (409) and a request a policy refused (403) draw nothing', async () => {
      for (let i = 0; i < 3; i++) expect((await at(french, { policy: { minimumAge: 21 } })).res.status).toBe(403);
      const first = await at(french);
      expect(first.res.status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await first.replay()).status).toBe(409);
      expect((await at(french)).res.status).toBe(200);
      expectExhausted((await at(french)).res, 3600);
    });

    it('the budget survives a restart over the same store, and the end of the window renews it', async () => {
      const restarted = quotaApp();
      try {
        nowMs += 600_000;
        expectExhausted((await at(twinA, {}, restarted.app)).res, 3000);
        nowMs += 3000_000;
        expect((await at(twinA, {}, restarted.app)).res.status).toBe(200);
        expect((await at(twinB, {}, restarted.app)).res.status).toBe(200);
        expectExhausted((await at(twinB, {}, restarted.app)).res, 3600);
      } finally {
        await stop(restarted);
      }
    });
  });

  it('a trial tier (trial: 1) is served first, outside the window, and once', async () => {
    let nowMs = Date.now();
    const trial = testApp(networks.chains, { clock: () => nowMs, humanQuota: { ...QUOTA, trial: { limit: 1 } } });
    const at = (who: RegisteredSigner) => verify(trial.app, who, {}, { nowMs });
    try {
      expect((await at(newcomer)).res.status).toBe(200); // the trial
      // the free window starts with the first free request, not with the trial's
      nowMs += 1000_000;
      expect((await at(newcomer)).res.status).toBe(200);
      expect((await at(newcomer)).res.status).toBe(200);
      const exhausted = (await at(newcomer)).res;
      expect(exhausted.status).toBe(429);
      expect(exhausted.headers['retry-after']).toBe('3600');
      expect(exhausted.body.error).toMatch(/after a trial of 1/);
      // a new window: the free tier again, the trial not
      nowMs += HOUR_MS;
      expect((await at(newcomer)).res.status).toBe(200);
      expect((await at(newcomer)).res.status).toBe(200);
      expect((await at(newcomer)).res.status).toBe(429);
    } finally {
      await trial.services.queries.stop();
      trial.a2a.close();
    }
  });
});
