// Session tokens: JWE (dir + A256GCM) that name a server-side session record and carry the secrets the
// server must not keep at rest. Unlike the reference service's tokens, the session state lives in the
// record, so a token only proves "you hold session X of type T until expiresAt".
import { hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import { SESSION_TYPES, type SessionType } from '../core/session-types.js';
import type { Clock } from '../store/key-value-store.js';

export type { SessionType } from '../core/session-types.js';

/**
 * What a token may do. 'session': everything the session offers (status, QR, export), and only it carries the
 * secrets; 'watch': the session's status and QR code, nothing else (the scan link hands it to whoever opens the
 * QR); 'callback': the identity app's report only (inside the deep link). Watch and callback tokens never carry
 * secrets.
 */
export type TokenScope = 'session' | 'watch' | 'callback';
export const TOKEN_SCOPES = ['session', 'watch', 'callback'] as const satisfies readonly TokenScope[];
/** The scopes that may read a session: its status and its QR code. */
export const READING_SCOPES = ['session', 'watch'] as const satisfies readonly TokenScope[];
export interface SessionSecrets {
  agentPrivateKey?: `0x${string}` /* secp256k1 */;
  ed25519PrivateKey?: `0x${string}` /* 32-byte seed */;
}
export interface SessionClaims {
  sessionId: string;
  type: SessionType;
  scope: TokenScope;
  expiresAt: number /* ms */;
  secrets?: SessionSecrets;
}

const MIN_SECRET_BYTES = 32;

const privateKey = z.custom<`0x${string}`>((value) => typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value));

/** The payload's shape: checked after decryption too, so even a token made with our key but an old shape cannot crash a route. */
const claimsSchema = z.object({
  sessionId: z.string().min(1).max(128),
  type: z.enum(SESSION_TYPES),
  scope: z.enum(TOKEN_SCOPES),
  expiresAt: z.number().int().nonnegative(),
  secrets: z.object({ agentPrivateKey: privateKey.optional(), ed25519PrivateKey: privateKey.optional() }).optional(),
});

const invalidToken = (): ServiceError => new ServiceError(401, 'Invalid session token');
const onlyWatches = (): ServiceError =>
  new ServiceError(401, "This token can only watch the session (its status and QR code); this needs the session's own token");

export class SessionTokens {
  static readonly LIFETIME_MS = 30 * 60 * 1000;

  readonly #key: Uint8Array;
  readonly #clock: Clock;

  constructor(secret: Uint8Array /* >= 32 bytes, from session-secret.ts */, clock: Clock = Date.now) {
    if (secret.length < MIN_SECRET_BYTES) throw new Error(`The session secret must be at least ${MIN_SECRET_BYTES} bytes`);
    // A derived key, not the secret itself, so the same secret can key other things without key reuse.
    this.#key = new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), 'session-token', 32));
    this.#clock = clock;
  }

  /** Encrypts the claims with a fresh IV; issuing the same claims again is how a token is refreshed. */
  async issue(claims: SessionClaims): Promise<string> {
    // Callback and watch tokens travel in deep links, QR codes and scan links: never put secrets in them,
    // whatever the caller passes.
    const payload = claimsSchema.parse(claims.scope === 'session' ? claims : { ...claims, secrets: undefined });
    return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .encrypt(this.#key);
  }

  /**
   * Throws ServiceError: 401 'Invalid session token' for altered/foreign/undecryptable/malformed tokens (never leak details); 410 'Session expired' when expiresAt <= now; 400 'Token is not for a <type> session' when the type differs; 401 when the scope is not one `expected` allows (a callback token used elsewhere or vice versa; a watch token says it only watches).
   */
  async open(
    token: string,
    expected: { type: SessionType | readonly SessionType[]; scope?: TokenScope | readonly TokenScope[] /* default 'session' */ },
  ): Promise<SessionClaims> {
    const claims = await this.#decrypt(token);
    const scopes: readonly TokenScope[] = typeof expected.scope === 'string' ? [expected.scope] : (expected.scope ?? ['session']);
    // Scope first: a token that is not a credential for this endpoint tells its holder nothing more (a watch
    // token's holder may know what it holds: it came in a scan link, for watching).
    if (!scopes.includes(claims.scope)) throw claims.scope === 'watch' ? onlyWatches() : invalidToken();
    if (claims.expiresAt <= this.#clock()) throw new ServiceError(410, 'Session expired');
    const types: readonly SessionType[] = typeof expected.type === 'string' ? [expected.type] : expected.type;
    if (!types.includes(claims.type)) throw new ServiceError(400, `Token is not for a ${types.join(' or ')} session`);
    return claims;
  }

  async #decrypt(token: string): Promise<SessionClaims> {
    let plaintext: Uint8Array;
    try {
      ({ plaintext } = await compactDecrypt(token, this.#key, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
      }));
    } catch {
      throw invalidToken();
    }
    let payload: unknown;
    try {
      payload = JSON.parse(new TextDecoder().decode(plaintext));
    } catch {
      throw invalidToken();
    }
    const parsed = claimsSchema.safeParse(payload);
    if (!parsed.success) throw invalidToken();
    return parsed.data;
  }
}
