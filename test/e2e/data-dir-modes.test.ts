// DATA_DIR after a real start of the embedded default (two anvil chains, contracts, the demo agent, the store):
// the folder and every folder in it are the owner's alone (0700), every file 0600 — the secrets, the dev and demo
// keys, the sqlite database with its -wal and -shm, deployment.json, rpc-url, anvil.pid and the chains' state
// files, which anvil writes itself. A DATA_DIR left looser is tightened, with a warning.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';

const root = mkdtempSync(join(tmpdir(), 'data-dir-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every folder and file under `dir`, with its permission bits, by path relative to `dir`. */
function modes(dir: string): Record<string, string> {
  const found: Record<string, string> = { '.': (statSync(dir).mode & 0o777).toString(8) };
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      found[relative(dir, path)] = (statSync(path).mode & 0o777).toString(8);
      if (entry.isDirectory()) visit(path);
    }
  };
  visit(dir);
  return found;
}

function expectPrivate(dataDir: string): void {
  for (const [path, mode] of Object.entries(modes(dataDir))) {
    const isDir = statSync(join(dataDir, path)).isDirectory();
    expect(`${path} ${mode}`).toBe(`${path} ${isDir ? '700' : '600'}`);
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); ) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('DATA_DIR modes', () => {
  it('a first start over a looser DATA_DIR tightens it with a warning; every file the service and its chains write is 0600', async () => {
    const dataDir = join(root, 'data');
    // what an older version left: a world-readable folder and secret
    mkdirSync(join(dataDir, 'chains', 'testnet'), { recursive: true });
    writeFileSync(join(dataDir, 'session-secret'), `${'ab'.repeat(32)}\n`);
    for (const dir of [dataDir, join(dataDir, 'chains'), join(dataDir, 'chains', 'testnet')]) chmodSync(dir, 0o755);
    chmodSync(join(dataDir, 'session-secret'), 0o644);

    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const service = await startService({ ...loadConfig({ DATA_DIR: dataDir, PORT: '0' }) }, logger);
    try {
      const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((l) => l.level === 40);
      const tightened = warnings.find((w) => /readable by others/.test(w.msg));
      expect(tightened?.msg).toContain('. (0755 -> 0700)');
      expect(tightened?.msg).toContain('session-secret (0644 -> 0600)');

      // anvil writes its state file at its first periodic dump (every 5 s)
      const stateFiles = ['mainnet', 'testnet'].map((network) => join(dataDir, 'chains', network, 'state.json'));
      await until(() => stateFiles.every((file) => existsSync(file)), 30_000);
      const running = Object.keys(modes(dataDir));
      for (const expected of [
        'session-secret',
        'aa-proxy-token-secret',
        'signing-key.json',
        'dev-accounts.json',
        'demo-agent-testnet.json',
        'store.sqlite',
        'store.sqlite-wal',
        'store.sqlite-shm',
        'chains/testnet/state.json',
        'chains/testnet/deployment.json',
        'chains/testnet/rpc-url',
        'chains/testnet/anvil.pid',
        'chains/mainnet/state.json',
      ]) {
        expect(running).toContain(expected);
      }
      expectPrivate(dataDir);
    } finally {
      await service.stop();
    }
    // the state written at the stop, and whatever the store left behind, keep their modes
    expectPrivate(dataDir);
  }, 120_000);
});
