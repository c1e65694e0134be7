// Human-level policies: what a service asks of the human behind an agent beyond "is registered" (age, sanctions,
// nationality, how many agents the human runs, how old the proof is, how strong its provider, and a per-human
// quota). One set, used by the client SDK's verifier and by the service's own endpoints, so both refuse alike.
//
// checkPolicy runs on every request: compilePolicy validates the policy and builds the sets once, and the check
// itself allocates nothing unless it refuses (scripts/bench-policy.ts measures it).
import { z } from 'zod';
import { type AgentCredentials, publicCredentials } from './credentials.js';
import { pseudonymQuotaKeyOf, type Quota, type QuotaStore, type QuotaUse, quotaKeyOf, quotaRefusalMessage, quotaSchema } from './human-quota.js';

/** What the registry's maxProofAge is unless the operator changed it (AgentRegistry.sol): 365 days. */
export const DEFAULT_REGISTRY_MAX_PROOF_AGE_S = 365 * 24 * 60 * 60;

// A nationality as the document discloses it: ISO 3166-1 alpha-3, or ICAO 9303's own codes ("D<<" for Germany).
const countryCode = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z<]{3}$/, 'a three-letter code as the document discloses it (ISO 3166-1 alpha-3, e.g. GBR)');

export const agentPolicySchema = z
  .strictObject({
    minimumAge: z.number().int().min(0).max(125).optional().describe('The age threshold the human must have proved (olderThan), e.g. 18'),
    ofac: z
      .boolean()
      .optional()
      .describe(
        'The proof must show the OFAC checks passed: name + date of birth and name + year of birth (the document-number check runs for passports only)',
      ),
    nationalities: z
      .strictObject({
        allow: z.array(countryCode).min(1).optional().describe('Only these nationalities; an undisclosed one is refused'),
        deny: z.array(countryCode).min(1).optional().describe('Not these nationalities; an undisclosed one is refused'),
      })
      .refine((lists) => lists.allow !== undefined || lists.deny !== undefined, 'give allow, deny or both')
      .refine((lists) => !lists.allow?.some((code) => lists.deny?.includes(code)), 'a code cannot be both allowed and denied')
      .optional()
      .describe('Nationality allow and deny lists (the human must have disclosed the nationality)'),
    maxAgentsPerHuman: z.number().int().min(1).optional().describe('At most this many live agents for the human, this one included'),
    maxProofAgeS: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('At most this many seconds since the proof was made (estimated as its expiry minus the registry’s maximum proof age)'),
    minimumStrength: z.number().int().min(0).max(100).optional().describe('The proof provider’s verification strength, 0 to 100'),
    quota: quotaSchema.optional(),
  })
  .describe('Human-level policies an agent must meet; a refusal is 403 {error, policy}, an exhausted quota 429 with Retry-After');

export type AgentPolicy = z.output<typeof agentPolicySchema>;
export type AgentPolicyInput = z.input<typeof agentPolicySchema>;
export type PolicyName = keyof AgentPolicy;

/** The credentials a check reads: PublicCredentials or the interface's credentials (empty nationality: not disclosed). */
export interface PolicyCredentials {
  nationality?: string;
  olderThan: number;
  ofac: readonly boolean[];
}

/** The agent as a policy sees it. */
export interface PolicySubject {
  credentials: PolicyCredentials;
  /** Live agents of the human, this one included. */
  agentCount: number;
  /** The proof provider's verification strength, 0 to 100. */
  strength: number;
  /** Unix seconds. */
  proofExpiresAt: number;
  /** Unix seconds; absent: estimated as proofExpiresAt minus the registry's maximum proof age (see compilePolicy). */
  proofIssuedAt?: number;
  nullifier: bigint;
  /**
   * A pairwise pseudonym of the human (a credential's sub), for a verifier that does not learn the nullifier: the quota
   * counts under it instead. It is another key than the nullifier's, so the same human's signed requests and
   * credential presentations draw on two budgets.
   */
  pseudonym?: string;
}

export type PolicyCheck = { ok: true } | { ok: false; policy: Exclude<PolicyName, 'quota'>; error: string };

export interface CompiledPolicy {
  /** The policy as validated (defaults filled in, codes upper-cased). */
  readonly policy: AgentPolicy;
  readonly quota: Quota | undefined;
  /** Every policy but the quota (which needs a store: enforcePolicy); nowS in unix seconds. */
  check(subject: PolicySubject, nowS: number): PolicyCheck;
}

export interface CompileOptions {
  /**
   * The registry's maxProofAge in seconds (default 365 days): a proof's issue time is estimated as its expiry minus
   * it. The estimate is never later than the truth when the registry capped the expiry by the document's own, so a
   * capped proof looks older than it is, never younger; a change of maxProofAge since the proof moves it too.
   */
  registryMaxProofAgeS?: number;
}

const PASS: PolicyCheck = Object.freeze({ ok: true });

const ageText = (seconds: number): string => {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 2 * 86400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} days`;
};
const listText = (codes: ReadonlySet<string>): string => [...codes].join(', ');

/** Validates a policy (a RangeError naming what is wrong) and builds its checker. */
export function compilePolicy(input: AgentPolicyInput, options: CompileOptions = {}): CompiledPolicy {
  const parsed = agentPolicySchema.safeParse(input);
  if (!parsed.success) throw new RangeError(`Invalid agent policy: ${z.prettifyError(parsed.error)}`);
  const policy = parsed.data;
  const registryMaxProofAgeS = options.registryMaxProofAgeS ?? DEFAULT_REGISTRY_MAX_PROOF_AGE_S;
  const { minimumAge, ofac, maxAgentsPerHuman, maxProofAgeS, minimumStrength } = policy;
  const allow = policy.nationalities?.allow && new Set(policy.nationalities.allow);
  const deny = policy.nationalities?.deny && new Set(policy.nationalities.deny);

  const check = (subject: PolicySubject, nowS: number): PolicyCheck => {
    const { credentials } = subject;
    if (minimumAge !== undefined && !(credentials.olderThan >= minimumAge)) {
      const proved = credentials.olderThan > 0 ? `proved an age over ${credentials.olderThan}` : 'proved no minimum age';
      return refuse('minimumAge', `The human ${proved}; this service needs ${minimumAge} or over: prove minimumAge ${minimumAge} or more`);
    }
    if (ofac && !(credentials.ofac[1] === true && credentials.ofac[2] === true)) {
      return refuse(
        'ofac',
        `The proof does not show the OFAC checks passed (ofac ${JSON.stringify(credentials.ofac)}); this service needs the name checks cleared: prove with ofac: true`,
      );
    }
    if (allow || deny) {
      const nationality = credentials.nationality;
      if (!nationality) {
        return refuse('nationalities', 'The human did not disclose a nationality, which this service checks: prove with nationality disclosed');
      }
      if (allow && !allow.has(nationality)) {
        return refuse('nationalities', `Nationality ${nationality} is not accepted; this service accepts ${listText(allow)}`);
      }
      if (deny?.has(nationality)) {
        return refuse('nationalities', `Nationality ${nationality} is not accepted; this service refuses ${listText(deny)}`);
      }
    }
    if (maxAgentsPerHuman !== undefined && subject.agentCount > maxAgentsPerHuman) {
      return refuse(
        'maxAgentsPerHuman',
        `The human has ${subject.agentCount} live agents; this service accepts humans with at most ${maxAgentsPerHuman}: deregister ${subject.agentCount - maxAgentsPerHuman}`,
      );
    }
    if (maxProofAgeS !== undefined) {
      const issuedAt = subject.proofIssuedAt ?? subject.proofExpiresAt - registryMaxProofAgeS;
      const age = nowS - issuedAt;
      if (age > maxProofAgeS) {
        return refuse(
          'maxProofAgeS',
          `The human's proof is about ${ageText(age)} old; this service accepts proofs at most ${ageText(maxProofAgeS)} old: refresh the proof`,
        );
      }
    }
    if (minimumStrength !== undefined && !(subject.strength >= minimumStrength)) {
      return refuse(
        'minimumStrength',
        `The proof provider's strength is ${subject.strength}; this service needs ${minimumStrength} or more: prove with a stronger provider`,
      );
    }
    return PASS;
  };
  return { policy, quota: policy.quota, check };
}

const refuse = (policy: Exclude<PolicyName, 'quota'>, error: string): PolicyCheck => ({ ok: false, policy, error });

const compiled = new WeakMap<AgentPolicyInput, CompiledPolicy>();
const isCompiled = (policy: AgentPolicyInput | CompiledPolicy): policy is CompiledPolicy => typeof (policy as CompiledPolicy).check === 'function';

/**
 * Checks every policy but the quota. A plain policy is compiled on first use and the result kept for that object
 * (do not change a policy object once used; compile it yourself to choose the registry's maximum proof age).
 */
export function checkPolicy(subject: PolicySubject, policy: AgentPolicyInput | CompiledPolicy, nowS: number): PolicyCheck {
  if (isCompiled(policy)) return policy.check(subject, nowS);
  let checker = compiled.get(policy);
  if (!checker) {
    checker = compilePolicy(policy);
    compiled.set(policy, checker);
  }
  return checker.check(subject, nowS);
}

/** A refusal by a policy: 403, or 429 with retryAfterS for an exhausted quota. */
export interface PolicyRefusal {
  ok: false;
  policy: PolicyName;
  error: string;
  /** Only for an exhausted quota. */
  retryAfterS?: number;
}

export type PolicyOutcome = { ok: true; quota?: QuotaUse } | PolicyRefusal;

export interface EnforceOptions {
  /** Where the quota is counted (required when the policy has one). */
  quotas?: QuotaStore;
  /** Separates the humans of several chains in one store (the service passes the network). */
  scope?: string;
  /** ms since epoch; default now. */
  nowMs?: number;
}

/**
 * Every policy, then the quota: a request refused by a policy does not use the human's budget. An agent without a
 * human (nullifier 0) has no budget to draw on and is refused when there is a quota.
 */
export async function enforcePolicy(policy: CompiledPolicy, subject: PolicySubject, options: EnforceOptions = {}): Promise<PolicyOutcome> {
  const nowMs = options.nowMs ?? Date.now();
  const checked = policy.check(subject, Math.floor(nowMs / 1000));
  if (!checked.ok) return checked;
  const quota = policy.quota;
  if (!quota) return checked;
  if (!options.quotas) throw new TypeError('enforcePolicy: the policy has a quota; pass a QuotaStore (options.quotas)');
  if (subject.pseudonym === undefined && subject.nullifier === 0n) {
    return { ok: false, policy: 'quota', error: 'The agent has no proof of human, so no per-human quota can count it: register it with a proof' };
  }
  const key =
    subject.pseudonym === undefined
      ? quotaKeyOf(quota, subject.nullifier, options.scope)
      : pseudonymQuotaKeyOf(quota, subject.pseudonym, options.scope);
  const use = await options.quotas.consume(key, quota, nowMs);
  if (!use.ok) return { ok: false, policy: 'quota', error: quotaRefusalMessage(quota, use.retryAfterS), retryAfterS: use.retryAfterS };
  return { ok: true, quota: use };
}

/** The subject of an agent as the registry stores it (AgentView, or the same fields read another way). */
export function policySubjectOf(view: {
  credentials: AgentCredentials;
  agentCountForHuman: bigint | number;
  verificationStrength: number;
  proofExpiresAt: bigint | number;
  nullifier: bigint;
}): PolicySubject {
  return {
    credentials: publicCredentials(view.credentials),
    agentCount: Number(view.agentCountForHuman),
    strength: view.verificationStrength,
    proofExpiresAt: Number(view.proofExpiresAt),
    nullifier: view.nullifier,
  };
}
