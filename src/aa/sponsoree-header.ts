// Who asks the local paymaster for a sponsorship: the proxy knows (the client address it counts, the token it
// checked) and tells the paymaster in a header of its upstream request, MACed with a key that lives only in the
// service's memory. Any local process (another user's too) can reach the loopback paymaster; none can claim a client,
// so none can spend another client's budget. A call without the header is a direct caller's (DIRECT_CLIENT).
// value: base64url(JSON {client, token}) "." base64url(HMAC-SHA256(key, first part)).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SPONSOREE_HEADER = 'x-sponsoree';

/** Who asks for a sponsorship: the client address the proxy counts and the token it checked. */
export interface Sponsoree {
  client: string;
  /** An id of the proxy token (not the token itself). */
  token?: string;
}

/** The client of calls that reach the paymaster without the proxy (loopback only): they share one budget. */
export const DIRECT_CLIENT = 'direct';

const sign = (key: Uint8Array, payload: string): string => createHmac('sha256', key).update(payload, 'utf8').digest('base64url');

export function encodeSponsoree(key: Uint8Array, who: Sponsoree): string {
  const payload = Buffer.from(JSON.stringify({ client: who.client, ...(who.token ? { token: who.token } : {}) }), 'utf8').toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

/** The sponsoree a header names, or undefined when it is not one this key signed. */
export function decodeSponsoree(key: Uint8Array, value: string): Sponsoree | undefined {
  const [payload, mac, extra] = value.split('.');
  if (!payload || !mac || extra !== undefined) return undefined;
  const given = Buffer.from(mac, 'utf8');
  const expected = Buffer.from(sign(key, payload), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { client?: unknown; token?: unknown };
    if (typeof parsed.client !== 'string' || (parsed.token !== undefined && typeof parsed.token !== 'string')) return undefined;
    return { client: parsed.client, ...(parsed.token ? { token: parsed.token } : {}) };
  } catch {
    return undefined;
  }
}
