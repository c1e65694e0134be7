import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MIN_BYTES = 32;
const FILE_NAME = 'session-secret';

/**
 * The secret that keys session tokens. SESSION_SECRET wins; without it the embedded default keeps a generated
 * one under DATA_DIR so tokens survive a restart. The file's text is used exactly like a SESSION_SECRET value
 * (its UTF-8 bytes), so `SESSION_SECRET=$(cat .data/session-secret)` keeps existing sessions valid.
 */
export function loadSessionSecret(options: { value?: string; dataDir: string; log: (msg: string) => void }): Uint8Array {
  if (options.value !== undefined) return checked(options.value, 'SESSION_SECRET');

  const path = join(options.dataDir, FILE_NAME);
  const existing = readIfPresent(path);
  if (existing !== undefined) return checked(existing, path);

  mkdirSync(options.dataDir, { recursive: true });
  // Write a temporary file, then hard-link it into place: the link fails if another process got there first,
  // and nobody ever reads a half-written secret.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(MIN_BYTES).toString('hex')}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, path);
    options.log(`generated a session secret in ${path}; set SESSION_SECRET to manage it yourself`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return checked(readFileSync(path, 'utf8').trim(), path);
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function checked(secret: string, source: string): Uint8Array {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length < MIN_BYTES) {
    throw new Error(
      `${source} is ${bytes.length} bytes long; a session secret needs at least ${MIN_BYTES} bytes (generate one with \`openssl rand -hex 32\`)`,
    );
  }
  return bytes;
}
