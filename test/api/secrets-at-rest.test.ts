// No usable secret at rest, and no more capability in a link than it needs: an A2A register task keeps its
// session token only sealed (the raw sqlite file holds no JWE), yet the client reads the very token it was given,
// also after a restart; the scan link carries a watch token (status and QR, never export or callback); and a
// generated key is exported once, whichever token, instance or restart asks again.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Express } from 'express';
import request from 'supertest';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTokens } from '../../src/sessions/session-token.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { legacyDataOf, openRegisterTask, rpc, waitForTaskState } from '../support/a2a.js';
import { expectSubmitted } from '../support/agents.js';
import { type TestApp, testApp } from '../support/app.js';
import { approveDeepLink, callbackTarget, deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

/** A JWE in compact form: a base64url JSON header ("eyJ"), then four more base64url parts (the key part may be empty). */
const JWE = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g;

type Body = Record<string, unknown>;

describe('secrets at rest and the capabilities of links', () => {
  let net: TestNetworks;
  const dir = mkdtempSync(join(tmpdir(), 'secrets-at-rest-'));
  const apps: TestApp[] = [];
  const stores: SqliteStore[] = [];

  beforeAll(async () => {
    net = await deployTestNetworks();
  });

  afterAll(async () => {
    for (const t of apps) t.services.watcher.stopAll();
    await Promise.all(apps.map((t) => t.a2a.idle()));
    await Promise.all(stores.map((store) => store.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const sqlite = (path: string): SqliteStore => {
    const store = new SqliteStore(path);
    stores.push(store);
    return store;
  };
  const newApp = (options: Parameters<typeof testApp>[1] = {}): TestApp => {
    const t = testApp(net.chains, { sessionWatch: { pollIntervalMs: 100 }, ...options });
    apps.push(t);
    return t;
  };

  const register = async (app: Express, body: Body = { mode: 'wallet-free', network: 'testnet' }): Promise<Body> => {
    const res = await request(app).post('/api/agent/register').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Body;
  };
  const status = (app: Express, token: string) => request(app).get('/api/agent/register/status').query({ token });
  const exportKey = (app: Express, token: string) => request(app).get('/api/agent/register/export').query({ token });

  /** The human approves; resolves once the session's status says completed. */
  async function approve(app: Express, deepLink: string, token: string): Promise<void> {
    expectSubmitted((await approveDeepLink(app, net, deepLink)).proof);
    for (let i = 0; i < 100; i++) {
      if ((await status(app, token)).body.stage === 'completed') return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the session did not complete');
  }

  /** Everything the sqlite store has on disk: the database file and its write-ahead log. */
  const rawFiles = (path: string): string =>
    [path, `${path}-wal`]
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1'))
      .join('\n');

  it('an A2A register task keeps no usable session token at rest; its artifact carries the one handed out, also after a restart', async () => {
    const path = join(dir, 'a2a', 'store.sqlite');
    const sessionSecret = randomBytes(32);
    const first = newApp({ store: sqlite(path), sessionSecret });
    const { taskId, artifact } = await openRegisterTask(first.app);
    const token = artifact['sessionToken'] as string;
    expect(token).toMatch(JWE);
    const claims = await new SessionTokens(sessionSecret).open(token, { type: 'register' });
    const key = claims.secrets?.agentPrivateKey as Hex;
    expect(key).toMatch(/^0x[0-9a-f]{64}$/i);

    await approve(first.app, artifact['deepLink'] as string, token);
    expect(await waitForTaskState(first.app, taskId, 'completed')).toBe('completed');
    const task = (await rpc(first.app, 'tasks/get', { id: taskId })).body.result;
    expect(legacyDataOf(task.artifacts[0])['sessionToken']).toBe(token);
    // the completed update carries a refreshed token too: the client can use either
    const updated = legacyDataOf(task.status.message)['sessionToken'] as string;
    expect((await status(first.app, updated)).body.stage).toBe('completed');
    first.services.watcher.stopAll();
    await first.a2a.idle();

    // at rest: the raw file holds no token (whole or in any task field) and no key; the task is one sealed value
    const raw = rawFiles(path);
    expect(raw).toContain(`a2a:task:${taskId}`);
    expect(raw.match(JWE)).toBeNull();
    expect(raw.toLowerCase()).not.toContain(key.slice(2).toLowerCase());
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare('SELECT key, value FROM kv').all() as { key: string; value: string }[];
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.value.match(JWE), row.key).toBeNull();
      const stored = rows.find((row) => row.key === `a2a:task:${taskId}`);
      const kept = JSON.parse(stored?.value ?? 'null');
      expect(Object.keys(kept).sort()).toEqual(['owner', 'sealed']);
      expect(kept.sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    } finally {
      db.close();
    }

    // a restart (same file, same secret): tasks/get answers the same token, and it still exports the key
    const restarted = newApp({ store: sqlite(path), sessionSecret });
    const again = (await rpc(restarted.app, 'tasks/get', { id: taskId })).body.result;
    expect(again.status.state).toBe('completed');
    expect(legacyDataOf(again.artifacts[0])['sessionToken']).toBe(token);
    const exported = await exportKey(restarted.app, token);
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    expect(exported.body.privateKey).toBe(key);
    // another secret cannot open the sealed task
    const stranger = newApp({ store: sqlite(path), sessionSecret: randomBytes(32) });
    expect((await rpc(stranger.app, 'tasks/get', { id: taskId })).body.result).toBeUndefined();
  });

  describe('the scan link carries a watch token', () => {
    it('registration: the QR and status, with a refreshed watch token; never export or the callback', async () => {
      const t = newApp();
      const session = await register(t.app);
      const token = session['sessionToken'] as string;
      const scan = new URL(session['scanUrl'] as string);
      const watch = scan.searchParams.get('token') as string;
      expect(watch).toMatch(JWE);
      expect(watch).not.toBe(token);
      expect(session['scanUrl']).not.toContain(token);
      const tokens = new SessionTokens(t.sessionSecret);
      const claims = await tokens.open(watch, { type: 'register', scope: 'watch' });
      expect(claims.secrets).toBeUndefined();

      const png = await request(t.app).get(`${scan.pathname}${scan.search}`);
      expect(png.status).toBe(200);
      expect(png.headers['content-type']).toBe('image/png');
      const qr = await request(t.app).get('/api/agent/register/qr').query({ token: watch });
      expect(qr.status, JSON.stringify(qr.body)).toBe(200);
      expect(qr.body.deepLink).toMatch(/^selfapp:\/\/verify\?scope=/);
      const watched = await status(t.app, watch);
      expect(watched.status).toBe(200);
      expect(watched.body).toMatchObject({ stage: 'qr-ready', agentAddress: session['agentAddress'] });
      // the refreshed token is a watch token too: watching never widens into the session token
      const refreshed = watched.body.sessionToken as string;
      expect(await tokens.open(refreshed, { type: 'register', scope: 'watch' })).toMatchObject({ scope: 'watch' });

      const refusal = /^This token can only watch the session/;
      for (const res of [
        await exportKey(t.app, watch),
        await exportKey(t.app, refreshed),
        await request(t.app).post('/api/agent/register/export').send({ token: watch }),
        await request(t.app).post('/api/agent/register/callback').query({ token: watch }).send({ status: 'error', error: 'forged' }),
      ]) {
        expect(res.status, JSON.stringify(res.body)).toBe(401);
        expect(res.body.error).toMatch(refusal);
      }

      await approve(t.app, session['deepLink'] as string, token);
      const done = await status(t.app, watch);
      expect(done.body).toMatchObject({ stage: 'completed', agentAddress: session['agentAddress'] });
      expect(done.body.agentId).toBeGreaterThan(0);
      expect((await exportKey(t.app, watch)).status).toBe(401);
      expect((await exportKey(t.app, token)).status).toBe(200);
    });

    it('every other kind of session hands out a watch token in its scan link too', async () => {
      const t = newApp();
      const res = await request(t.app).post('/api/agent/identify').send({ network: 'testnet' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const watch = new URL(res.body.scanUrl as string).searchParams.get('token') as string;
      expect(watch).not.toBe(res.body.sessionToken);
      expect(await new SessionTokens(t.sessionSecret).open(watch, { type: 'identify', scope: 'watch' })).toMatchObject({ scope: 'watch' });
      const watched = await request(t.app).get('/api/agent/identify/status').query({ token: watch });
      expect(watched.status, JSON.stringify(watched.body)).toBe(200);
      expect(watched.body.stage).toBe('qr-ready');
      const callback = await request(t.app)
        .post(callbackTarget(res.body.deepLink as string).replace(/token=[^&]+/, `token=${encodeURIComponent(watch)}`))
        .send({ status: 'error', error: 'forged' });
      expect(callback.status).toBe(401);
      // the A2A status intent reads a session by a watch token as well
      const intent = await rpc(t.app, 'message/send', {
        message: {
          kind: 'message',
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ kind: 'data', data: { intent: 'status', sessionToken: watch } }],
        },
      });
      expect(legacyDataOf(intent.body.result)).toMatchObject({ stage: 'qr-ready' });
    });
  });

  describe('a generated key is exported once', () => {
    it('the first export wins; a second, with any token of the session, is 409; two instances sharing the store and a restart agree', async () => {
      const path = join(dir, 'export-once', 'store.sqlite');
      const sessionSecret = randomBytes(32);
      const one = newApp({ store: sqlite(path), sessionSecret });
      const two = newApp({ store: sqlite(path), sessionSecret });
      const session = await register(one.app, { mode: 'linked', network: 'testnet', humanAddress: privateKeyToAccount(randomKey()).address });
      const token = session['sessionToken'] as string;
      await approve(one.app, session['deepLink'] as string, token);
      const later = (await status(two.app, token)).body.sessionToken as string;

      // both instances at once, each with its own token of the session: exactly one gets the key
      const answers = await Promise.all([exportKey(one.app, token), exportKey(two.app, later)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 409]);
      const won = answers.find((res) => res.status === 200)?.body as Body;
      expect(privateKeyToAccount(won['privateKey'] as Hex).address).toBe(session['agentAddress']);
      const lost = answers.find((res) => res.status === 409)?.body as Body;
      expect(lost).toEqual({ error: expect.stringMatching(/^The key was already exported for this session/) });
      expect(JSON.stringify(lost)).not.toContain((won['privateKey'] as string).slice(2));

      for (const res of [await exportKey(one.app, later), await request(two.app).post('/api/agent/register/export').send({ token })]) {
        expect(res.status).toBe(409);
      }
      const restarted = newApp({ store: sqlite(path), sessionSecret });
      expect((await exportKey(restarted.app, token)).status).toBe(409);
      // the session itself is still readable
      expect((await status(restarted.app, token)).body.stage).toBe('completed');
    });

    it('a refusal before completion does not spend the export', async () => {
      const t = newApp();
      const session = await register(t.app);
      const token = session['sessionToken'] as string;
      expect((await exportKey(t.app, token)).status).toBe(409);
      await approve(t.app, session['deepLink'] as string, token);
      expect((await exportKey(t.app, token)).status).toBe(200);
      expect((await exportKey(t.app, token)).status).toBe(409);
    });
  });
});

const randomKey = (): Hex => `0x${randomBytes(32).toString('hex')}`;
