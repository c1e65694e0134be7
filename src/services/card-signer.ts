// Signs what the service publishes with its current key: A2A agent cards through @a2a-js/sdk's generator (A2A v1.0
// §8.4: a JWS over the RFC 8785 form of the card after a round trip through the v1.0 schema, so only v1.0 fields are
// covered) and other documents as a compact JWS. Signatures are made when an answer is built and kept with it, never
// per request. The key that signs may change (a rotation here, by another instance, by the operator's command): the
// signer looks at the current key every `watchMs` while it has signed anything, and tells its listeners when the
// key changed, so whoever keeps signed answers drops them and signs again with the new key.
import { type AgentCard, generateAgentCardSignature } from '@a2a-js/sdk';
import { CompactSign } from 'jose';
import type { ServiceSigningKey, SigningKeys } from './signing-keys.js';

/** A JWS in the form A2A cards carry it (the flattened JSON serialization without its payload). */
export interface CardSignature {
  protected: string;
  signature: string;
}

/** A value signed by key `kid`. */
export interface Signed<T> {
  value: T;
  kid: string;
}

/** The `typ` A2A v1.0 §8.4 gives a card signature's protected header. */
const CARD_SIGNATURE_TYP = 'JOSE';
/** How often the current key is looked at by default: as often as SigningKeys reads the store again. */
const DEFAULT_WATCH_MS = 1_000;

export interface CardSignerOptions {
  keys: Pick<SigningKeys, 'current'>;
  /** The JWKS that lists the keys (`jku` of every signature): where a verifier that trusts this service finds them. */
  jwksUrl: string;
  watchMs?: number;
  /** A look at the current key failed (the store did not answer); the next one tries again. */
  onWatchError?: (error: unknown) => void;
}

export class CardSigner {
  readonly #keys: Pick<SigningKeys, 'current'>;
  readonly #jwksUrl: string;
  readonly #watchMs: number;
  readonly #onWatchError: (error: unknown) => void;
  readonly #listeners = new Set<() => void>();
  #kid: string | undefined;
  #watch: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: CardSignerOptions) {
    this.#keys = options.keys;
    this.#jwksUrl = options.jwksUrl;
    this.#watchMs = options.watchMs ?? DEFAULT_WATCH_MS;
    this.#onWatchError = options.onWatchError ?? (() => undefined);
  }

  /** The kid of the key that signs, as last seen; undefined before anything was signed. */
  get kid(): string | undefined {
    return this.#kid;
  }

  /**
   * `card` with one signature by the current key (its `signatures` replaced). The SDK canonicalizes any card through
   * the v1.0 schema: a v0.3-shaped card is signed over its v1.0 fields (supportedInterfaces, capabilities, ...).
   */
  async signCard<C extends object>(card: C): Promise<Signed<C & { signatures: CardSignature[] }>> {
    const key = await this.#current();
    const header = { alg: key.alg, kid: key.kid, typ: CARD_SIGNATURE_TYP, jku: this.#jwksUrl };
    const signed = await generateAgentCardSignature(key.privateKey, header)({ ...card, signatures: [] } as unknown as AgentCard);
    // the SDK's entry carries `header: undefined` when there is no unprotected header: kept out of the JSON
    const signatures = (signed.signatures ?? []).map(({ protected: protectedHeader, signature }) => ({ protected: protectedHeader, signature }));
    return { value: { ...card, signatures }, kid: key.kid };
  }

  /** A compact JWS of `payload` (its bytes carried in it) by the current key; `cty` names the payload's media type. */
  async signCompact(payload: string, cty: string): Promise<Signed<string>> {
    const key = await this.#current();
    const jws = await new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: key.alg, kid: key.kid, jku: this.#jwksUrl, cty })
      .sign(key.privateKey);
    return { value: jws, kid: key.kid };
  }

  /**
   * `make` signed once per key: the value kept for the key that signs now, made again when it changes. A look at
   * the current key costs nothing while SigningKeys holds it (its refresh interval).
   */
  perKey<T>(make: () => Promise<Signed<T>>): () => Promise<T> {
    let kept: Promise<Signed<T>> | undefined;
    return async () => {
      const { kid } = await this.#current();
      const held = kept && (await kept.catch(() => undefined));
      if (held?.kid === kid) return held.value;
      const making = make();
      kept = making;
      return (await making).value;
    };
  }

  /** Calls `listener` when the key that signs changes, in the tick the signer learns it. Returns the unsubscribe. */
  onKeyChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops looking at the current key (shutdown); the next signature starts again. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#watch);
    this.#watch = undefined;
  }

  async #current(): Promise<ServiceSigningKey> {
    const key = await this.#keys.current();
    this.#seen(key.kid);
    if (this.#watch === undefined) {
      this.#stopped = false;
      this.#watch = setInterval(() => this.#look(), this.#watchMs).unref();
    }
    return key;
  }

  #look(): void {
    this.#keys.current().then(
      (key) => {
        if (!this.#stopped) this.#seen(key.kid);
      },
      (error: unknown) => this.#onWatchError(error),
    );
  }

  #seen(kid: string): void {
    if (kid === this.#kid) return;
    const before = this.#kid;
    this.#kid = kid;
    // the first key seen replaces nothing: nothing was signed before
    if (before !== undefined) for (const listener of this.#listeners) listener();
  }
}
