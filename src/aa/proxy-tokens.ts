// The account-abstraction proxy's short-lived tokens: a page gets one from POST /api/aa/token and sends it as
// x-aa-proxy-token with each bundler or paymaster call. Stateless, in the deployed service's format:
// base64url(JSON {exp, chainId, ip, uaHash}) "." base64url(HMAC-SHA256 over that first part). A token is bound to
// its chain, the client address and the SHA-256 of the User-Agent, so one copied to another client is refused.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import type { KeptSecret } from '../store/kept-secret.js';
import type { Clock } from '../store/key-value-store.js';

/** The header a proxied call carries its token in. */
export const PROXY_TOKEN_HEADER = 'x-aa-proxy-token';

/** The HMAC key: AA_PROXY_TOKEN_SECRET, else generated once into DATA_DIR (loadKeptSecret). */
export const PROXY_TOKEN_SECRET: KeptSecret = {
  setting: 'AA_PROXY_TOKEN_SECRET',
  fileName: 'aa-proxy-token-secret',
  what: 'token secret for the account-abstraction proxy',
};

export const DEFAULT_TOKEN_TTL_MS = 90_000;
/** The shortest lifetime: a page needs time to build and send a user operation. */
export const MIN_TOKEN_TTL_MS = 10_000;

/** Who a token is for. */
export interface TokenBinding {
  chainId: number;
  /** The client address as the rate limits count it (clientKeyOf). */
  client: string;
  userAgent: string | undefined;
}

export interface ProxyToken {
  token: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

/** Longer is not a token we issued; refused before any decoding. */
const MAX_TOKEN_LENGTH = 1024;
const TOKEN_SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

const payloadSchema = z.object({ exp: z.number(), chainId: z.string(), ip: z.string(), uaHash: z.string() });

const unauthorized = (reason: string): ServiceError => new ServiceError(401, reason);

/** Lowercase hex SHA-256 of the User-Agent, or of "unknown" when there is none (the deployed service's rule). */
export const userAgentHash = (userAgent: string | undefined): string =>
  createHash('sha256')
    .update(userAgent ?? 'unknown')
    .digest('hex');

export class ProxyTokens {
  readonly #secret: Uint8Array;
  readonly #ttlMs: number;
  readonly #clock: Clock;

  constructor(secret: Uint8Array, ttlMs: number = DEFAULT_TOKEN_TTL_MS, clock: Clock = Date.now) {
    this.#secret = secret;
    this.#ttlMs = Math.max(MIN_TOKEN_TTL_MS, ttlMs);
    this.#clock = clock;
  }

  issue(binding: TokenBinding): ProxyToken {
    const expiresAt = this.#clock() + this.#ttlMs;
    // key order as the deployed service writes it
    const payload = { exp: expiresAt, chainId: String(binding.chainId), ip: binding.client, uaHash: userAgentHash(binding.userAgent) };
    const encoded = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return { token: `${encoded}.${this.#sign(encoded)}`, expiresAt };
  }

  /** Refuses (401, saying why) a token that is missing, malformed, forged, expired or bound to another chain or client. */
  verify(token: string | undefined, binding: TokenBinding): void {
    if (token === undefined || token === '') throw unauthorized('Missing AA proxy token');
    const parts = token.length <= MAX_TOKEN_LENGTH ? TOKEN_SHAPE.exec(token) : null;
    const payload = parts ? decodePayload(parts[1] as string) : undefined;
    if (!parts || !payload) throw unauthorized('Malformed AA token');
    const given = Buffer.from(parts[2] as string, 'utf8');
    const expected = Buffer.from(this.#sign(parts[1] as string), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw unauthorized('Invalid AA token signature');
    if (payload.exp <= this.#clock()) throw unauthorized('AA token expired');
    if (payload.chainId !== String(binding.chainId)) throw unauthorized('AA token chain mismatch');
    if (payload.ip !== binding.client) throw unauthorized('AA token IP mismatch');
    if (payload.uaHash !== userAgentHash(binding.userAgent)) throw unauthorized('AA token client mismatch');
  }

  #sign(encodedPayload: string): string {
    return createHmac('sha256', this.#secret).update(encodedPayload, 'utf8').digest('base64url');
  }
}

function decodePayload(encoded: string): z.infer<typeof payloadSchema> | undefined {
  try {
    const parsed = payloadSchema.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
