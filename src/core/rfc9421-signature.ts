// The RFC 9421 signature base of a message, built by http-message-signatures from the covered components and
// parameters of one Signature-Input member (parsed by structured-headers): the bytes a signer signs and a verifier
// checks. Nothing here canonicalizes by hand: the library derives each component and formats the base, and the
// @signature-params line is the member's own serialization, as RFC 9421 section 2.3 defines it.
import { httpbis, type Request, type Response } from 'http-message-signatures';
import { type InnerList, serializeItem, serializeList } from 'structured-headers';

/** A message as the library reads it: a request (absolute URL; a URL object saves parsing it again) or a response. */
export type Rfc9421Message = Request | Response;

/**
 * The signature base of `message` for one signature's covered components and parameters; `request` is the request a
 * response answers (components with `;req`). Throws on a component the message lacks.
 */
export function signatureBase(message: Rfc9421Message, signature: InnerList, request?: Request): string {
  const fields = signature[0].map(serializeItem);
  const base = request
    ? httpbis.createSignatureBase({ fields }, message as Response, request)
    : httpbis.createSignatureBase({ fields }, message as Request);
  base.push(['"@signature-params"', [serializeList([signature])]]);
  return httpbis.formatSignatureBase(base);
}
