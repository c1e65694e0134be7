// The service's signing keys over time: the one that signs now, and the retired ones a verifier may still need
// until everything they signed has expired. A new key succeeds the current one (a rotation, or a key file or
// SIGNING_KEY that changed); the one it replaces stays listed until its retire time, then drops out.
import type { PrivateSigningJwk, PublicSigningJwk } from './signing-jwk.js';

/** How long a replaced key stays listed by default: longer than anything the service signs lives. */
export const DEFAULT_RETIRE_AFTER_MS = 24 * 3_600_000;

export interface SigningKeyRing {
  current: {
    publicJwk: PublicSigningJwk;
    /** Since when it signs (ms). */
    since: number;
    /** Held here only where the ring is the key's one home (instances sharing a store). */
    privateJwk?: PrivateSigningJwk;
  };
  /** Keys that sign no more, the latest first, each listed until `retireAt` (ms); never their private part. */
  retired: { publicJwk: PublicSigningJwk; retireAt: number }[];
}

/** The key that signs from `now` on. */
export interface SucceedingKey {
  publicJwk: PublicSigningJwk;
  privateJwk?: PrivateSigningJwk;
}

/**
 * `ring` with `next` as its current key at `now`: the key it replaces is retired until `now + retireAfterMs` (not
 * listed at all with 0: a compromised key), retired keys past their time are dropped, and a retired key that comes
 * back signs again. The same key as the current one changes nothing but where its private part is kept.
 */
export function succeed(ring: SigningKeyRing | undefined, next: SucceedingKey, now: number, retireAfterMs: number): SigningKeyRing {
  const current = { publicJwk: next.publicJwk, since: now, ...(next.privateJwk ? { privateJwk: next.privateJwk } : {}) };
  if (ring === undefined) return { current, retired: [] };
  const kid = next.publicJwk.kid;
  if (ring.current.publicJwk.kid === kid) return { ...ring, current: { ...current, since: ring.current.since } };
  const retired = ring.retired.filter((key) => key.retireAt > now && key.publicJwk.kid !== kid);
  // the latest first: the one a verifier is likeliest to need
  return { current, retired: retireAfterMs > 0 ? [{ publicJwk: ring.current.publicJwk, retireAt: now + retireAfterMs }, ...retired] : retired };
}

/** The public keys a verifier may need at `now`: the current one first, then the retired ones not past their time. */
export const publishedKeys = (ring: SigningKeyRing, now: number): PublicSigningJwk[] => [
  ring.current.publicJwk,
  ...ring.retired.filter((key) => key.retireAt > now).map((key) => key.publicJwk),
];
