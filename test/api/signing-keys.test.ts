// The service's signing keys on real stores (sqlite in DATA_DIR, a real redis-server) and the JWKS over real HTTP:
// generated once into a 0600 file and kept across restarts; rotated (by the service or by the operator's command)
// with the old key listed until its retire time; SIGNING_KEY used as given; instances sharing a Redis signing with
// one key; and what current() signs verifying with jose against the JWKS the listening server serves.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Express } from 'express';
import { CompactSign, compactVerify, createLocalJWKSet, createRemoteJWKSet, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { parseSigningJwk } from '../../src/core/signing-jwk.js';
import { type ServiceSigningKey, ServiceSigningKeys, type SigningKeyOptions, type SigningKeySource } from '../../src/services/signing-keys.js';
import type { KeyValueStore } from '../../src/store/key-value-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { SIGNING_KEY_FILE, SigningKeyFile } from '../../src/store/signing-key-file.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { testApp } from '../support/app.js';
import { deployTestSystem } from '../support/chain.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { tsxBin } from '../support/service-process.js';

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'signing-keys-'));
let dirs = 0;
const newDataDir = (): string => join(root, `data-${++dirs}`);

const sign = (key: ServiceSigningKey, text: string): Promise<string> =>
  new CompactSign(new TextEncoder().encode(text)).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
const kidsOf = (jwks: { keys: { kid: string }[] }): string[] => jwks.keys.map((key) => key.kid);

describe('service signing keys', () => {
  let chains: ChainGateway;
  const stores: KeyValueStore[] = [];
  const servers: Server[] = [];
  let redis: RedisServer;

  beforeAll(async () => {
    const system = await deployTestSystem('testnet');
    chains = new ChainGateway({ mainnet: system.gateway, testnet: system.gateway });
    if (redisAvailable) redis = await startRedisServer();
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    await Promise.all(stores.map((store) => store.close()));
    await redis?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const sqlite = (dataDir: string): SqliteStore => {
    const store = new SqliteStore(join(dataDir, 'store.sqlite'));
    stores.push(store);
    return store;
  };
  const keyFile = (dataDir: string): SigningKeyFile => new SigningKeyFile(join(dataDir, SIGNING_KEY_FILE));
  /** The keys as main.ts builds them without Redis, reading the store at every call (no refresh delay to wait out). */
  const keysOf = (store: KeyValueStore, source: SigningKeySource, options: Partial<SigningKeyOptions> = {}): ServiceSigningKeys =>
    new ServiceSigningKeys({ store, source, refreshMs: 0, ...options });

  /** The app with `signingKeys` on a real listening server; its public URL is the server's. */
  async function serve(signingKeys: ServiceSigningKeys): Promise<{ url: string; app: Express }> {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const { app } = testApp(chains, { publicUrl: url, signingKeys });
    server.on('request', app);
    return { url, app };
  }
  const jwksAt = async (url: string): Promise<{ keys: (JWK & { kid: string })[] }> => (await fetch(`${url}/.well-known/jwks.json`)).json() as never;

  it('generates one Ed25519 key into DATA_DIR (0600) at the first start and keeps it across restarts', async () => {
    const dataDir = newDataDir();
    const logs: string[] = [];
    const first = await keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) }, { log: (m) => logs.push(m) }).current();
    const path = join(dataDir, SIGNING_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(logs).toEqual([`generated a signing key in ${path}; set SIGNING_KEY to manage it yourself`]);
    expect(first).toMatchObject({ alg: 'EdDSA', publicJwk: { kty: 'OKP', crv: 'Ed25519', kid: first.kid, alg: 'EdDSA', use: 'sig' } });
    // the file is the private JWK with its kid: what SIGNING_KEY takes
    expect(parseSigningJwk(JSON.parse(readFileSync(path, 'utf8')))).toMatchObject({ kid: first.kid, x: first.publicJwk.x });

    // a restart: new store connection, new instance, the same key, nothing generated
    const again = keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) }, { log: (m) => logs.push(m) });
    expect((await again.current()).kid).toBe(first.kid);
    expect(await again.jwks()).toEqual({ keys: [first.publicJwk] });
    expect(logs).toHaveLength(1);

    // SIGNING_KEY_ALG=ES256: a P-256 key
    const p256 = newDataDir();
    const ec = await keysOf(sqlite(p256), { kind: 'file', file: keyFile(p256) }, { alg: 'ES256' }).current();
    expect(ec).toMatchObject({ alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' } });
  });

  it('a rotation signs with the new key; the old one stays in the JWKS until its retire time, across a restart, then drops', async () => {
    const dataDir = newDataDir();
    let now = Date.now();
    const clock = () => now;
    const keys = keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) }, { clock });
    const old = await keys.current();
    const signedBefore = await sign(old, 'signed before the rotation');
    const rotated = await keys.rotate({ retireAfterMs: 15 * 60_000 });
    expect(rotated.kid).not.toBe(old.kid);
    expect((await keys.current()).kid).toBe(rotated.kid);
    expect(keyFile(dataDir).read()).toMatchObject({ kid: rotated.kid });
    expect(kidsOf(await keys.jwks())).toEqual([rotated.kid, old.kid]);

    // a restart keeps the ring: the old key is still listed
    now += 15 * 60_000 - 1;
    const restarted = keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) }, { clock });
    expect((await restarted.current()).kid).toBe(rotated.kid);
    const listed = await restarted.jwks();
    expect(kidsOf(listed)).toEqual([rotated.kid, old.kid]);
    await expect(compactVerify(signedBefore, createLocalJWKSet(listed))).resolves.toBeDefined();

    // its retire time: gone, and what it signed verifies no more
    now += 1;
    const after = await restarted.jwks();
    expect(kidsOf(after)).toEqual([rotated.kid]);
    await expect(compactVerify(signedBefore, createLocalJWKSet(after))).rejects.toThrow(/no applicable key found/);

    // retireAfterMs 0 (a leaked key): withdrawn at once
    const withdrawn = await restarted.rotate({ retireAfterMs: 0 });
    expect(kidsOf(await restarted.jwks())).toEqual([withdrawn.kid]);
  });

  it('npm run rotate-signing-key: a running instance signs with the new key, and lists both', { timeout: 60_000 }, async () => {
    const dataDir = newDataDir();
    const running = keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) });
    const before = await running.current();
    const env = { ...process.env, DATA_DIR: dataDir, SIGNING_KEY: '', REDIS_URL: '' };
    const { stdout } = await run(tsxBin, ['scripts/rotate-signing-key.ts', '--retire-after-ms', '3600000'], { env });
    const after = await running.current();
    expect(after.kid).not.toBe(before.kid);
    expect(stdout).toContain(`rotated the signing key: kid ${after.kid} (EdDSA) signs from now on; kid ${before.kid} stays in the JWKS until`);
    expect(kidsOf(await running.jwks())).toEqual([after.kid, before.kid]);

    // with SIGNING_KEY set, the command refuses and says how to rotate instead
    const given = JSON.stringify(await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).privateKey));
    const refused = await run(tsxBin, ['scripts/rotate-signing-key.ts'], { env: { ...env, SIGNING_KEY: given } }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('SIGNING_KEY sets the signing key: rotate by setting it to a new key'),
    });
    expect((await running.current()).kid).toBe(after.kid);
  });

  it('what current() signs verifies with jose against the JWKS the discovery document names, before and after a rotation', async () => {
    const dataDir = newDataDir();
    const keys = keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) });
    const { url } = await serve(keys);
    const discovery = (await (await fetch(`${url}/.well-known/self-agent-id.json`)).json()) as { jwksUri: string };
    expect(discovery.jwksUri).toBe(`${url}/.well-known/jwks.json`);

    const res = await fetch(discovery.jwksUri);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jwk-set+json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');

    const old = await keys.current();
    const before = await sign(old, 'a card');
    const { payload, protectedHeader } = await compactVerify(before, createRemoteJWKSet(new URL(discovery.jwksUri)));
    expect(new TextDecoder().decode(payload)).toBe('a card');
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: old.kid });

    // a verifier that holds the set from before the rotation meets an unknown kid and fetches it again
    const remote = createRemoteJWKSet(new URL(discovery.jwksUri), { cooldownDuration: 0 });
    await compactVerify(before, remote);
    const rotated = await keys.rotate();
    await expect(compactVerify(await sign(rotated, 'a credential'), remote)).resolves.toBeDefined();
    await expect(compactVerify(before, remote)).resolves.toBeDefined();
    // a key that never was the service's does not verify
    const stranger = await generateKeyPair('EdDSA');
    const forged = await new CompactSign(new TextEncoder().encode('a card'))
      .setProtectedHeader({ alg: 'EdDSA', kid: old.kid })
      .sign(stranger.privateKey);
    await expect(compactVerify(forged, remote)).rejects.toThrow(/signature verification failed/);
  });

  it('SIGNING_KEY is used as given, writes no file, cannot be rotated by command; a new one retires the key it replaces', async () => {
    const dataDir = newDataDir();
    const store = sqlite(dataDir);
    // a first start without it generated a key into DATA_DIR
    const generated = await keysOf(store, { kind: 'file', file: keyFile(dataDir) }).current();

    const p256 = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const logs: string[] = [];
    const given = keysOf(store, { kind: 'given', jwk: parseSigningJwk({ ...p256, kid: 'ops-2026-11' }) }, { log: (m) => logs.push(m) });
    const key = await given.current();
    expect(key).toMatchObject({ kid: 'ops-2026-11', alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: p256.x, y: p256.y, kid: 'ops-2026-11' } });
    expect(key.publicJwk).not.toHaveProperty('d');
    await expect(compactVerify(await sign(key, 'x'), createLocalJWKSet(await given.jwks()))).resolves.toBeDefined();
    expect(kidsOf(await given.jwks())).toEqual(['ops-2026-11', generated.kid]);
    expect(logs).toEqual([
      expect.stringMatching(
        new RegExp(
          `^SIGNING_KEY holds a new signing key: kid ops-2026-11 \\(ES256\\) signs from now on; kid ${generated.kid} stays in the JWKS until `,
        ),
      ),
    ]);
    await expect(given.rotate()).rejects.toThrow(/SIGNING_KEY sets the signing key/);
    expect(keyFile(dataDir).read()).toMatchObject({ kid: generated.kid });

    // the setting changed (a key without a kid: its thumbprint): the one it replaces stays listed
    const next = keysOf(store, {
      kind: 'given',
      jwk: parseSigningJwk(await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).privateKey)),
    });
    const nextKey = await next.current();
    expect(nextKey.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(kidsOf(await next.jwks())).toEqual([nextKey.kid, 'ops-2026-11', generated.kid]); // the latest replaced first

    // from the first start on: no key file
    const fresh = newDataDir();
    await keysOf(sqlite(fresh), { kind: 'given', jwk: parseSigningJwk(p256) }).current();
    expect(existsSync(join(fresh, SIGNING_KEY_FILE))).toBe(false);
  });

  it('a key file that holds no signing key stops the start, naming the file', async () => {
    const dataDir = newDataDir();
    const file = keyFile(dataDir);
    await keysOf(sqlite(dataDir), { kind: 'file', file }).current();
    const { d: _d, ...publicOnly } = JSON.parse(readFileSync(file.path, 'utf8')) as Record<string, string>;
    writeFileSync(file.path, JSON.stringify(publicOnly));
    await expect(keysOf(sqlite(newDataDir()), { kind: 'file', file }).current()).rejects.toThrow(
      `${file.path} holds no private part (d): it must be the private key; move it away to have a new key generated, or set SIGNING_KEY`,
    );
  });

  describe.skipIf(!redisAvailable)(`instances sharing a Redis${redisAvailable ? '' : ` (skipped: ${REDIS_MISSING})`}`, () => {
    let prefixes = 0;
    const connect = async (keyPrefix: string): Promise<RedisStore> => {
      const store = await RedisStore.connect({ url: redis.url, keyPrefix });
      stores.push(store);
      return store;
    };

    it('sign with one key and serve the same JWKS; a rotation on one is what the other signs with', async () => {
      const prefix = `keys-${++prefixes}:`;
      const [a, b] = [keysOf(await connect(prefix), { kind: 'store' }), keysOf(await connect(prefix), { kind: 'store' })];
      // both start at once: one key is generated into the store, and both take it
      const [keyA, keyB] = await Promise.all([a.current(), b.current()]);
      expect(keyB.kid).toBe(keyA.kid);
      const [servedA, servedB] = [await serve(a), await serve(b)];
      expect(await jwksAt(servedB.url)).toEqual(await jwksAt(servedA.url));
      expect(kidsOf(await jwksAt(servedA.url))).toEqual([keyA.kid]);

      const rotated = await a.rotate({ retireAfterMs: 60_000 });
      expect((await b.current()).kid).toBe(rotated.kid);
      const listed = await jwksAt(servedB.url);
      expect(kidsOf(listed)).toEqual([rotated.kid, keyA.kid]);
      expect(await jwksAt(servedA.url)).toEqual(listed);
      // B signs with the key A made; the other instance's JWKS verifies it
      const signedByB = await sign(await b.current(), 'from b');
      await expect(compactVerify(signedByB, createRemoteJWKSet(new URL(`${servedA.url}/.well-known/jwks.json`)))).resolves.toBeDefined();
    });

    it('the first instance offers the key an earlier single-instance run kept in DATA_DIR', async () => {
      const dataDir = newDataDir();
      const earlier = await keysOf(sqlite(dataDir), { kind: 'file', file: keyFile(dataDir) }).current();
      const logs: string[] = [];
      const shared = keysOf(
        await connect(`keys-${++prefixes}:`),
        { kind: 'store', offered: () => keyFile(dataDir).read() },
        { log: (m) => logs.push(m) },
      );
      expect((await shared.current()).kid).toBe(earlier.kid);
      expect(logs).toEqual([
        expect.stringContaining(`kept the signing key of DATA_DIR/signing-key.json in the shared store (signing-keys); kid ${earlier.kid}`),
      ]);
      // a second instance takes it from the store and offers nothing
      const other = keysOf(await connect(`keys-${prefixes}:`), { kind: 'store', offered: () => undefined });
      expect((await other.current()).kid).toBe(earlier.kid);
    });

    it('while Redis is away, an instance signs on with the key it read last', async () => {
      const errors: unknown[] = [];
      const keys = keysOf(await connect(`keys-${++prefixes}:`), { kind: 'store' }, { onRefreshError: (error) => errors.push(error) });
      const before = await keys.current();
      await redis.stop();
      try {
        expect((await keys.current()).kid).toBe(before.kid);
        expect(kidsOf(await keys.jwks())).toEqual([before.kid]);
        expect(errors.length).toBeGreaterThan(0);
      } finally {
        await redis.restart();
      }
    });
  });
});
