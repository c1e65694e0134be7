// Where a signed request is claimed once, so that a captured request cannot be sent again: the verifier claims the
// key of each good signature for as long as that signature could still be accepted.

/** Where a signed message is claimed once; default: this process's memory (use a shared store across instances). */
export interface ReplayGuard {
  /**
   * True the first time `key` is claimed within `ttlMs`. The key names the signer and what it signed: for the
   * x-svc-agent scheme `<agent key>:<message hash>`, for RFC 9421 `<agent key>:nonce:<nonce>`, for a presented
   * credential `<agent key>:kb:<KB-JWT jti>` (or `:kb:<nonce>:<iat>` without a jti). So one guard can serve every route
   * of a service, and a message, nonce or presentation spent at one route is spent at all of them.
   */
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
}

/** A replay guard in this process's memory: entries leave when their signature's window has passed. */
export function memoryReplayGuard(maxEntries = 100_000): ReplayGuard {
  const seen = new Map<string, number>();
  return {
    claim(key, ttlMs) {
      const now = Date.now();
      for (const [k, until] of seen) {
        if (until > now && seen.size < maxEntries) break;
        seen.delete(k); // oldest first (insertion order): expired ones, or the oldest when full
      }
      if ((seen.get(key) ?? 0) > now) return false;
      seen.set(key, now + ttlMs);
      return true;
    },
  };
}
