// The answer to a request a policy refused, built once so the client SDK and the service answer alike: 403
// {error, policy}, or for an exhausted quota 429 {error, policy: 'quota'} with Retry-After in seconds.
import { z } from 'zod';
import { agentPolicySchema, type PolicyName, type PolicyRefusal } from './agent-policy.js';
import { ServiceError } from './errors.js';

/** The body of a refusal, for the OpenAPI document's 403 and 429 answers. */
export const policyRefusalBodySchema = z
  .object({
    error: z.string().describe('What failed and what would pass'),
    policy: agentPolicySchema.keyof().describe('The policy that refused: quota for an exhausted quota (429)'),
  })
  .describe('A request refused by a human-level policy');

export interface RefusalAnswer {
  status: 403 | 429;
  body: { error: string; policy: PolicyName };
  /** Retry-After for a 429; the body is JSON (the caller sets its content type, as express's res.json does). */
  headers: Record<string, string>;
}

export function refusalAnswer(refusal: Pick<PolicyRefusal, 'policy' | 'error' | 'retryAfterS'>): RefusalAnswer {
  const body = { error: refusal.error, policy: refusal.policy };
  if (refusal.retryAfterS === undefined) return { status: 403, body, headers: {} };
  return { status: 429, body, headers: { 'Retry-After': String(refusal.retryAfterS) } };
}

/** The same answer as a WHATWG Response (Hono, route handlers, workers). */
export function refusalResponse(refusal: Pick<PolicyRefusal, 'policy' | 'error' | 'retryAfterS'>): Response {
  const { status, body, headers } = refusalAnswer(refusal);
  return new Response(JSON.stringify(body), { status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' } });
}

/** A policy refusal thrown by a service: the HTTP error handler answers it with `answer` (status, body and headers). */
export class PolicyRefusalError extends ServiceError {
  readonly policy: PolicyName;

  constructor(refusal: Pick<PolicyRefusal, 'policy' | 'error' | 'retryAfterS'>) {
    super(refusal.retryAfterS === undefined ? 403 : 429, refusal.error, refusal.retryAfterS);
    this.policy = refusal.policy;
  }

  get answer(): RefusalAnswer {
    return refusalAnswer({ policy: this.policy, error: this.message, retryAfterS: this.retryAfterSeconds });
  }
}
