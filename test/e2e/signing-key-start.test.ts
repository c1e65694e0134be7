// A signing key the service cannot use stops `node dist/main.js` before anything starts, with a message that names
// where the key came from and what is wrong with it, and never the key itself.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceCommand } from '../support/service-process.js';

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'signing-key-start-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Starts the service with `env`; resolves with how it ended (it must end: a bad key stops it). */
async function start(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const [command, args] = serviceCommand;
  try {
    await run(command, args, { env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env }, timeout: 60_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string };
    return { code, stderr };
  }
}

describe('a signing key the service cannot use stops the start', () => {
  it('a malformed SIGNING_KEY: exit 1, naming the setting and what is wrong, not the key', { timeout: 90_000 }, async () => {
    const jwk = await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).privateKey);
    const publicOnly = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
    const bad = await start({ DATA_DIR: join(root, 'env'), SIGNING_KEY: JSON.stringify(publicOnly) });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Invalid configuration:\n  SIGNING_KEY: holds no private part (d): it must be the private key');
    const notJson = await start({ DATA_DIR: join(root, 'env'), SIGNING_KEY: `${JSON.stringify(jwk)}}` });
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('SIGNING_KEY: must be a private JWK as JSON');
    expect(notJson.stderr).not.toContain(jwk.d);
  });

  it('a key file under DATA_DIR that holds no signing key: exit 1, naming the file', { timeout: 90_000 }, async () => {
    const dataDir = join(root, 'file');
    const { d: _d, ...publicOnly } = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(join(dataDir, 'signing-key.json'), JSON.stringify(publicOnly), { mode: 0o600 });
    const bad = await start({ DATA_DIR: dataDir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${join(dataDir, 'signing-key.json')} holds no private part (d)`);
  });
});
