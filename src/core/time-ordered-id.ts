// UUID version 7 (RFC 9562 §5.7): the Unix time in milliseconds in the first 48 bits, then 74 random bits. Ids made
// one after another sort in the order they were made, so a store keyed by them appends new rows at the end of its
// index instead of at random places (sqlite writes a fraction of the pages); 74 random bits keep them unguessable.
import { pooledRandomBytes } from './random-pool.js';

/** A version 7 UUID for now (or `ms`, milliseconds since the epoch), in its canonical lowercase form. */
export function timeOrderedId(ms: number = Date.now()): string {
  const bytes = pooledRandomBytes(16);
  // 48-bit big-endian timestamp: the high 16 bits, then the low 32 (bit operations work on 32 bits)
  const high = Math.floor(ms / 2 ** 32);
  const low = ms >>> 0;
  bytes[0] = (high >>> 8) & 0xff;
  bytes[1] = high & 0xff;
  bytes[2] = (low >>> 24) & 0xff;
  bytes[3] = (low >>> 16) & 0xff;
  bytes[4] = (low >>> 8) & 0xff;
  bytes[5] = low & 0xff;
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f); // version 7
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f); // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
