// npm run rotate-signing-key [-- --retire-after-ms <ms>]: a new signing key signs from now on, with the environment
// the service runs with (DATA_DIR, REDIS_URL, SIGNING_KEY_ALG). The key it replaces stays in the JWKS for
// SIGNING_KEY_RETIRE_AFTER_MS, or --retire-after-ms (0: withdrawn at once, for a key that leaked). Running instances
// sign with the new key within a second. With SIGNING_KEY set, rotate by setting it to a new key instead.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { signingKeySource } from '../src/main.js';
import { ServiceSigningKeys } from '../src/services/signing-keys.js';
import type { KeyValueStore } from '../src/store/key-value-store.js';
import { RedisStore } from '../src/store/redis-store.js';
import { SqliteStore } from '../src/store/sqlite-store.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'retire-after-ms': { type: 'string' } } });
  const retireText = values['retire-after-ms'];
  const retireAfterMs = retireText === undefined ? undefined : Number(retireText);
  if (retireAfterMs !== undefined && !(Number.isSafeInteger(retireAfterMs) && retireAfterMs >= 0)) {
    throw new Error(`--retire-after-ms: must be a whole number of milliseconds, 0 or more (got ${retireText})`);
  }
  const config = loadConfig();
  if (config.signingKey.given) {
    throw new Error('SIGNING_KEY sets the signing key: rotate by setting it to a new key and restarting the instances');
  }
  const store: KeyValueStore = config.redis ? await RedisStore.connect(config.redis) : new SqliteStore(join(config.dataDir, 'store.sqlite'));
  try {
    const keys = new ServiceSigningKeys({
      store,
      source: signingKeySource(config),
      alg: config.signingKey.alg,
      retireAfterMs: config.signingKey.retireAfterMs,
      log: (message) => console.log(message),
    });
    // the key in use now, so that a first run (no key yet) still has one to replace and log
    await keys.current();
    await keys.rotate(retireAfterMs === undefined ? {} : { retireAfterMs });
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
