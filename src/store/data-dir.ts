// DATA_DIR keeps what must not leak: the session secret, the proxy token secret, the local chains' dev keys, the
// demo agent's key, the store (sessions, sealed A2A tasks and push configs) and the chains' state. It is the
// owner's alone: the folder 0700, every file in it 0600. Writers create their files with these modes; this
// tightens what an older version (or a copy) left looser.
import { chmodSync, closeSync, type Dirent, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Folders under DATA_DIR that the service alone fills, tightened with everything in them. */
const OWN_SUBDIRS = new Set(['chains']);

const looser = (mode: number): boolean => (mode & 0o077) !== 0;

/**
 * Creates DATA_DIR 0700, or tightens it, its files and its own subfolders to the owner alone; `warn` hears of
 * every tightening (something was readable by others). Other folders someone put in DATA_DIR are left alone.
 */
export function secureDataDir(dataDir: string, warn: (message: string) => void): void {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const tightened: string[] = [];
  const tighten = (path: string, mode: number): void => {
    if (!looser(mode)) return;
    const next = mode & 0o700;
    chmodSync(path, next);
    tightened.push(`${relative(dataDir, path) || '.'} (${octal(mode)} -> ${octal(next)})`);
  };
  const visit = (dir: string, all: boolean): void => {
    tighten(dir, statSync(dir).mode & 0o777);
    for (const entry of readdirSync(dir, { withFileTypes: true }) as Dirent[]) {
      const path = join(dir, entry.name);
      // symbolic links are followed by chmod: leave them (and what they point to) alone
      if (entry.isFile()) tighten(path, statSync(path).mode & 0o777);
      else if (entry.isDirectory() && (all || OWN_SUBDIRS.has(entry.name))) visit(path, true);
    }
  };
  visit(dataDir, false);
  if (tightened.length > 0) {
    warn(`DATA_DIR ${dataDir} was readable by others: tightened ${tightened.join(', ')} to the owner alone`);
  }
}

/** Creates `path` empty with mode 0600 unless it exists: for files another library creates with its own mode. */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
}

const octal = (mode: number): string => `0${mode.toString(8)}`;
