// Signing requests as an agent: the headers of one request, a fetch that signs every request it sends, and
// the check of a response another agent signed in the same header family.
import type { Address } from 'viem';
import {
  type HeaderBag,
  type RequestSigner,
  type RequestSignerIdentity,
  recoverRequestSigner,
  type SignedContent,
  signedHeaders,
} from '../core/signed-request.js';

export type { RequestSigner, RequestSignerIdentity } from '../core/signed-request.js';
export { AGENT_HEADERS } from '../core/signed-request.js';

/** The x-svc-agent-* headers for one request (timestamp: now unless given). */
export function signRequest(
  signer: RequestSigner,
  request: { method: string; url: string; body?: string | null; timestamp?: string },
): Promise<Record<string, string>> {
  return signedHeaders(signer, request);
}

type Fetch = typeof fetch;

/** The body text of a request, as it goes on the wire (strings only: a signature covers exact bytes). */
function bodyText(body: RequestInit['body']): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  throw new TypeError('A signing fetch signs string bodies only: pass JSON.stringify(...) as the body');
}

/** A fetch that signs each request with `signer` (the signature covers method, path+query and the body text). */
export function signingFetch(signer: RequestSigner, base: Fetch = fetch): Fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(await signRequest(signer, { method, url, body: bodyText(init.body) }))) headers.set(name, value);
    return base(input, { ...init, method, headers });
  };
}

/**
 * Who signed a response (agent-to-agent answers are signed by the answering agent over the request's method and
 * URL and the response body text); with `expected`, that it was that agent. Throws when the signature is
 * missing, outside its 5-minute window, or from someone else.
 */
export async function verifySignedResponse(
  response: { headers: Headers | HeaderBag },
  content: Omit<SignedContent, 'timestamp'>,
  options: { expected?: Address; now?: number } = {},
): Promise<RequestSignerIdentity> {
  const headers: HeaderBag = response.headers instanceof Headers ? Object.fromEntries(response.headers.entries()) : response.headers;
  const check = await recoverRequestSigner(headers, content, options.now ?? Date.now());
  if (!check.ok) throw new Error(`The response is not signed: ${check.error}`);
  if (options.expected && check.signer.agentAddress.toLowerCase() !== options.expected.toLowerCase()) {
    throw new Error(`The response is signed by ${check.signer.agentAddress}, not by ${options.expected}`);
  }
  return check.signer;
}
