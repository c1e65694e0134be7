// Human-level policies (core/agent-policy.ts): each policy accepts the subject that meets it and refuses, naming
// itself, what failed and what would pass, the one that does not; a policy is validated once; the quota is drawn
// only after every policy passed; the refusal answer is the same for the SDK (a Response) and the service (the
// error handler, over real HTTP).
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  type AgentPolicyInput,
  checkPolicy,
  compilePolicy,
  DEFAULT_REGISTRY_MAX_PROOF_AGE_S,
  enforcePolicy,
  type PolicySubject,
  policySubjectOf,
} from '../../src/core/agent-policy.js';
import type { AgentCredentials } from '../../src/core/credentials.js';
import { MemoryQuotaStore } from '../../src/core/human-quota.js';
import { PolicyRefusalError, policyRefusalBodySchema, refusalAnswer, refusalResponse } from '../../src/core/policy-refusal.js';
import { errorHandler } from '../../src/http/middleware/errors.js';
import { createLogger } from '../../src/logger.js';

const NOW_S = 1_800_000_000;
const DAY = 86_400;

/** A human who proved 18+, cleared OFAC, disclosed GBR, runs 2 agents, through a strength-100 provider, proof made 10 days ago. */
const subject = (
  overrides: Partial<Omit<PolicySubject, 'credentials'>> & { credentials?: Partial<PolicySubject['credentials']> } = {},
): PolicySubject => ({
  agentCount: 2,
  strength: 100,
  proofExpiresAt: NOW_S - 10 * DAY + DEFAULT_REGISTRY_MAX_PROOF_AGE_S,
  nullifier: 42n,
  ...overrides,
  credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true], ...overrides.credentials },
});

const check = (policy: AgentPolicyInput, who: PolicySubject = subject()) => checkPolicy(who, compilePolicy(policy), NOW_S);

describe('checkPolicy', () => {
  it('accepts any subject under an empty policy', () => {
    expect(check({})).toEqual({ ok: true });
    expect(check({}, subject({ credentials: { nationality: '', olderThan: 0, ofac: [false, false, false] }, agentCount: 99 }))).toEqual({ ok: true });
  });

  it('minimumAge: the proved threshold must reach it', () => {
    expect(check({ minimumAge: 18 })).toEqual({ ok: true });
    expect(check({ minimumAge: 21 }, subject({ credentials: { olderThan: 21 } }))).toEqual({ ok: true });
    expect(check({ minimumAge: 21 })).toEqual({
      ok: false,
      policy: 'minimumAge',
      error: 'The human proved an age over 18; this service needs 21 or over: prove minimumAge 21 or more',
    });
    expect(check({ minimumAge: 18 }, subject({ credentials: { olderThan: 0 } }))).toEqual({
      ok: false,
      policy: 'minimumAge',
      error: 'The human proved no minimum age; this service needs 18 or over: prove minimumAge 18 or more',
    });
  });

  it('ofac: the name checks must show cleared; the document-number check runs for passports only', () => {
    expect(check({ ofac: true })).toEqual({ ok: true });
    expect(check({ ofac: true }, subject({ credentials: { ofac: [false, true, true] } })), 'an identity card').toEqual({ ok: true });
    expect(check({ ofac: false }, subject({ credentials: { ofac: [false, false, false] } }))).toEqual({ ok: true });
    expect(check({ ofac: true }, subject({ credentials: { ofac: [false, false, false] } }))).toEqual({
      ok: false,
      policy: 'ofac',
      error:
        'The proof does not show the OFAC checks passed (ofac [false,false,false]); this service needs the name checks cleared: prove with ofac: true',
    });
    expect(check({ ofac: true }, subject({ credentials: { ofac: [true, true, false] } }))).toMatchObject({ ok: false, policy: 'ofac' });
  });

  it('nationalities: allow and deny lists, codes in any case, an undisclosed nationality refused', () => {
    expect(check({ nationalities: { allow: ['gbr', 'FRA'] } })).toEqual({ ok: true });
    expect(check({ nationalities: { deny: ['PRK'] } })).toEqual({ ok: true });
    expect(check({ nationalities: { allow: ['D<<'] } }, subject({ credentials: { nationality: 'D<<' } })), "ICAO's code for Germany").toEqual({
      ok: true,
    });
    expect(check({ nationalities: { allow: ['FRA', 'DEU'] } })).toEqual({
      ok: false,
      policy: 'nationalities',
      error: 'Nationality GBR is not accepted; this service accepts FRA, DEU',
    });
    expect(check({ nationalities: { deny: ['GBR', 'PRK'] } })).toEqual({
      ok: false,
      policy: 'nationalities',
      error: 'Nationality GBR is not accepted; this service refuses GBR, PRK',
    });
    expect(check({ nationalities: { allow: ['GBR'], deny: ['PRK'] } })).toEqual({ ok: true });
    for (const nationality of ['', undefined]) {
      expect(check({ nationalities: { deny: ['PRK'] } }, subject({ credentials: { nationality } }))).toEqual({
        ok: false,
        policy: 'nationalities',
        error: 'The human did not disclose a nationality, which this service checks: prove with nationality disclosed',
      });
    }
  });

  it('maxAgentsPerHuman: the live agents, this one included', () => {
    expect(check({ maxAgentsPerHuman: 2 })).toEqual({ ok: true });
    expect(check({ maxAgentsPerHuman: 1 })).toEqual({
      ok: false,
      policy: 'maxAgentsPerHuman',
      error: 'The human has 2 live agents; this service accepts humans with at most 1: deregister 1',
    });
  });

  it('maxProofAgeS: from the proof issue time, or estimated from its expiry and the registry maximum proof age', () => {
    expect(check({ maxProofAgeS: 10 * DAY })).toEqual({ ok: true });
    expect(check({ maxProofAgeS: 10 * DAY - 1 })).toEqual({
      ok: false,
      policy: 'maxProofAgeS',
      error: "The human's proof is about 10 days old; this service accepts proofs at most 9 days old: refresh the proof",
    });
    // an issue time given is used as it is
    expect(check({ maxProofAgeS: 3600 }, subject({ proofIssuedAt: NOW_S - 3600 }))).toEqual({ ok: true });
    expect(check({ maxProofAgeS: 3600 }, subject({ proofIssuedAt: NOW_S - 5400 }))).toEqual({
      ok: false,
      policy: 'maxProofAgeS',
      error: "The human's proof is about 90 min old; this service accepts proofs at most 60 min old: refresh the proof",
    });
    // a registry whose proofs live 30 days: a proof expiring in 15 days was made 15 days ago, one expiring in 5, 25 days ago
    const shortLived = compilePolicy({ maxProofAgeS: 20 * DAY }, { registryMaxProofAgeS: 30 * DAY });
    expect(shortLived.check(subject({ proofExpiresAt: NOW_S + 15 * DAY }), NOW_S)).toEqual({ ok: true });
    expect(shortLived.check(subject({ proofExpiresAt: NOW_S + 5 * DAY }), NOW_S)).toMatchObject({ ok: false, policy: 'maxProofAgeS' });
  });

  it('minimumStrength: the provider strength must reach it', () => {
    expect(check({ minimumStrength: 100 })).toEqual({ ok: true });
    expect(check({ minimumStrength: 80 }, subject({ strength: 60 }))).toEqual({
      ok: false,
      policy: 'minimumStrength',
      error: "The proof provider's strength is 60; this service needs 80 or more: prove with a stronger provider",
    });
  });

  it('names the first policy that fails, in a fixed order', () => {
    const everything: AgentPolicyInput = {
      minimumAge: 21,
      ofac: true,
      nationalities: { allow: ['FRA'] },
      maxAgentsPerHuman: 1,
      minimumStrength: 100,
    };
    expect(check(everything)).toMatchObject({ policy: 'minimumAge' });
    expect(check({ ...everything, minimumAge: 18 })).toMatchObject({ policy: 'nationalities' });
    expect(check({ ...everything, minimumAge: 18, nationalities: { allow: ['GBR'] } })).toMatchObject({ policy: 'maxAgentsPerHuman' });
  });

  it('compiles a plain policy once per object', () => {
    const policy: AgentPolicyInput = { minimumAge: 18 };
    expect(checkPolicy(subject(), policy, NOW_S)).toEqual({ ok: true });
    expect(checkPolicy(subject({ credentials: { olderThan: 0 } }), policy, NOW_S)).toMatchObject({ ok: false, policy: 'minimumAge' });
  });

  it('refuses an invalid policy when it is compiled, naming the field', () => {
    const invalid: [unknown, RegExp][] = [
      [{ minimumAge: -1 }, /minimumAge/],
      [{ minimumStrength: 101 }, /minimumStrength/],
      [{ nationalities: { allow: ['GB'] } }, /three-letter code/],
      [{ nationalities: {} }, /give allow, deny or both/],
      [{ nationalities: { allow: ['GBR'], deny: ['gbr'] } }, /both allowed and denied/],
      [{ quota: { limit: 0, windowS: 60 } }, /quota\.limit/],
      [{ quota: { limit: 1, windowS: 60, trial: {} } }, /quota\.trial\.limit/],
      [{ maxAgents: 1 }, /maxAgents/],
    ];
    for (const [policy, message] of invalid) {
      expect(() => compilePolicy(policy as AgentPolicyInput), JSON.stringify(policy)).toThrow(message);
    }
  });
});

describe('policySubjectOf', () => {
  it('reads an agent as the registry stores it: disclosed fields only, numbers for the counts', () => {
    const credentials: AgentCredentials = {
      issuingState: '',
      name: ['', ''],
      idNumber: '',
      nationality: 'GBR\0',
      dateOfBirth: '',
      gender: '',
      expiryDate: '01-01-40',
      olderThan: 18n,
      ofac: [false, true, true],
    };
    const view = { credentials, agentCountForHuman: 3n, verificationStrength: 100, proofExpiresAt: 1_900_000_000n, nullifier: 7n };
    expect(policySubjectOf(view)).toEqual({
      credentials: { nationality: 'GBR', expiryDate: '01-01-40', olderThan: 18, ofac: [false, true, true] },
      agentCount: 3,
      strength: 100,
      proofExpiresAt: 1_900_000_000,
      nullifier: 7n,
    });
    const undisclosed = policySubjectOf({ ...view, credentials: { ...credentials, nationality: '\0\0\0' } });
    expect(check({ nationalities: { deny: ['PRK'] } }, undisclosed)).toMatchObject({ ok: false, policy: 'nationalities' });
  });
});

describe('enforcePolicy', () => {
  const quota = { limit: 2, windowS: 60 };

  it('draws on the quota only once every policy passed', async () => {
    const quotas = new MemoryQuotaStore();
    const policy = compilePolicy({ minimumAge: 21, quota });
    const nowMs = NOW_S * 1000;
    expect(await enforcePolicy(policy, subject(), { quotas, nowMs })).toMatchObject({ ok: false, policy: 'minimumAge' });
    expect(quotas.size, 'nothing counted').toBe(0);
    const adult = subject({ credentials: { olderThan: 21 } });
    expect(await enforcePolicy(policy, adult, { quotas, nowMs })).toEqual({
      ok: true,
      quota: { ok: true, tier: 'free', remaining: 1, retryAfterS: 0 },
    });
    expect(await enforcePolicy(policy, adult, { quotas, nowMs })).toMatchObject({ ok: true, quota: { remaining: 0 } });
    expect(await enforcePolicy(policy, adult, { quotas, nowMs: nowMs + 20_500 })).toEqual({
      ok: false,
      policy: 'quota',
      retryAfterS: 40,
      error: "Quota exhausted: at most 2 requests per 60 s per human, shared by all of the human's agents; retry in 40 s",
    });
  });

  it('answers without a quota store when the policy has no quota, and insists on one when it has', async () => {
    expect(await enforcePolicy(compilePolicy({ minimumAge: 18 }), subject())).toEqual({ ok: true });
    await expect(enforcePolicy(compilePolicy({ quota }), subject())).rejects.toThrow(/pass a QuotaStore/);
  });

  it('refuses an agent without a human when there is a quota (nothing to count it by)', async () => {
    const quotas = new MemoryQuotaStore();
    expect(await enforcePolicy(compilePolicy({ quota }), subject({ nullifier: 0n }), { quotas })).toEqual({
      ok: false,
      policy: 'quota',
      error: 'The agent has no proof of human, so no per-human quota can count it: register it with a proof',
    });
    expect(quotas.size).toBe(0);
  });

  it('keeps the humans of two scopes (networks) apart', async () => {
    const quotas = new MemoryQuotaStore();
    const policy = compilePolicy({ quota: { limit: 1, windowS: 60 } });
    expect(await enforcePolicy(policy, subject(), { quotas, scope: 'mainnet' })).toMatchObject({ ok: true });
    expect(await enforcePolicy(policy, subject(), { quotas, scope: 'testnet' })).toMatchObject({ ok: true });
    expect(await enforcePolicy(policy, subject(), { quotas, scope: 'testnet' })).toMatchObject({ ok: false, policy: 'quota' });
  });
});

describe('the refusal answer', () => {
  const policyRefusal = { policy: 'minimumAge' as const, error: 'The human proved no minimum age' };
  const quotaRefusal = { policy: 'quota' as const, error: 'Quota exhausted', retryAfterS: 12 };

  it('is 403 {error, policy} for a policy and 429 with Retry-After for a quota', async () => {
    expect(refusalAnswer(policyRefusal)).toEqual({ status: 403, body: { error: policyRefusal.error, policy: 'minimumAge' }, headers: {} });
    expect(refusalAnswer(quotaRefusal)).toEqual({
      status: 429,
      body: { error: 'Quota exhausted', policy: 'quota' },
      headers: { 'Retry-After': '12' },
    });
    const response = refusalResponse(quotaRefusal);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('12');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ error: 'Quota exhausted', policy: 'quota' });
    expect(policyRefusalBodySchema.parse(refusalAnswer(policyRefusal).body)).toEqual(refusalAnswer(policyRefusal).body);
    expect(policyRefusalBodySchema.safeParse({ error: 'x', policy: 'age' }).success, 'a policy name that does not exist').toBe(false);
  });

  it("is what the service's error handler answers a PolicyRefusalError with", async () => {
    const app = express();
    app.get('/policy', () => {
      throw new PolicyRefusalError(policyRefusal);
    });
    app.get('/quota', async () => {
      throw new PolicyRefusalError(quotaRefusal);
    });
    app.use(errorHandler(createLogger('silent')));
    const refused = await request(app).get('/policy');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(refusalAnswer(policyRefusal).body);
    expect(refused.headers['retry-after']).toBeUndefined();
    const exhausted = await request(app).get('/quota');
    expect(exhausted.status).toBe(429);
    expect(exhausted.body).toEqual({ error: 'Quota exhausted', policy: 'quota' });
    expect(exhausted.headers['retry-after']).toBe('12');
  });
});
