// RFC 9530 Content-Digest: what a request signature covers of the body. The field is a structured dictionary of
// digests by algorithm (`sha-256=:<base64>:`), parsed and serialized with structured-headers; the digests are
// taken over the body's UTF-8 bytes, as they go on the wire.
import { createHash, timingSafeEqual } from 'node:crypto';
import { parseDictionary, serializeDictionary } from 'structured-headers';

/** The algorithms of the IANA Hash Algorithms for HTTP Digest Fields registry that are not deprecated. */
const DIGEST_ALGORITHMS = { 'sha-256': 'sha256', 'sha-512': 'sha512' } as const;

export type ContentDigestAlgorithm = keyof typeof DIGEST_ALGORITHMS;

const digestOf = (algorithm: ContentDigestAlgorithm, body: string): Buffer => createHash(DIGEST_ALGORITHMS[algorithm]).update(body, 'utf8').digest();

/** The Content-Digest field value of `body` (default sha-256, as RFC 9530 recommends). */
export function contentDigest(body: string, algorithm: ContentDigestAlgorithm = 'sha-256'): string {
  return serializeDictionary(new Map([[algorithm, [digestOf(algorithm, body), new Map()]]]));
}

/**
 * Why `field` does not match `body`, or undefined when it does. Every digest of an algorithm we know must match
 * (RFC 9530 lets a recipient ignore the others), and at least one must be of an algorithm we know.
 */
export function contentDigestMismatch(field: string, body: string): string | undefined {
  let digests: ReturnType<typeof parseDictionary>;
  try {
    digests = parseDictionary(field);
  } catch {
    return 'Content-Digest is not a structured dictionary: send sha-256=:<base64 of the SHA-256 of the body>:';
  }
  let checked = 0;
  for (const [name, member] of digests) {
    if (!(name in DIGEST_ALGORITHMS)) continue;
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) return `Content-Digest ${name} is not a byte sequence: send ${name}=:<base64>:`;
    const expected = digestOf(name as ContentDigestAlgorithm, body);
    const sent = new Uint8Array(value);
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
      return `Content-Digest ${name} does not match the body: the body was changed, or the digest was not taken over its exact bytes`;
    }
    checked++;
  }
  return checked > 0 ? undefined : 'Content-Digest names no algorithm this service checks: send sha-256 (or sha-512)';
}
