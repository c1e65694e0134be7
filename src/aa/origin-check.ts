// Which pages may use the account-abstraction proxy. The page's origin is the Origin header, else the Referer's;
// with an allow-list it must be on it, otherwise its host must be the one the request was sent to (the service's
// own pages). Refusals are 403 with the deployed service's messages. A browser cannot forge these headers; any
// other client can, which is why the proxy also needs a token and counts calls per client.
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceError } from '../core/errors.js';

export interface OriginPolicy {
  /** false: no check (AA_PROXY_ENFORCE_ORIGIN=false). */
  enforce: boolean;
  /** Origins, scheme://host[:port]; empty: the same-host rule. */
  allowedOrigins: readonly string[];
}

const forbidden = (message: string): ServiceError => new ServiceError(403, message);

/** A header's one value (Node joins or lists repeated ones; these are never repeated by a browser). */
export const headerOf = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export function checkOrigin(headers: IncomingHttpHeaders, policy: OriginPolicy): void {
  if (!policy.enforce) return;
  const candidate = headerOf(headers, 'origin') || headerOf(headers, 'referer');
  if (!candidate) throw forbidden('Missing origin/referer');
  // "null" (sandboxed frames, file: pages) is not a URL: refused here
  const page = URL.canParse(candidate) ? new URL(candidate) : undefined;
  if (!page) throw forbidden('Invalid origin/referer');
  if (policy.allowedOrigins.length > 0) {
    if (!policy.allowedOrigins.includes(page.origin)) throw forbidden('Origin not allowed');
    return;
  }
  const host = headerOf(headers, 'host');
  if (!host) throw forbidden('Missing host header');
  // the Host header read as the page's URL would write it: case and the scheme's default port do not count
  const target = URL.canParse(`${page.protocol}//${host}`) ? new URL(`${page.protocol}//${host}`) : undefined;
  if (target?.host !== page.host) throw forbidden('Cross-origin request blocked');
}
