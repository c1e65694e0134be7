// The service on a Redis store when Redis goes away: a real redis-server killed with SIGKILL under a running app.
// Store calls fail at once with StoreUnavailableError (no queue waiting for a reconnect), REST answers 503
// {"error":"store unavailable: redis ..."} with Retry-After, the A2A agent fails the task with the same error, and
// once Redis is back on the same port the same requests succeed without restarting anything.
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import type { Services } from '../../src/services/index.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { sendRegister } from '../support/a2a.js';
import { testApp } from '../support/app.js';
import { REDIS_MISSING, type RedisServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { deployTestNetworks } from '../support/registration-flow.js';

const register = (app: Express) => request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });

describe.skipIf(!redisAvailable)(`a Redis store that goes away and comes back${redisAvailable ? '' : ` (skipped: ${REDIS_MISSING})`}`, () => {
  let redis: RedisServer;
  let store: RedisStore;
  let app: Express;
  let services: Services;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await RedisStore.connect({ url: redis.url, keyPrefix: 'faults:' });
    ({ app, services } = testApp((await deployTestNetworks()).chains, { store }));
  });
  afterAll(async () => {
    services?.watcher.stopAll();
    await store?.close();
    await redis?.stop();
  });

  it('fails fast with a named 503 while Redis is down, and serves again once it is back', async () => {
    const before = await register(app);
    expect(before.status, JSON.stringify(before.body)).toBe(200);

    await redis.kill();
    // every kind of call fails at once with the typed error (the bound is generous: a hang would hit it)
    const started = Date.now();
    for (const call of [
      () => store.get('x'),
      () => store.set('x', 1),
      () => store.update<number>('x', () => 1),
      () => store.setIfAbsent('x', 1, 1_000),
      () => store.increment('x', 1_000),
      () => store.keys(''),
      () => store.limiter({ name: 'faults', limit: 1, windowMs: 1_000 }).take('c'),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
    }
    expect(Date.now() - started).toBeLessThan(5_000);

    const refused = await register(app);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      error: expect.stringMatching(/^store unavailable: redis at 127\.0\.0\.1:\d+ (is not connected|did not answer) \(.+\)$/),
    });
    expect(refused.headers['retry-after']).toBe('5');
    const status = await request(app)
      .get('/api/agent/register/status')
      .query({ token: before.body.sessionToken as string });
    expect(status.status).toBe(503);
    expect(status.body.error).toMatch(/^store unavailable: redis /);

    // a load balancer sees it: health is 503 with the store down, the chains still up
    const health = await request(app).get('/api/health');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('degraded');
    expect(health.body.store).toEqual({ up: false, error: expect.stringMatching(/^store unavailable: redis /) });
    expect(health.body.networks.every((n: { up: boolean }) => n.up)).toBe(true);

    const a2a = await sendRegister(app);
    expect(a2a.status).toBe(200);
    expect(JSON.stringify(a2a.body)).toContain('store unavailable: redis');

    await redis.restart();
    // the connection comes back by itself (backing off to one attempt every 2 s)
    const deadline = Date.now() + 15_000;
    let again = await register(app);
    while (again.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      again = await register(app);
    }
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const next = await request(app)
      .get('/api/agent/register/status')
      .query({ token: again.body.sessionToken as string });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    const healthy = await request(app).get('/api/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body.store).toEqual({ up: true });
    expect((await sendRegister(app)).body.result.status.state).toBe('auth-required');
  });
});
