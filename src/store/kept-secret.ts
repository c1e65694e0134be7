// Secrets the service keys something with (session tokens, account-abstraction proxy tokens): a setting, else a file
// under DATA_DIR, else one shared by every instance through the store.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.js';
import type { KeyValueStore } from './key-value-store.js';

const MIN_BYTES = 32;

/** A secret the service keys something with: the setting that provides it, else the file under DATA_DIR that keeps it. */
export interface KeptSecret {
  /** The environment variable, e.g. SESSION_SECRET. */
  setting: string;
  /** The file under DATA_DIR that keeps a generated one. */
  fileName: string;
  /** For messages: "session secret". */
  what: string;
}

export const SESSION_SECRET: KeptSecret = { setting: 'SESSION_SECRET', fileName: 'session-secret', what: 'session secret' };

export interface SecretSource {
  /** The setting's value, if set. */
  value?: string;
  dataDir: string;
  log: (msg: string) => void;
}

/**
 * The secret that keys session tokens. SESSION_SECRET wins; without it the embedded default keeps a generated
 * one under DATA_DIR so tokens survive a restart. The file's text is used exactly like a SESSION_SECRET value
 * (its UTF-8 bytes), so `SESSION_SECRET=$(cat .data/session-secret)` keeps existing sessions valid.
 */
export const loadSessionSecret = (options: SecretSource): Uint8Array => loadKeptSecret(SESSION_SECRET, options);

/**
 * Any such secret: the setting's value, else the file under DATA_DIR, generated (mode 0600) the first time, so
 * what it keys survives a restart and needs no configuration.
 */
export function loadKeptSecret(secret: KeptSecret, options: SecretSource): Uint8Array {
  if (options.value !== undefined) return checked(options.value, secret.setting, secret);

  const path = join(options.dataDir, secret.fileName);
  const existing = readIfPresent(path);
  if (existing !== undefined) return checked(existing, path, secret);

  mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // Write a temporary file, then hard-link it into place: the link fails if another process got there first,
  // and nobody ever reads a half-written secret.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(MIN_BYTES).toString('hex')}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    linkSync(temporary, path);
    options.log(`generated a ${secret.what} in ${path}; set ${secret.setting} to manage it yourself`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return checked(readFileSync(path, 'utf8').trim(), path, secret);
}

export interface SharedSecretSource {
  /** The setting's value, if set. */
  value?: string;
  /** The store the instances share. */
  store: KeyValueStore;
  /** A secret an earlier single-instance run kept here is the one offered first, so its tokens stay valid. */
  dataDir: string;
  log: (msg: string) => void;
}

/** Where a generated secret is kept in a shared store. */
export const sharedSecretKey = (secret: KeptSecret): string => `secret:${secret.fileName}`;

/**
 * Any such secret for instances sharing a store (Redis): the setting's value, else the one kept in the store, put
 * there by whichever instance came first (an atomic create-if-absent, so they all end up with the same one): that
 * instance offers the file an earlier run kept under DATA_DIR, or a newly generated secret.
 */
export async function loadSharedSecret(secret: KeptSecret, options: SharedSecretSource): Promise<Uint8Array> {
  if (options.value !== undefined) return checked(options.value, secret.setting, secret);
  const key = sharedSecretKey(secret);
  const earlier = readIfPresent(join(options.dataDir, secret.fileName));
  const offered = earlier ?? randomBytes(MIN_BYTES).toString('hex');
  let created = false;
  // update, not setIfAbsent: the secret is kept without an expiry, and only the first writer's value stays
  const kept = await options.store.update<string>(key, (current) => {
    created = current === undefined;
    return current ?? offered;
  });
  if (created) {
    const origin = earlier === undefined ? 'generated a' : `kept DATA_DIR/${secret.fileName} as the`;
    options.log(`${origin} ${secret.what} in the shared store (${key}); set ${secret.setting} to manage it yourself`);
  }
  return checked(kept as string, `the shared store's ${key}`, secret);
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function checked(value: string, source: string, secret: KeptSecret): Uint8Array {
  const bytes = new TextEncoder().encode(value);
  if (bytes.length < MIN_BYTES) {
    throw new Error(
      `${source} is ${bytes.length} bytes long; a ${secret.what} needs at least ${MIN_BYTES} bytes (generate one with \`openssl rand -hex 32\`)`,
    );
  }
  return bytes;
}
