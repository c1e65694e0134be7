// npm run bench:signing-keys: what the service's signing keys cost whoever signs with them (cards, credentials):
// current() as most calls find it (the ring read within the last second), current() when it reads the ring from the
// store (once a second per instance: sqlite, and Redis when /usr/bin/redis-server is here), jwks(), a first start's
// key generation, and one signature with each algorithm: a compact JWS through jose, and node:crypto's sign() alone
// with the same KeyObject (what a signer callback can use). Each figure is the median of ROUNDS rounds.
// Environment: ITERATIONS (default 20000), ROUNDS (default 7).
import { sign } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign } from 'jose';
import type { SigningAlg } from '../src/core/signing-jwk.js';
import { ServiceSigningKeys, type SigningKeyOptions } from '../src/services/signing-keys.js';
import type { KeyValueStore } from '../src/store/key-value-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { RedisStore } from '../src/store/redis-store.js';
import { SIGNING_KEY_FILE, SigningKeyFile } from '../src/store/signing-key-file.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { REDIS_SERVER, startRedisServer } from '../test/support/redis-server.js';

const ITERATIONS = Number(process.env['ITERATIONS'] ?? 20_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 7);

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Median microseconds per call of `fn`, `iterations` calls in turn per round. */
async function measure(fn: () => Promise<unknown>, iterations = ITERATIONS): Promise<number> {
  for (let i = 0; i < Math.min(iterations, 1_000); i++) await fn();
  const perCall: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) await fn();
    perCall.push(Number(process.hrtime.bigint() - start) / 1_000 / iterations);
  }
  return median(perCall);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-signing-keys-'));
const rows: [string, number][] = [];
const stores: KeyValueStore[] = [];
const redis = existsSync(REDIS_SERVER) ? await startRedisServer() : undefined;
try {
  const sqlite = new SqliteStore(join(dir, 'store.sqlite'));
  stores.push(sqlite);
  const file = { kind: 'file', file: new SigningKeyFile(join(dir, SIGNING_KEY_FILE)) } as const;
  const keysOn = (store: KeyValueStore, options: Partial<SigningKeyOptions> = {}) =>
    new ServiceSigningKeys({ store, source: store === sqlite ? file : { kind: 'store' }, ...options });

  const warm = keysOn(sqlite);
  await warm.current();
  rows.push(['current(), ring read within refreshMs', await measure(() => warm.current())]);
  rows.push(['jwks(), ring read within refreshMs', await measure(() => warm.jwks())]);
  const everyCall = { refreshMs: 0 };
  const sqliteRead = keysOn(sqlite, everyCall);
  rows.push(['current(), reading the ring: sqlite', await measure(() => sqliteRead.current())]);
  if (redis) {
    const shared = await RedisStore.connect({ url: redis.url });
    stores.push(shared);
    const redisRead = keysOn(shared, everyCall);
    rows.push(['current(), reading the ring: Redis (loopback)', await measure(() => redisRead.current(), ITERATIONS / 10)]);
  }
  for (const alg of ['EdDSA', 'ES256'] as SigningAlg[]) {
    rows.push([`first start: generate an ${alg} key into the store`, await measure(() => keysOn(new MemoryStore(), { alg }).current(), 200)]);
    const key = await keysOn(new MemoryStore(), { alg }).current();
    const payload = new TextEncoder().encode(JSON.stringify({ iss: 'https://registry.example', sub: 'x'.repeat(43), exp: 0 }));
    rows.push([
      `compact JWS (jose), ${alg}`,
      await measure(() => new CompactSign(payload).setProtectedHeader({ alg, kid: key.kid }).sign(key.privateKey), 2_000),
    ]);
    const digest = alg === 'ES256' ? 'sha256' : null;
    rows.push([`signature alone (node:crypto sign), ${alg}`, await measure(async () => sign(digest, payload, key.privateKey), 2_000)]);
  }
} finally {
  await Promise.all(stores.map((store) => store.close()));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`signing keys (median of ${ROUNDS} rounds; Node ${process.version})`);
for (const [name, us] of rows) console.log(`  ${name.padEnd(52)} ${us < 10 ? us.toFixed(2) : us.toFixed(0)} us`);
