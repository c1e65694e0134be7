// The service's own signing keys: the one that signs (cards, credentials, status lists) and the JWKS verifiers check
// them against. The ring (which key signs, which retired ones are still listed and until when) is kept in the store,
// so a restart and every instance sharing the store see the same; the private key itself is kept like the session
// secret: given by SIGNING_KEY, in a 0600 file under DATA_DIR, or, with instances sharing a store, in the ring.
// A rotation made elsewhere (another instance, `npm run rotate-signing-key`) is seen within `refreshMs`.

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import {
  type PrivateSigningJwk,
  type PublicSigningJwk,
  parseSigningJwk,
  publicSigningJwk,
  type SigningAlg,
  type SigningJwkInput,
  withKid,
} from '../core/signing-jwk.js';
import { DEFAULT_RETIRE_AFTER_MS, publishedKeys, type SigningKeyRing, succeed } from '../core/signing-key-ring.js';
import type { Clock, KeyValueStore } from '../store/key-value-store.js';
import type { SigningKeyFile } from '../store/signing-key-file.js';

export interface ServiceSigningKey {
  kid: string;
  alg: SigningAlg;
  /** A KeyObject: jose and the SDKs built on it take it, and so does node:crypto's sign (the fastest way to sign). */
  privateKey: KeyObject;
  /** What the JWKS lists of it: the public members, kid, alg, use "sig" (a jose JWK). */
  publicJwk: PublicSigningJwk;
}

export interface SigningKeys {
  /** The key that signs from now on. */
  current(): Promise<ServiceSigningKey>;
  /** Every public key a verifier may still need: the current one and retired ones until what they signed has expired. */
  jwks(): Promise<{ keys: PublicSigningJwk[] }>;
  /**
   * Start signing with a new key; the old one stays in the JWKS until `retireAfterMs` has passed (the longest
   * lifetime of anything it signed).
   */
  rotate(options?: { retireAfterMs?: number }): Promise<ServiceSigningKey>;
}

/** Where the key that signs is kept. */
export type SigningKeySource =
  /** SIGNING_KEY: this key signs; a rotation is a change of the setting. */
  | { kind: 'given'; jwk: SigningJwkInput }
  /** One instance: the file holds the key that signs, the ring follows it. */
  | { kind: 'file'; file: SigningKeyFile }
  /** Instances sharing the store: the ring holds the key; `offered` is what a first instance puts there (an earlier file's). */
  | { kind: 'store'; offered?: () => SigningJwkInput | undefined };

/** Where the ring is kept in the store. */
export const SIGNING_KEY_RING = 'signing-keys';
const DEFAULT_REFRESH_MS = 1_000;

export interface SigningKeyOptions {
  store: KeyValueStore;
  source: SigningKeySource;
  /** The algorithm of keys made here (at the first start, at a rotation); default EdDSA (Ed25519). */
  alg?: SigningAlg;
  /** How long a replaced key stays in the JWKS unless rotate() says otherwise; default DEFAULT_RETIRE_AFTER_MS. */
  retireAfterMs?: number;
  /** How long a read of the ring is used before the store is asked again; default 1 s. */
  refreshMs?: number;
  clock?: Clock;
  /** Hears of every key made or put in place (never the key itself). */
  log?: (message: string) => void;
  /** A refresh failed (the store did not answer): the ring read last is used meanwhile. */
  onRefreshError?: (error: unknown) => void;
}

interface Loaded {
  ring: SigningKeyRing;
  /** The private key that signs, as the ring's current key names it. */
  jwk: PrivateSigningJwk;
  key: ServiceSigningKey;
  readAt: number;
}

/** What a change of the current key did to the ring. */
interface Succession {
  ring: SigningKeyRing;
  /** The kid of the key it replaced; undefined when nothing changed, or there was no key before. */
  replaced?: string;
  changed: boolean;
}

export class ServiceSigningKeys implements SigningKeys {
  readonly #store: KeyValueStore;
  readonly #source: SigningKeySource;
  readonly #alg: SigningAlg;
  readonly #retireAfterMs: number;
  readonly #refreshMs: number;
  readonly #clock: Clock;
  readonly #log: (message: string) => void;
  readonly #onRefreshError: (error: unknown) => void;
  #loaded: Loaded | undefined;
  #loading: Promise<Loaded> | undefined;
  /** Imported keys by kid: an import costs more than a signature. */
  readonly #keys = new Map<string, ServiceSigningKey>();

  constructor(options: SigningKeyOptions) {
    this.#store = options.store;
    this.#source = options.source;
    this.#alg = options.alg ?? 'EdDSA';
    this.#retireAfterMs = options.retireAfterMs ?? DEFAULT_RETIRE_AFTER_MS;
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
    this.#clock = options.clock ?? Date.now;
    this.#log = options.log ?? (() => undefined);
    this.#onRefreshError = options.onRefreshError ?? (() => undefined);
  }

  async current(): Promise<ServiceSigningKey> {
    return (await this.#state()).key;
  }

  async jwks(): Promise<{ keys: PublicSigningJwk[] }> {
    const { ring } = await this.#state();
    return { keys: publishedKeys(ring, this.#clock()) };
  }

  async rotate(options: { retireAfterMs?: number } = {}): Promise<ServiceSigningKey> {
    const source = this.#source;
    if (source.kind === 'given') {
      throw new Error(
        'SIGNING_KEY sets the signing key: rotate by setting it to a new key (the old one stays in the JWKS for SIGNING_KEY_RETIRE_AFTER_MS)',
      );
    }
    const retireAfterMs = options.retireAfterMs ?? this.#retireAfterMs;
    const jwk = await this.#generate();
    // the file first: a rotation cut short leaves a key file the ring does not name yet, and the next start adopts it
    if (source.kind === 'file') source.file.replace(jwk);
    const { ring, replaced } = await this.#succeed(jwk, { keep: source.kind === 'store', retireAfterMs });
    this.#log(`rotated the signing key: ${describeSuccession(jwk, replaced, retireAfterMs, this.#clock())}`);
    this.#loaded = { ring, jwk, key: this.#key(jwk), readAt: this.#clock() };
    return this.#loaded.key;
  }

  async #state(): Promise<Loaded> {
    const loaded = this.#loaded;
    if (loaded && this.#clock() - loaded.readAt < this.#refreshMs) return loaded;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    try {
      this.#loaded = await this.#loading;
    } catch (error) {
      if (!this.#loaded) throw error;
      this.#onRefreshError(error);
      this.#loaded = { ...this.#loaded, readAt: this.#clock() };
    }
    return this.#loaded;
  }

  /** The ring as the store has it, brought in line with where the key is kept. */
  async #load(): Promise<Loaded> {
    const stored = await this.#store.get<SigningKeyRing>(SIGNING_KEY_RING);
    const source = this.#source;
    const named = stored?.current.publicJwk.kid;
    const loaded = (ring: SigningKeyRing, jwk: PrivateSigningJwk): Loaded => ({ ring, jwk, key: this.#key(jwk), readAt: this.#clock() });

    if (source.kind === 'store') {
      if (stored?.current.privateJwk) return loaded(stored, stored.current.privateJwk);
      // the first instance (or the first since SIGNING_KEY was unset) puts a key there; the others take it
      const earlier = source.offered?.();
      const offer = earlier ? await withKid(earlier) : await this.#generate();
      const { ring, replaced, changed } = await this.#succeed(offer, { keep: true, retireAfterMs: this.#retireAfterMs, unlessHeld: true });
      if (changed) {
        const origin = earlier ? 'kept the signing key of DATA_DIR/signing-key.json' : 'generated a signing key';
        this.#log(`${origin} in the shared store (${SIGNING_KEY_RING}); ${describeSuccession(offer, replaced, this.#retireAfterMs, this.#clock())}`);
      }
      return loaded(ring, ring.current.privateJwk ?? offer);
    }

    // the file is read again only when the ring names another key than the one held (a rotation by another process)
    const held = this.#loaded !== undefined && this.#loaded.jwk.kid === named ? this.#loaded.jwk : undefined;
    const jwk = source.kind === 'given' ? await withKid(source.jwk) : (held ?? (await this.#fromFile(source.file)));
    if (stored && named === jwk.kid) return loaded(stored, jwk);
    const { ring, replaced, changed } = await this.#succeed(jwk, { keep: false, retireAfterMs: this.#retireAfterMs });
    if (changed && replaced !== undefined) {
      const holder = source.kind === 'given' ? 'SIGNING_KEY' : source.file.path;
      this.#log(`${holder} holds a new signing key: ${describeSuccession(jwk, replaced, this.#retireAfterMs, this.#clock())}`);
    }
    return loaded(ring, jwk);
  }

  /**
   * The ring with `jwk` as its current key, changed atomically in the store; `keep`: the ring holds its private part.
   * `unlessHeld`: a first instance's offer, which loses to a key another instance put there meanwhile.
   */
  async #succeed(jwk: PrivateSigningJwk, how: { keep: boolean; retireAfterMs: number; unlessHeld?: boolean }): Promise<Succession> {
    const now = this.#clock();
    let replaced: string | undefined;
    let changed = false;
    const ring = (await this.#store.update<SigningKeyRing>(SIGNING_KEY_RING, (stored) => {
      if (how.unlessHeld && stored?.current.privateJwk) return stored;
      changed = stored?.current.publicJwk.kid !== jwk.kid;
      replaced = changed ? stored?.current.publicJwk.kid : undefined;
      return succeed(stored, { publicJwk: publicSigningJwk(jwk), ...(how.keep ? { privateJwk: jwk } : {}) }, now, how.retireAfterMs);
    })) as SigningKeyRing;
    return { ring, changed, ...(replaced !== undefined ? { replaced } : {}) };
  }

  async #fromFile(file: SigningKeyFile): Promise<PrivateSigningJwk> {
    const held = file.read();
    if (held) return withKid(held);
    const { jwk, created } = file.create(await this.#generate());
    if (created) this.#log(`generated a signing key in ${file.path}; set SIGNING_KEY to manage it yourself`);
    return withKid(jwk);
  }

  async #generate(): Promise<PrivateSigningJwk> {
    const { privateKey } = await generateKeyPair(this.#alg, { extractable: true });
    return withKid(parseSigningJwk({ ...(await exportJWK(privateKey)), alg: this.#alg }));
  }

  #key(jwk: PrivateSigningJwk): ServiceSigningKey {
    let key = this.#keys.get(jwk.kid);
    if (key === undefined) {
      const { kid, alg, ...members } = jwk;
      key = { kid, alg, privateKey: createPrivateKey({ key: members, format: 'jwk' }), publicJwk: publicSigningJwk(jwk) };
      this.#keys.set(kid, key);
    }
    return key;
  }
}

/** "kid X (EdDSA) signs from now on; kid Y stays in the JWKS until ..." for the log. */
function describeSuccession(jwk: PrivateSigningJwk, replaced: string | undefined, retireAfterMs: number, now: number): string {
  const signs = `kid ${jwk.kid} (${jwk.alg}) signs from now on`;
  if (replaced === undefined) return signs;
  if (retireAfterMs <= 0) return `${signs}; kid ${replaced} is withdrawn from the JWKS`;
  return `${signs}; kid ${replaced} stays in the JWKS until ${new Date(now + retireAfterMs).toISOString()}`;
}
