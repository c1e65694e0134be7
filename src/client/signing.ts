// Signing requests as an agent, in either scheme: the x-svc-agent-* headers (the default) or an RFC 9421 HTTP
// Message Signature (ERC-8128 for secp256k1 agents, Web Bot Auth for Ed25519 agents); a fetch that signs every
// request it sends; and the check of a response another agent signed in the x-svc-agent family.
import type { Address } from 'viem';
import { type Rfc9421SignOptions, signRfc9421 } from '../core/rfc9421-sign.js';
import {
  type HeaderBag,
  type RequestSigner,
  type RequestSignerIdentity,
  recoverRequestSigner,
  type SignedContent,
  signedHeaders,
} from '../core/signed-request.js';

export type { Rfc9421SignOptions } from '../core/rfc9421-sign.js';
export type { RequestSigner, RequestSignerIdentity } from '../core/signed-request.js';
export { AGENT_HEADERS } from '../core/signed-request.js';

/** How a request is signed: our x-svc-agent-* headers, or RFC 9421 (ERC-8128 or Web Bot Auth, by the key's type). */
export type SigningScheme = 'x-svc-agent' | 'rfc9421';

export interface SignRequestOptions extends Rfc9421SignOptions {
  /** Default x-svc-agent. The RFC 9421 options (chainId, signatureAgent, created, ...) apply to rfc9421 only. */
  scheme?: SigningScheme;
}

/**
 * The headers that sign one request. x-svc-agent (default): the signature covers the method, path and query, the
 * body and the timestamp (now unless given). rfc9421: it covers the method, the authority, the path and query, a
 * Content-Digest of the body, with created, expires and a fresh nonce; `url` must then be absolute. A secp256k1
 * agent signs as ERC-8128 (keyid names `chainId`, default 42220: pass 11142220 on Celo Sepolia); an Ed25519 agent
 * signs as Web Bot Auth and must name its key directory in `signatureAgent` (keyDirectoryUrl).
 */
export function signRequest(
  signer: RequestSigner,
  request: { method: string; url: string; body?: string | null; timestamp?: string },
  options: SignRequestOptions = {},
): Promise<Record<string, string>> {
  const { scheme = 'x-svc-agent', ...rfc9421 } = options;
  if (scheme === 'x-svc-agent') return signedHeaders(signer, request);
  if (!URL.canParse(request.url)) {
    return Promise.reject(new TypeError(`An RFC 9421 signature covers the host: pass the absolute URL (https://host/path), not ${request.url}`));
  }
  if (signer.type === 'ed25519' && rfc9421.signatureAgent === undefined) {
    return Promise.reject(
      new TypeError(
        "An Ed25519 agent signs RFC 9421 requests as Web Bot Auth, which needs options.signatureAgent: the agent's key directory URL, keyDirectoryUrl(registryUrl, chainId, agentId)",
      ),
    );
  }
  return signRfc9421(signer, request, rfc9421);
}

type Fetch = typeof fetch;

/** The body text of a request, as it goes on the wire (strings only: a signature covers exact bytes). */
function bodyText(body: RequestInit['body']): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  throw new TypeError('A signing fetch signs string bodies only: pass JSON.stringify(...) as the body');
}

/** A fetch that signs each request with `signer`, in the scheme of `options` (see signRequest). */
export function signingFetch(signer: RequestSigner, base: Fetch = fetch, options: SignRequestOptions = {}): Fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(await signRequest(signer, { method, url, body: bodyText(init.body) }, options))) {
      headers.set(name, value);
    }
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
