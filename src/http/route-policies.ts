// The cache and CORS policy of any request path, and the methods it answers (Allow), looked up in the route table.
// A path that matches no route (a 404) takes the CORS group of the nearest route above it (an unknown path under a
// session endpoint answers like the session endpoints), else the defaults below, and is never cached.
import { type CachePolicy, CORS_GROUPS, type CorsGroup, pathMatcher, type Route } from './route.js';

export type CorsSet = (typeof CORS_GROUPS)[CorsGroup];

/** Paths that match no route and no route's prefix: first match wins; null: no CORS headers. */
const DEFAULT_CORS: readonly [prefix: string, group: CorsGroup | null][] = [
  // the account-abstraction proxy: its own origin allow-list
  ['/api/aa/', null],
  // a page may read the 404 of an unknown API or discovery path
  ['/api/', 'public'],
  ['/.well-known/', 'public'],
];

const staticPrefix = (template: string): string => {
  const brace = template.indexOf('{');
  return (brace < 0 ? template : template.slice(0, brace)).replace(/\/$/, '');
};

interface Entry {
  method: Route['method'];
  matches: (path: string) => boolean;
  prefix: string;
  cache: CachePolicy;
  cors: CorsGroup | undefined;
}

/** The methods the service answers at all, in the order an Allow header lists them. */
export const SERVER_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS'] as const;

export class RoutePolicies {
  readonly #entries: Entry[];

  constructor(routes: readonly Route[]) {
    this.#entries = routes.map((route) => ({
      method: route.method,
      matches: pathMatcher(route.path),
      prefix: staticPrefix(route.path),
      cache: route.cache ?? 'none',
      cors: route.cors,
    }));
  }

  /** The Cache-Control policy of a GET or HEAD of `path`; `none` for other methods and unknown paths. */
  cacheFor(method: string, path: string): CachePolicy {
    if (method !== 'GET' && method !== 'HEAD') return 'none';
    return this.#entries.find((entry) => entry.method === 'get' && entry.matches(path))?.cache ?? 'none';
  }

  /**
   * The methods `path` answers, as its Allow header lists them: its routes' methods, HEAD with GET (express answers
   * it), and OPTIONS (a preflight, or the Allow header alone). Empty for a path of no route.
   */
  allowFor(path: string): string[] {
    const methods = new Set<string>(this.#entries.filter((entry) => entry.matches(path)).map((entry) => entry.method.toUpperCase()));
    if (methods.size === 0) return [];
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return SERVER_METHODS.filter((method) => methods.has(method));
  }

  /** The CORS answer of `path` (any method: a preflight asks before the real request). */
  corsFor(path: string): CorsSet | null {
    const matched = this.#entries.find((entry) => entry.matches(path));
    if (matched) return matched.cors ? CORS_GROUPS[matched.cors] : null;
    const under = this.#entries
      .filter((entry) => entry.prefix !== '' && (path === entry.prefix || path.startsWith(`${entry.prefix}/`)))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (under) return under.cors ? CORS_GROUPS[under.cors] : null;
    const fallback = DEFAULT_CORS.find(([prefix]) => path.startsWith(prefix));
    return fallback?.[1] ? CORS_GROUPS[fallback[1]] : null;
  }
}
