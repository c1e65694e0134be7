// The file under DATA_DIR that holds the service's signing key when one instance runs alone: its private JWK as
// JSON (with kid and alg), mode 0600, so `SIGNING_KEY="$(cat DATA_DIR/signing-key.json)"` keeps the same key.
// Written whole or not at all: a new file is hard-linked into place (the first of two writers wins), a rotation
// renames over the old one.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type PrivateSigningJwk, parseSigningJwk, type SigningJwkInput } from '../core/signing-jwk.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.js';

export const SIGNING_KEY_FILE = 'signing-key.json';

export class SigningKeyFile {
  constructor(readonly path: string) {}

  /** The key the file holds, undefined when there is no file; a file that holds no signing key is an error naming it. */
  read(): SigningJwkInput | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return parseSigningJwk(JSON.parse(text));
    } catch (error) {
      const reason = error instanceof SyntaxError ? 'is not JSON' : (error as Error).message;
      throw new Error(`${this.path} ${reason}; move it away to have a new key generated, or set SIGNING_KEY`);
    }
  }

  /** Writes `jwk` unless the file exists (another process came first); `created` says which key the file now holds. */
  create(jwk: PrivateSigningJwk): { jwk: SigningJwkInput; created: boolean } {
    const temporary = this.#temporary(jwk);
    try {
      linkSync(temporary, this.path);
      return { jwk, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return { jwk: this.read() as SigningJwkInput, created: false };
    } finally {
      unlinkSync(temporary);
    }
  }

  /** Puts `jwk` in place of the key the file holds. */
  replace(jwk: PrivateSigningJwk): void {
    renameSync(this.#temporary(jwk), this.path);
  }

  #temporary(jwk: PrivateSigningJwk): string {
    mkdirSync(dirname(this.path), { recursive: true, mode: PRIVATE_DIR_MODE });
    const temporary = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(jwk)}\n`, { mode: PRIVATE_FILE_MODE });
    return temporary;
  }
}
