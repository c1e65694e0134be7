import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSessionSecret } from '../../src/store/kept-secret.js';

const root = mkdtempSync(join(tmpdir(), 'session-secret-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('loadSessionSecret', () => {
  it('takes SESSION_SECRET as its UTF-8 bytes and writes no file', () => {
    const dataDir = join(root, 'from-env');
    const logs: string[] = [];
    const value = 'x'.repeat(32);
    expect(loadSessionSecret({ value, dataDir, log: (m) => logs.push(m) })).toEqual(new TextEncoder().encode(value));
    expect(logs).toEqual([]);
    expect(() => statSync(join(dataDir, 'session-secret'))).toThrow();
  });

  it('refuses a SESSION_SECRET shorter than 32 bytes with a message that says what to do', () => {
    const options = { dataDir: join(root, 'short'), log: () => {} };
    expect(() => loadSessionSecret({ ...options, value: 'x'.repeat(31) })).toThrow(
      /SESSION_SECRET is 31 bytes long; a session secret needs at least 32 bytes .*openssl rand -hex 32/,
    );
    expect(() => loadSessionSecret({ ...options, value: '' })).toThrow(/at least 32 bytes/);
    // 11 three-byte characters are 33 bytes: the rule counts bytes, not characters.
    expect(loadSessionSecret({ ...options, value: '€'.repeat(11) })).toHaveLength(33);
  });

  it('without SESSION_SECRET, generates one secret once (mode 0600), logs it, and reuses it', () => {
    const dataDir = join(root, 'generated', 'nested');
    const logs: string[] = [];
    const first = loadSessionSecret({ dataDir, log: (m) => logs.push(m) });
    const path = join(dataDir, 'session-secret');
    expect(logs).toEqual([`generated a session secret in ${path}; set SESSION_SECRET to manage it yourself`]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(first.length).toBeGreaterThanOrEqual(32);

    const second = loadSessionSecret({ dataDir, log: (m) => logs.push(m) });
    expect(second).toEqual(first);
    expect(logs).toHaveLength(1);
    // The file's text works as SESSION_SECRET, so moving to the environment keeps sessions valid.
    expect(loadSessionSecret({ value: readFileSync(path, 'utf8').trim(), dataDir, log: () => {} })).toEqual(first);
  });

  it('refuses a kept secret file that is too short, naming the file', () => {
    const dataDir = join(root, 'bad-file');
    loadSessionSecret({ dataDir, log: () => {} });
    writeFileSync(join(dataDir, 'session-secret'), 'short\n');
    expect(() => loadSessionSecret({ dataDir, log: () => {} })).toThrow(`${join(dataDir, 'session-secret')} is 5 bytes long`);
  });
});
