// What a verifier fetches from a registry (its JWKS, its status lists), kept as the answers' Cache-Control allows:
// for max-age seconds from the fetch, never with no-store or no-cache. Between fetches the checks are offline.
type Fetch = typeof fetch;

interface Held {
  body: string;
  /** ms, the clock of `now`. */
  freshUntil: number;
  fetchedAt: number;
}

export interface FetchedText {
  body: string;
  fetchedAt: number;
}

export class HttpCache {
  readonly #held = new Map<string, Held>();
  readonly #loading = new Map<string, Promise<FetchedText>>();

  constructor(
    private readonly fetcher: Fetch = fetch,
    /** Most URLs kept: a verifier meets a handful of registries, each with a JWKS and a few lists. */
    private readonly maxEntries = 1_000,
  ) {}

  /** The body of `url`: the held copy while fresh (at `now`, ms), else fetched again (one fetch at a time per URL). */
  async get(url: string, now: number, options: { accept?: string; reload?: boolean } = {}): Promise<FetchedText> {
    const held = this.#held.get(url);
    if (held && !options.reload && now < held.freshUntil) return held;
    let loading = this.#loading.get(url);
    if (loading === undefined) {
      loading = this.#fetch(url, now, options.accept).finally(() => this.#loading.delete(url));
      this.#loading.set(url, loading);
    }
    return loading;
  }

  /** When `url` was fetched last (ms), if it is held. */
  fetchedAt(url: string): number | undefined {
    return this.#held.get(url)?.fetchedAt;
  }

  async #fetch(url: string, now: number, accept: string | undefined): Promise<FetchedText> {
    const init = accept ? { headers: { accept } } : {};
    let res: Response;
    try {
      // a GET is sent again once when it got no answer at all: a kept-alive connection the server closed while
      // idle fails the first request sent on it (a race HTTP/1.1 has no way to avoid)
      res = await this.fetcher(url, init).catch(() => this.fetcher(url, init));
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      throw new Error(`GET ${url} failed${cause}`, { cause: error });
    }
    if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
    const body = await res.text();
    const maxAge = maxAgeOf(res.headers.get('cache-control'));
    if (maxAge > 0) {
      if (this.#held.size >= this.maxEntries) this.#held.delete(this.#held.keys().next().value as string);
      this.#held.set(url, { body, freshUntil: now + maxAge * 1000, fetchedAt: now });
    } else {
      this.#held.delete(url);
    }
    return { body, fetchedAt: now };
  }
}

/** max-age in seconds; 0 for no-store, no-cache, private shared... or none given. */
function maxAgeOf(header: string | null): number {
  if (header === null) return 0;
  const directives = header
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  const seconds = maxAge === undefined ? 0 : Number(maxAge.slice('max-age='.length));
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
}
