// Identify sessions end to end over real HTTP and real chains: a human proves from the deep link and the
// session reports that human's nullifier and agents — bound to the session's own proof transaction, so a
// concurrent identify by another human never leaks into it, and another session's transaction is refused.
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { identifySessionSchema, identifyStatusSchema } from '../../src/http/schemas/sessions.js';
import { identifyUserId } from '../../src/sessions/identify.js';
import { expectSubmitted } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, callbackTokenOf, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { type Body, expectConforms, expectError, manualClock, registerAgent, THIRTY_MINUTES, tampered } from '../support/session-flows.js';

describe('identify sessions', () => {
  let net: TestNetworks;

  beforeAll(async () => {
    net = await deployTestNetworks();
  });

  const newApp = (): Express => testApp(net.chains).app;

  async function identify(app: Express): Promise<Body> {
    const res = await request(app).post('/api/agent/identify').send({ network: 'testnet' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ stage: 'qr-ready', network: 'testnet' });
    expectConforms(identifySessionSchema, res.body);
    return res.body as Body;
  }

  const status = (app: Express, token: string) => request(app).get('/api/agent/identify/status').query({ token });

  it("reports the nullifier and agents of exactly the human who proved, even with another human's identify in between", async () => {
    const app = newApp();
    const alice = await registerAgent(app, net, 'linked');
    const bob = await registerAgent(app, net, 'ed25519');

    const forAlice = await identify(app);
    const forBob = await identify(app);
    const aliceApp = selfAppFromDeepLink(forAlice['deepLink'] as string);
    const bobApp = selfAppFromDeepLink(forBob['deepLink'] as string);
    expect(aliceApp.userDefinedData).toBe('I0');
    expect(aliceApp.userId).not.toBe(bobApp.userId);
    expect(aliceApp.userId).toBe(identifyUserId(aliceApp.sessionId).slice(2).toLowerCase());
    expect(aliceApp.deeplinkCallback).toMatch(/\/api\/agent\/identify\/callback\?token=/);

    // Bob proves first, then Alice: Alice's session must read Alice's event, not "the latest".
    const bobProof = await approveDeepLink(app, net, forBob['deepLink'] as string, { document: bob.document });
    expectSubmitted(bobProof.proof);
    const aliceProof = await approveDeepLink(app, net, forAlice['deepLink'] as string, { document: alice.document });
    expectSubmitted(aliceProof.proof);
    expect(aliceProof.callback?.body).toEqual({ received: true, stage: 'completed' });
    // And another identify after Alice's, by a third human with no agent.
    const carol = await identify(app);
    const carolProof = await approveDeepLink(app, net, carol['deepLink'] as string);
    expectSubmitted(carolProof.proof);

    const a = await status(app, forAlice['sessionToken'] as string);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      stage: 'completed',
      network: 'testnet',
      txHash: aliceProof.proof.txHash,
      nullifier: aliceProof.proof.nullifier.toString(),
      agentCount: 1,
      agentIds: [alice.agentId],
    });
    const b = await status(app, forBob['sessionToken'] as string);
    expect(b.body).toMatchObject({ stage: 'completed', nullifier: bobProof.proof.nullifier.toString(), agentCount: 1, agentIds: [bob.agentId] });
    const c = await status(app, carol['sessionToken'] as string);
    expect(c.body).toMatchObject({ stage: 'completed', nullifier: carolProof.proof.nullifier.toString(), agentCount: 0, agentIds: [] });
    for (const body of [a.body, b.body, c.body]) expectConforms(identifyStatusSchema, body);
    expect(new Set([a.body.nullifier, b.body.nullifier, c.body.nullifier]).size).toBe(3);

    // Completed: no QR any more.
    expectError(
      await request(app).get('/api/agent/identify/qr').query({ token: a.body.sessionToken }),
      409,
      /only available while the session waits/,
    );
  });

  it("another session's transaction is refused: the session fails instead of reporting someone else", async () => {
    const app = newApp();
    const other = await identify(app);
    const { proof } = await approveDeepLink(app, net, other['deepLink'] as string);
    expectSubmitted(proof);

    const mine = await identify(app);
    const res = await request(app)
      .post('/api/agent/identify/callback')
      .query({ token: callbackTokenOf(mine['deepLink'] as string) })
      .send({ status: 'success', txHash: proof.txHash });
    expect(res.body).toEqual({ received: true, stage: 'failed' });
    const s = await status(app, mine['sessionToken'] as string);
    expect(s.body.stage).toBe('failed');
    expect(s.body.error).toMatch(/another session's proof/);
    expect(s.body.nullifier).toBeUndefined();
  });

  it('a registration transaction is not an identify proof', async () => {
    const app = newApp();
    const registration = await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
    const { proof } = await approveDeepLink(app, net, registration.body.deepLink as string, { document: newDocument() });
    expectSubmitted(proof);
    const mine = await identify(app);
    const res = await request(app)
      .post('/api/agent/identify/callback')
      .query({ token: callbackTokenOf(mine['deepLink'] as string) })
      .send({ status: 'success', txHash: proof.txHash });
    expect(res.body).toEqual({ received: true, stage: 'failed' });
  });

  it('a rejected request fails; malformed input 400', async () => {
    const app = newApp();
    const session = await identify(app);
    const res = await request(app)
      .post('/api/agent/identify/callback')
      .query({ token: callbackTokenOf(session['deepLink'] as string) })
      .send({ status: 'error', error: 'The human declined' });
    expect(res.body).toEqual({ received: true, stage: 'failed' });
    expect((await status(app, session['sessionToken'] as string)).body).toMatchObject({ stage: 'failed', error: 'The human declined' });
    expectError(
      await request(app)
        .post('/api/agent/identify/callback')
        .query({ token: callbackTokenOf(session['deepLink'] as string) })
        .send({ status: 'success' }),
      400,
      /txHash/,
    );
    expectError(await request(app).post('/api/agent/identify').send({ network: 'moon' }), 400, /network|moon/i);
    expectError(await request(app).post('/api/agent/identify').send({ network: 5 }), 400, /network/);
    expectError(await request(app).post('/api/agent/identify').send('x').set('Content-Type', 'text/plain'), 400, /JSON/);
  });

  it('tokens: expired (410), tampered (401), another type (400), callback token elsewhere (401); QR PNG', async () => {
    const clock = manualClock();
    const app = testApp(net.chains, { clock: clock.now }).app;
    const session = await identify(app);
    const token = session['sessionToken'] as string;
    const png = await request(app).get('/api/agent/identify/qr').set('Authorization', `Bearer ${token}`).query({ format: 'png' });
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toMatch(/image\/png/);
    expectError(await status(app, tampered(token)), 401, 'Invalid session token');
    expectError(await status(app, callbackTokenOf(session['deepLink'] as string)), 401, 'Invalid session token');
    expectError(await request(app).get('/api/agent/register/status').query({ token }), 400, 'Token is not for a register session');
    expectError(await request(app).get('/api/agent/refresh/status').query({ token }), 400, 'Token is not for a refresh session');
    clock.advance(THIRTY_MINUTES);
    expectError(await status(app, token), 410, 'Session expired');
  });

  it('session creations share the rate limit of registration: 10 per minute per address, then 429', async () => {
    const app = newApp();
    for (let i = 0; i < 10; i++) expect((await request(app).post('/api/agent/identify').send({ network: 'testnet' })).status).toBe(200);
    expect((await request(app).post('/api/agent/identify').send({ network: 'testnet' })).status).toBe(429);
    expect((await request(app).post('/api/agent/refresh').send({ network: 'testnet', agentId: 1 })).status).toBe(429);
    expect(
      (await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: '0x1111111111111111111111111111111111111111' }))
        .status,
    ).toBe(429);
    expect((await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' })).status).toBe(429);
  });
});
