// What every route taking a signed agent request shares: the request as the verifier sees it (the raw body text
// that was signed) and the answers a signature check can give.
import type { Request } from 'express';
import type { SignedRequest } from '../services/signed-requests.js';
import type { ResponseDoc } from './openapi/route-doc.js';
import { signedRefusalSchema } from './schemas/demo.js';

/** What the verifier sees of a request: the exact bytes that were signed. */
export const signedRequestOf = (req: Request): SignedRequest => ({
  headers: req.headers,
  method: req.method,
  url: req.originalUrl,
  ...(req.headers.host !== undefined ? { authority: req.headers.host } : {}),
  body: typeof req.body === 'string' ? req.body : '',
});

/** A refused signed request: {error}, and for a human-level policy's refusal the policy's name. */
export const refusal = (description: string): ResponseDoc => ({ description, schema: signedRefusalSchema });
export const QUOTA = "the human's quota of signed requests (HUMAN_QUOTA_*, shared by all of the human's agents) is used up (Retry-After)";

export const signatureErrors: Record<number, ResponseDoc> = {
  400: { description: 'An unsupported network, a malformed Signature-Input, or a malformed policy' },
  401: { description: 'No signature: neither the x-svc-agent-* headers nor an RFC 9421 Signature-Input' },
  403: refusal(
    'The signature or the agent check failed, or a policy refused the human: the message says which (bad or non-canonical ' +
      'signature: ECDSA needs low s and v 27/28; timestamp or created/expires; another host; a changed body; a covered component ' +
      'missing; unregistered or expired agent); a policy refusal names the policy',
  ),
  409: { description: 'This signed message or nonce was used before, at this or any other endpoint or over A2A (replay)' },
  429: refusal(`The quota: ${QUOTA}`),
  500: { description: 'The chain RPC failed' },
};
