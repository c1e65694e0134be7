import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newSessionId, type RegistrationRecord } from '../../src/sessions/session-record.js';
import { SessionRepository } from '../../src/sessions/session-repository.js';
import { SessionTokens } from '../../src/sessions/session-token.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const dir = mkdtempSync(join(tmpdir(), 'session-repo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function record(now: number, overrides: Partial<RegistrationRecord> = {}): RegistrationRecord {
  return {
    id: newSessionId(),
    type: 'register',
    stage: 'qr-ready',
    network: 'testnet',
    mode: 'linked',
    agentAddress: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    agentKey: '0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    humanAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    userId: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    userDefinedData: 'K',
    configIndex: 0,
    disclosures: { minimumAge: 0, ofac: false, nationality: false, name: false },
    exportable: true,
    createdAt: now,
    expiresAt: now + SessionTokens.LIFETIME_MS,
    ...overrides,
  };
}

describe('newSessionId', () => {
  it('is 16 random bytes as lowercase hex', () => {
    const ids = new Set(Array.from({ length: 100 }, newSessionId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('SessionRepository', () => {
  it('creates, reads and updates a record under session:<id>', async () => {
    const now = 1_700_000_000_000;
    const store = new MemoryStore(() => now);
    const sessions = new SessionRepository(store, () => now);
    const created = record(now);
    await sessions.create(created);
    expect(await sessions.get(created.id)).toEqual(created);
    expect(await store.get(`session:${created.id}`)).toEqual(created);
    expect(await sessions.get(newSessionId())).toBeUndefined();

    const updated = await sessions.update(created.id, 'register', (r) => ({
      ...r,
      stage: 'proof-received',
      callback: { receivedAt: now + 5, outcome: 'success', txHash: `0x${'11'.repeat(32)}` },
    }));
    expect(updated.stage).toBe('proof-received');
    expect(await sessions.get(created.id)).toEqual(updated);
  });

  it('keeps a record a day past its token expiry, and updates do not extend that', async () => {
    let now = 1_700_000_000_000;
    const store = new MemoryStore(() => now);
    const sessions = new SessionRepository(store, () => now);
    const created = record(now);
    await sessions.create(created);
    now = created.expiresAt + DAY_MS - 1;
    await sessions.update(created.id, 'register', (r) => ({ ...r, stage: 'completed', agentId: '1' }));
    expect((await sessions.get(created.id))?.stage).toBe('completed');
    now += 1;
    expect(await sessions.get(created.id)).toBeUndefined();
  });

  it('refuses to create a record twice and to update a missing one or change its id', async () => {
    const now = Date.now();
    const sessions = new SessionRepository(new MemoryStore());
    const created = record(now);
    await sessions.create(created);
    await expect(sessions.create({ ...created, stage: 'failed' })).rejects.toThrow(/exists already/);
    expect((await sessions.get(created.id))?.stage).toBe('qr-ready');
    await expect(sessions.update(newSessionId(), 'register', (r) => r)).rejects.toThrow(/has no record/);
    await expect(sessions.update(created.id, 'register', (r) => ({ ...r, id: newSessionId() }))).rejects.toThrow(/must not change the id/);
    expect(await sessions.get(created.id)).toEqual(created);
  });

  it('applies concurrent updates one after the other (a callback and a status poll racing)', async () => {
    const sessions = new SessionRepository(new MemoryStore());
    const created = record(Date.now(), { configIndex: 0 });
    await sessions.create(created);
    await Promise.all(Array.from({ length: 25 }, () => sessions.update(created.id, 'register', (r) => ({ ...r, configIndex: r.configIndex + 1 }))));
    expect((await sessions.get(created.id))?.configIndex).toBe(25);
  });

  it('reads a record as the shape of its kind, and refuses one of another kind or a malformed one', async () => {
    const store = new MemoryStore();
    const sessions = new SessionRepository(store);
    const created = record(Date.now());
    await sessions.create(created);
    expect((await sessions.get(created.id, 'register'))?.mode).toBe('linked');
    await expect(sessions.get(created.id, 'refresh')).rejects.toThrow(/is a register session, not refresh/);
    await store.set(`session:${created.id}`, { ...created, stage: 'somewhere' });
    await expect(sessions.get(created.id)).rejects.toThrow(/malformed: stage/);
  });

  it('lifts the fields of records kept in a details bag (written before each kind had its own shape)', async () => {
    const store = new MemoryStore();
    const sessions = new SessionRepository(store);
    const { mode: _m, agentAddress: _a, humanAddress: _h, exportable: _e, ...common } = record(Date.now());
    const legacy = { ...common, type: 'refresh', agentId: '7', exportable: false, details: { previousExpiresAt: '1700000000' } };
    await store.set(`session:${legacy.id}`, legacy);
    const read = await sessions.get(legacy.id, 'refresh');
    expect(read?.previousExpiresAt).toBe('1700000000');
    expect(read).not.toHaveProperty('details');
    expect(read).not.toHaveProperty('exportable');
  });

  it('a record in sqlite survives a restart of the service', async () => {
    const path = join(dir, 'sessions.sqlite');
    const created = record(Date.now());
    const before = new SqliteStore(path);
    await new SessionRepository(before).create(created);
    await before.close();

    const after = new SqliteStore(path);
    const sessions = new SessionRepository(after);
    expect(await sessions.get(created.id)).toEqual(created);
    await sessions.update(created.id, 'register', (r) => ({ ...r, stage: 'completed', agentId: '3', completedAt: Date.now() }));
    expect((await sessions.get(created.id, 'register'))?.agentId).toBe('3');
    await after.close();
  });
});
