import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/errors.js';
import { type SessionClaims, SessionTokens } from '../../src/sessions/session-token.js';

const secret = new TextEncoder().encode('a-session-secret-of-at-least-32-bytes!');
const agentPrivateKey = `0x${'ab'.repeat(32)}` as const;
const ed25519PrivateKey = `0x${'cd'.repeat(32)}` as const;

function setup(start = 1_700_000_000_000): { tokens: SessionTokens; claims: SessionClaims; advance: (ms: number) => void } {
  let now = start;
  const tokens = new SessionTokens(secret, () => now);
  const claims: SessionClaims = {
    sessionId: '0123456789abcdef0123456789abcdef',
    type: 'register',
    scope: 'session',
    expiresAt: start + SessionTokens.LIFETIME_MS,
    secrets: { agentPrivateKey },
  };
  return { tokens, claims, advance: (ms) => (now += ms) };
}

async function serviceError(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('SessionTokens', () => {
  it('round-trips the claims, secrets included, as a compact dir/A256GCM JWE', async () => {
    const { tokens, claims } = setup();
    const token = await tokens.issue(claims);
    expect(token.split('.')).toHaveLength(5);
    expect(token.split('.')[1]).toBe(''); // dir: no encrypted key
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
    expect(header).toEqual({ alg: 'dir', enc: 'A256GCM' });
    expect(await tokens.open(token, { type: 'register' })).toEqual(claims);

    const both = { ...claims, secrets: { agentPrivateKey, ed25519PrivateKey } };
    expect(await tokens.open(await tokens.issue(both), { type: 'register' })).toEqual(both);
  });

  it('never shows the private key or the session id in the token text', async () => {
    const { tokens, claims } = setup();
    const token = await tokens.issue(claims);
    for (const needle of [agentPrivateKey, agentPrivateKey.slice(2), claims.sessionId]) {
      expect(token).not.toContain(needle);
      expect(Buffer.from(token.replace(/\./g, ''), 'base64url').toString('hex')).not.toContain(needle.replace(/^0x/, ''));
    }
  });

  it('a refreshed token differs but carries the same claims and expiry', async () => {
    const { tokens, claims, advance } = setup();
    const first = await tokens.issue(claims);
    advance(60_000);
    const refreshed = await tokens.issue(await tokens.open(first, { type: 'register' }));
    expect(refreshed).not.toBe(first);
    expect(await tokens.open(refreshed, { type: 'register' })).toEqual(claims);
  });

  it('401 for a token with any byte altered', async () => {
    const { tokens, claims } = setup();
    const token = await tokens.issue(claims);
    const parts = token.split('.');
    for (const index of [0, 2, 3, 4]) {
      const bytes = Buffer.from(parts[index]!, 'base64url');
      bytes[0]! ^= 0x01;
      const altered = parts.map((part, i) => (i === index ? bytes.toString('base64url') : part)).join('.');
      const error = await serviceError(tokens.open(altered, { type: 'register' }));
      expect([error.status, error.message]).toEqual([401, 'Invalid session token']);
    }
  });

  it('401 for a token made with another secret', async () => {
    const { tokens, claims } = setup();
    const foreign = await new SessionTokens(randomBytes(32)).issue(claims);
    const error = await serviceError(tokens.open(foreign, { type: 'register' }));
    expect([error.status, error.message]).toEqual([401, 'Invalid session token']);
  });

  it('401 for garbage, without details', async () => {
    const { tokens } = setup();
    for (const garbage of ['', 'abc', 'a.b.c.d.e', '....', 'x'.repeat(5000), `${'e30'}..${'A'.repeat(16)}.AA.${'A'.repeat(22)}`]) {
      const error = await serviceError(tokens.open(garbage, { type: 'register' }));
      expect([error.status, error.message]).toEqual([401, 'Invalid session token']);
    }
  });

  it('401 for a token we encrypted whose payload has the wrong shape', async () => {
    const { CompactEncrypt } = await import('jose');
    const { hkdfSync } = await import('node:crypto');
    const key = new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), 'session-token', 32));
    const { tokens } = setup();
    for (const payload of [
      'null',
      '"text"',
      '{"sessionId":"x"}',
      '{"sessionId":"x","type":"admin","scope":"session","expiresAt":1e20}',
      'not json',
    ]) {
      const token = await new CompactEncrypt(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(key);
      const error = await serviceError(tokens.open(token, { type: 'register' }));
      expect([error.status, error.message]).toEqual([401, 'Invalid session token']);
    }
  });

  it('410 once expiresAt is reached, by the injected clock', async () => {
    const { tokens, claims, advance } = setup();
    const token = await tokens.issue(claims);
    advance(SessionTokens.LIFETIME_MS - 1);
    await expect(tokens.open(token, { type: 'register' })).resolves.toEqual(claims);
    advance(1);
    const error = await serviceError(tokens.open(token, { type: 'register' }));
    expect([error.status, error.message]).toEqual([410, 'Session expired']);
  });

  it('400 for a token of another session type; a list of types accepts any of them', async () => {
    const { tokens, claims } = setup();
    const token = await tokens.issue({ ...claims, type: 'deregister' });
    const error = await serviceError(tokens.open(token, { type: 'register' }));
    expect([error.status, error.message]).toEqual([400, 'Token is not for a register session']);
    await expect(tokens.open(token, { type: ['register', 'deregister'] })).resolves.toMatchObject({ type: 'deregister' });
  });

  it('scopes: a callback token cannot be used as a session token, nor the other way round', async () => {
    const { tokens, claims } = setup();
    const callback = await tokens.issue({ ...claims, scope: 'callback' });
    const asSession = await serviceError(tokens.open(callback, { type: 'register' }));
    expect([asSession.status, asSession.message]).toEqual([401, 'Invalid session token']);

    const session = await tokens.issue(claims);
    const asCallback = await serviceError(tokens.open(session, { type: 'register', scope: 'callback' }));
    expect([asCallback.status, asCallback.message]).toEqual([401, 'Invalid session token']);
  });

  it('a callback token never carries secrets, even if asked to', async () => {
    const { tokens, claims } = setup();
    const callback = await tokens.issue({ ...claims, scope: 'callback' });
    const opened = await tokens.open(callback, { type: 'register', scope: 'callback' });
    expect(opened.secrets).toBeUndefined();
    expect(opened).toEqual({ sessionId: claims.sessionId, type: 'register', scope: 'callback', expiresAt: claims.expiresAt });
  });

  it('a watch token never carries secrets, opens where watching is allowed, and says so where the session token is needed', async () => {
    const { tokens, claims } = setup();
    const watch = await tokens.issue({ ...claims, scope: 'watch' });
    const opened = await tokens.open(watch, { type: 'register', scope: ['session', 'watch'] });
    expect(opened).toEqual({ sessionId: claims.sessionId, type: 'register', scope: 'watch', expiresAt: claims.expiresAt });
    // refreshing it gives a watch token again, never a session token
    expect(await tokens.open(await tokens.issue(opened), { type: 'register', scope: 'watch' })).toEqual(opened);

    for (const scope of ['session', 'callback'] as const) {
      const refused = await serviceError(tokens.open(watch, { type: 'register', scope }));
      expect(refused.status).toBe(401);
      expect(refused.message).toMatch(/^This token can only watch the session/);
    }
    // a session token where only watching is asked for is fine; a callback token is not
    expect(await tokens.open(await tokens.issue(claims), { type: 'register', scope: ['session', 'watch'] })).toEqual(claims);
    const callback = await serviceError(
      tokens.open(await tokens.issue({ ...claims, scope: 'callback' }), { type: 'register', scope: ['session', 'watch'] }),
    );
    expect([callback.status, callback.message]).toEqual([401, 'Invalid session token']);
  });

  it('refuses a secret shorter than 32 bytes and claims it could not open again', async () => {
    expect(() => new SessionTokens(new Uint8Array(31))).toThrow(/at least 32 bytes/);
    const { tokens, claims } = setup();
    await expect(tokens.issue({ ...claims, secrets: { agentPrivateKey: '0x1234' } })).rejects.toThrow();
  });
});
