// Values the store keeps encrypted and authenticated (AES-256-GCM), for what callers hand the service that
// must survive a restart but not be readable at rest (e.g. the credentials of an A2A push webhook). The key is
// derived from the service secret per purpose; the store key is the associated data, so a sealed value copied
// under another key does not open.
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { pooledRandomBytes } from '../core/random-pool.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedValues {
  readonly #key: Buffer;

  /** `purpose` separates the keys of different uses of the same secret. */
  constructor(secret: Uint8Array, purpose: string) {
    if (secret.length < 32) throw new Error('The secret must be at least 32 bytes');
    this.#key = Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), `sealed-values:${purpose}`, 32));
  }

  seal(storeKey: string, value: unknown): string {
    const iv = pooledRandomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(storeKey, 'utf8'));
    const head = cipher.update(JSON.stringify(value), 'utf8');
    const tail = cipher.final(); // empty for GCM, a stream cipher: no copy then
    const body = tail.length === 0 ? head : Buffer.concat([head, tail]);
    return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
  }

  /** The value sealed under `storeKey`; throws when the text was altered, sealed elsewhere or with another key. */
  open<T>(storeKey: string, sealed: string): T {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || !iv || body === undefined || !tag) throw new Error('Not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(storeKey, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    return JSON.parse(text) as T;
  }
}
