// The local paymaster's per-sender approvals on the store port: counted per chain and sender, kept across a
// restart of the store, and forgotten once the window has passed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storeSponsorshipLedger } from '../../src/devnet/aa/sponsorship-ledger.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const SENDER = '0x00000000000000000000000000000000000000aA';
const OTHER = '0x00000000000000000000000000000000000000bB';

describe('storeSponsorshipLedger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sponsorship-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts approvals per chain and sender, within the window, and keeps them across a restart', async () => {
    let now = 1_000_000;
    const path = join(dir, 'store.sqlite');
    const first = new SqliteStore(path, () => now);
    const ledger = storeSponsorshipLedger(first, 11142220, 60_000);
    await ledger.record(SENDER, now);
    await ledger.record(SENDER, now + 1_000);
    await ledger.record(OTHER, now);
    expect(await ledger.approvals(SENDER, now - 60_000)).toEqual([now, now + 1_000]);
    expect(await storeSponsorshipLedger(first, 42220, 60_000).approvals(SENDER, 0), 'another chain').toEqual([]);
    await first.close();

    const second = new SqliteStore(path, () => now);
    const reopened = storeSponsorshipLedger(second, 11142220, 60_000);
    expect(await reopened.approvals(SENDER.toLowerCase() as `0x${string}`, now - 60_000), 'any address case').toHaveLength(2);
    now += 30_000;
    await reopened.record(SENDER, now);
    expect(await reopened.approvals(SENDER, now - 60_000)).toHaveLength(3);
    now += 45_000; // the first two are older than the window now
    expect(await reopened.approvals(SENDER, now - 60_000)).toEqual([now - 45_000]);
    now += 61_000; // the entry expired with its newest approval's window
    expect(await reopened.approvals(SENDER, 0)).toEqual([]);
    await second.close();
  });
});
