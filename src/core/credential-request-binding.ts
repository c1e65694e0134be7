// A presented credential as the proof of one HTTP request: the key-binding JWT's nonce is derived from the request
// instead of asked of the verifier, so a presentation is good for that request only, and a verifier checks it
// without a round trip. The nonce covers what an RFC 9421 signature of this service's profiles covers: the method,
// the authority, the path and query, and the body (its SHA-256). The audience (the KB-JWT's aud) names the verifier;
// the KB-JWT's iat and jti make it fresh and spent once.
import { createHash } from 'node:crypto';

/** The HTTP authentication scheme of a presented credential: `Authorization: SD-JWT <presentation>`. */
export const CREDENTIAL_AUTH_SCHEME = 'SD-JWT';

/** The request as both sides see it: the method, the absolute URL, the body text. */
export interface BoundRequest {
  method: string;
  url: string;
  body?: string | null;
}

/** What the nonce covers besides the authority, which a verifier may accept more than one of. */
export interface RequestBinding {
  method: string;
  /** The authority the request was sent to (URL host: lower case, the port when not the scheme's default). */
  authority: string;
  /** The path (or "/") and query. */
  target: string;
  /** The SHA-256 of the body's UTF-8 bytes (of nothing when there is no body), base64url. */
  digest: string;
}

export function requestBinding(request: BoundRequest): RequestBinding {
  const url = new URL(request.url);
  return {
    method: request.method.toUpperCase(),
    authority: url.host,
    target: `${url.pathname || '/'}${url.search}`,
    digest: createHash('sha256')
      .update(request.body ?? '', 'utf8')
      .digest('base64url'),
  };
}

/**
 * The KB-JWT nonce of a request: base64url(SHA-256(METHOD LF authority LF path-and-query LF body digest)), with
 * `authority` in place of the request's own when given (a verifier checking the hosts it answers at).
 */
export function requestNonce(binding: RequestBinding, authority: string = binding.authority): string {
  return createHash('sha256').update(`${binding.method}\n${authority}\n${binding.target}\n${binding.digest}`).digest('base64url');
}

/** The presentation an Authorization field carries in the SD-JWT scheme, or undefined for another field. */
export function credentialOfAuthorization(field: string | undefined): string | undefined {
  const match = field === undefined ? null : /^SD-JWT +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(field);
  return match?.[1];
}
