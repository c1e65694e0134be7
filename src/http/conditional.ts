// Answers prepared ahead (JSON bytes and a strong ETag) written as they are, and conditional GETs: a client that
// already holds the current representation gets 304 without a body (RFC 9110 §13.1.2, §15.4.5).
import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { z } from 'zod';

/** The If-None-Match request header, as the OpenAPI document shows it. */
export const conditionalGetHeaders = z.object({
  'If-None-Match': z
    .string()
    .optional()
    .describe(
      'ETags of representations the client holds (or *): when one matches the current answer (weak comparison), the answer is 304 without a body',
    ),
});

/** The ETag response header, as the OpenAPI document shows it. */
export const etagHeader = {
  ETag: {
    description: 'Strong ETag of the answer (a hash of its bytes); send it back as If-None-Match to get 304 while the answer is unchanged',
    schema: z.string().meta({ id: 'EntityTag' }),
  },
};

const ENTITY_TAG = /(?:W\/)?("[^"]*")/g;

/**
 * Does If-None-Match name `etag`? "*" matches any current representation; otherwise the weak comparison a GET
 * uses: the opaque tags are compared, a W/ prefix on either side ignored. A malformed header matches nothing.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const match of header.matchAll(ENTITY_TAG)) if (match[1] === opaque) return true;
  return false;
}

/** A JSON answer serialized ahead: its text, its length in bytes, its strong ETag. */
export interface Prepared {
  text: string;
  bytes: number;
  etag: string;
}

/** Representations by answer: the services hand out one answer object for as long as it is current. */
const representations = new WeakMap<object, Prepared>();

/**
 * The JSON representation of a service's answer, made once per answer object: checked by `check` (the route's
 * documented schema, which throws when the answer does not match it), serialized, and tagged with a strong ETag (a
 * hash of its bytes).
 */
export function jsonRepresentation<T extends object>(value: T, check: (value: T) => void): Prepared {
  let prepared = representations.get(value);
  if (prepared === undefined) {
    check(value);
    const text = JSON.stringify(value);
    prepared = { text, bytes: Buffer.byteLength(text), etag: `"${hash('sha256', text, 'base64url')}"` };
    representations.set(value, prepared);
  }
  return prepared;
}

/**
 * Writes a prepared JSON answer: 304 (with its ETag, no body) when the client holds it, else 200 with the text (no
 * body for HEAD). The Cache-Control the route table gives the route is already set, and holds for both.
 */
export function sendPrepared(req: Request, res: Response, { text, bytes, etag }: Prepared): void {
  res.setHeader('ETag', etag);
  if ((req.method === 'GET' || req.method === 'HEAD') && ifNoneMatchHits(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes);
  if (req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
}
