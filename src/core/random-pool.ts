// Random bytes for the per-request values (task ids, the nonces of sealed values) drawn from a buffer the operating
// system's CSPRNG fills 4 kB at a time, as Node's own randomUUID() does: a call into the crypto library costs about
// as much as filling a few hundred bytes, and each request used to make three. Each slice is handed out once; a
// spent buffer is never refilled in place (a caller may still hold a view of it).
import { randomBytes, randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** `size` fresh random bytes (a view of the pool: the caller may change them, nobody else holds them). */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES / 4) return randomBytes(size);
  if (offset + size > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    offset = 0;
  }
  offset += size;
  return pool.subarray(offset - size, offset);
}
