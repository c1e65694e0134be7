import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { secureDataDir } from '../../src/store/data-dir.js';

const root = mkdtempSync(join(tmpdir(), 'data-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('secureDataDir', () => {
  it('creates DATA_DIR (and its parents) for the owner alone, without a warning', () => {
    const dataDir = join(root, 'new', 'nested');
    const warnings: string[] = [];
    secureDataDir(dataDir, (m) => warnings.push(m));
    expect(modeOf(dataDir)).toBe(0o700);
    expect(warnings).toEqual([]);
  });

  it('tightens a looser DATA_DIR, its files and the chains folder, and says so once; other folders and links are left alone', () => {
    const dataDir = join(root, 'loose');
    mkdirSync(join(dataDir, 'chains', 'testnet'), { recursive: true });
    mkdirSync(join(dataDir, 'backups'));
    writeFileSync(join(dataDir, 'session-secret'), 'x');
    writeFileSync(join(dataDir, 'chains', 'testnet', 'state.json'), '{}');
    writeFileSync(join(dataDir, 'backups', 'old.sqlite'), '');
    writeFileSync(join(root, 'elsewhere'), '');
    symlinkSync(join(root, 'elsewhere'), join(dataDir, 'link'));
    for (const dir of [dataDir, join(dataDir, 'chains'), join(dataDir, 'chains', 'testnet'), join(dataDir, 'backups')]) chmodSync(dir, 0o755);
    for (const file of ['session-secret', 'chains/testnet/state.json', 'backups/old.sqlite']) chmodSync(join(dataDir, file), 0o644);
    chmodSync(join(root, 'elsewhere'), 0o644);

    const warnings: string[] = [];
    secureDataDir(dataDir, (m) => warnings.push(m));

    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(join(dataDir, 'chains'))).toBe(0o700);
    expect(modeOf(join(dataDir, 'chains', 'testnet'))).toBe(0o700);
    expect(modeOf(join(dataDir, 'session-secret'))).toBe(0o600);
    expect(modeOf(join(dataDir, 'chains', 'testnet', 'state.json'))).toBe(0o600);
    // someone else's folder inside DATA_DIR, and what a link points to, are not the service's to change
    expect(modeOf(join(dataDir, 'backups'))).toBe(0o755);
    expect(modeOf(join(dataDir, 'backups', 'old.sqlite'))).toBe(0o644);
    expect(modeOf(join(root, 'elsewhere'))).toBe(0o644);

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/readable by others/);
    for (const named of ['. (0755 -> 0700)', 'session-secret (0644 -> 0600)', 'chains/testnet/state.json (0644 -> 0600)']) {
      expect(warnings[0]).toContain(named);
    }

    // a second start finds nothing to tighten
    const again: string[] = [];
    secureDataDir(dataDir, (m) => again.push(m));
    expect(again).toEqual([]);
  });
});
