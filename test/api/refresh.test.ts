// Proof refresh sessions end to end over real HTTP and real chains: an ECDSA agent registered under an age
// config and an Ed25519 agent under the default config are re-proved by their human from the deep link;
// the status reports the new expiry, freshness, strength and credentials. Disclosures of another config
// are refused up front, naming the agent's config; another human is refused on chain (NotAgentOwner).
// The registry keeps only the newest proof's credentials: a refresh without disclosures asks again for what the
// agent shows (nationality, name), and one whose disclosures leave a credential out names it as replaced.
import type { Express } from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { refreshSessionSchema, refreshStatusSchema } from '../../src/http/schemas/sessions.js';
import { expectSubmitted } from '../support/agents.js';
import { testApp } from '../support/app.js';
import type { TestSystem } from '../support/chain.js';
import { approveDeepLink, callbackTokenOf, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { registryEvents } from '../support/registry.js';
import {
  type ApiAgent,
  type Body,
  expectConforms,
  expectError,
  manualClock,
  registerAgent,
  THIRTY_MINUTES,
  tampered,
} from '../support/session-flows.js';

describe('proof refresh sessions', () => {
  let net: TestNetworks;
  let testnet: TestSystem;

  beforeAll(async () => {
    net = await deployTestNetworks();
    testnet = net.testnet;
  });

  const newApp = (): Express => testApp(net.chains).app;

  async function refresh(app: Express, body: Body): Promise<Body> {
    const res = await request(app).post('/api/agent/refresh').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.body as Body;
  }

  const status = (app: Express, token: string) => request(app).get('/api/agent/refresh/status').query({ token });

  async function refreshes(app: Express, agent: ApiAgent, body: Body, expected: { configIndex: number; credentials: Body }): Promise<void> {
    const before = (await testnet.gateway.registry.readAgent(BigInt(agent.agentId)))!;
    const session = await refresh(app, { network: 'testnet', agentId: agent.agentId, ...body });
    expect(session).toMatchObject({ stage: 'qr-ready', agentId: agent.agentId, network: 'testnet', configIndex: expected.configIndex });
    expectConforms(refreshSessionSchema, session);
    const selfApp = selfAppFromDeepLink(session['deepLink'] as string);
    expect(selfApp.userId).toBe(agent.owner.slice(2).toLowerCase());
    expect(selfApp.userDefinedData).toBe(`F${expected.configIndex}${BigInt(agent.agentId).toString(16).padStart(64, '0')}`);
    expect(selfApp.deeplinkCallback).toMatch(/\/api\/agent\/refresh\/callback\?token=/);

    const pending = await status(app, session['sessionToken'] as string);
    expect(pending.body).toMatchObject({ stage: 'qr-ready', agentId: agent.agentId });
    expect(pending.body.proofExpiresAt).toBeUndefined();

    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: agent.document });
    expectSubmitted(proof);
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });

    const res = await status(app, pending.body.sessionToken as string);
    expect(res.status).toBe(200);
    const after = (await testnet.gateway.registry.readAgent(BigInt(agent.agentId)))!;
    // The proof's block is at least as late as the registration's (the chain's clock is not moved here, so
    // that other test files sharing this anvil are not disturbed); the transaction refreshed this agent.
    expect(after.proofExpiresAt).toBeGreaterThanOrEqual(before.proofExpiresAt);
    const refreshed = (await registryEvents(testnet, proof.txHash)).filter((e) => e.eventName === 'HumanProofRefreshed');
    expect(refreshed.map((e) => (e.args as { agentId: bigint; newExpiresAt: bigint }).agentId)).toEqual([BigInt(agent.agentId)]);
    expect((refreshed[0]!.args as { newExpiresAt: bigint }).newExpiresAt).toBe(after.proofExpiresAt);
    expect(res.body).toMatchObject({
      stage: 'completed',
      agentId: agent.agentId,
      network: 'testnet',
      txHash: proof.txHash,
      proofExpiresAt: Number(after.proofExpiresAt),
      isProofFresh: true,
      verificationStrength: 100,
    });
    expect(res.body.credentials).toMatchObject(expected.credentials);
    expectConforms(refreshStatusSchema, res.body);
    // Done: no QR any more.
    expectError(
      await request(app).get('/api/agent/refresh/qr').query({ token: res.body.sessionToken }),
      409,
      /only available while the session waits/,
    );
  }

  it('an ECDSA agent under an age config: refreshed, with a new expiry and credentials', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked', { disclosures: { minimumAge: 18 } });
    await refreshes(
      app,
      agent,
      { disclosures: { minimumAge: 18, nationality: true } },
      { configIndex: 1, credentials: { olderThan: 18, nationality: 'GBR' } },
    );
  });

  it("an Ed25519 agent; without disclosures the agent's own config is proved", async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'ed25519', { disclosures: { ofac: true } });
    await refreshes(app, agent, {}, { configIndex: 3, credentials: { ofac: [true, true, true] } });
  });

  const info = async (app: Express, agentId: number): Promise<Body> => {
    const res = await request(app).get(`/api/agent/info/11142220/${agentId}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.credentials as Body;
  };

  /** Opens a refresh, has the agent's human prove it, and returns the session and its completed status. */
  async function refreshAndProve(app: Express, agent: ApiAgent, body: Body): Promise<{ session: Body; completed: Body }> {
    const session = await refresh(app, { network: 'testnet', agentId: agent.agentId, ...body });
    expectConforms(refreshSessionSchema, session);
    const pending = await status(app, session['sessionToken'] as string);
    expect(pending.body.replacesCredentials).toEqual(session['replacesCredentials']);
    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: agent.document });
    expectSubmitted(proof);
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });
    const completed = await status(app, pending.body.sessionToken as string);
    expect(completed.body.stage).toBe('completed');
    expectConforms(refreshStatusSchema, completed.body);
    return { session, completed: completed.body as Body };
  }

  it('without disclosures: asks again for the nationality and name the agent shows, and keeps them', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked', { disclosures: { minimumAge: 18, nationality: true, name: true } });
    expect(await info(app, agent.agentId)).toMatchObject({ nationality: 'GBR', name: ['ALICE', 'SMITH'], olderThan: 18 });

    const { session, completed } = await refreshAndProve(app, agent, {});
    expect(session['replacesCredentials']).toEqual([]);
    expect(selfAppFromDeepLink(session['deepLink'] as string).disclosures).toEqual({ minimumAge: 18, nationality: true, name: true });
    expect(completed['replacesCredentials']).toEqual([]);
    expect(completed['credentials']).toMatchObject({ nationality: 'GBR', name: ['ALICE', 'SMITH'], olderThan: 18 });
    expect(await info(app, agent.agentId)).toMatchObject({ nationality: 'GBR', name: ['ALICE', 'SMITH'], olderThan: 18 });
  });

  it('disclosures without the nationality: the session names it as replaced, and the refresh erases it', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked', { disclosures: { nationality: true, name: true } });
    expect(await info(app, agent.agentId)).toMatchObject({ nationality: 'GBR', name: ['ALICE', 'SMITH'] });

    const { session, completed } = await refreshAndProve(app, agent, { disclosures: { name: true } });
    expect(session['replacesCredentials']).toEqual(['nationality']);
    expect(selfAppFromDeepLink(session['deepLink'] as string).disclosures).toEqual({ name: true });
    expect(completed['replacesCredentials']).toEqual(['nationality']);
    expect(completed['credentials']).not.toHaveProperty('nationality');
    const after = await info(app, agent.agentId);
    expect(after['nationality']).toBe('');
    expect(after['name']).toEqual(['ALICE', 'SMITH']);
  });

  it("disclosures of another config: 400 naming the agent's config", async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked', { disclosures: { minimumAge: 18 } });
    const res = await request(app)
      .post('/api/agent/refresh')
      .send({ network: 'testnet', agentId: agent.agentId, disclosures: { minimumAge: 21, ofac: true } });
    expectError(res, 400, /config 5 \(minimumAge 21, ofac true\).*config 1 \(minimumAge 18, ofac false\)/);
    const none = await request(app).post('/api/agent/refresh').send({ network: 'testnet', agentId: agent.agentId, disclosures: {} });
    expectError(none, 400, /agent \d+ has config 1 \(minimumAge 18, ofac false\)/);
  });

  it('another human: failed with NotAgentOwner, the proof unchanged', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked');
    const before = await testnet.gateway.registry.readAgent(BigInt(agent.agentId));
    const session = await refresh(app, { network: 'testnet', agentId: String(agent.agentId) });
    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: newDocument() });
    expect(proof.status).toBe('reverted');
    expect(callback?.body).toEqual({ received: true, stage: 'failed' });
    const res = await status(app, session['sessionToken'] as string);
    expect(res.body).toMatchObject({ stage: 'failed' });
    expect(res.body.error).toMatch(/NotAgentOwner/);
    expect((await testnet.gateway.registry.readAgent(BigInt(agent.agentId)))?.proofExpiresAt).toBe(before?.proofExpiresAt);
  });

  it('unknown or burned agent 404; malformed input 400', async () => {
    const app = newApp();
    expectError(
      await request(app).post('/api/agent/refresh').send({ network: 'testnet', agentId: 987654 }),
      404,
      'Agent 987654 is not registered on testnet',
    );
    for (const agentId of [0, -1, 1.5, 'abc', '', null]) {
      expectError(await request(app).post('/api/agent/refresh').send({ network: 'testnet', agentId }), 400, /agentId/);
    }
    expectError(await request(app).post('/api/agent/refresh').send({ network: 'testnet' }), 400, /agentId/);
    expectError(await request(app).post('/api/agent/refresh').send({ network: 'moon', agentId: 1 }), 400, /network|moon/i);
    expectError(
      await request(app)
        .post('/api/agent/refresh')
        .send({ network: 'testnet', agentId: 1, disclosures: { minimumAge: 5 } }),
      400,
      /minimumAge/,
    );
  });

  it('tokens: expired (410), tampered (401), another type (400); Bearer works', async () => {
    const clock = manualClock();
    const app = testApp(net.chains, { clock: clock.now }).app;
    const agent = await registerAgent(app, net, 'linked');
    const session = await refresh(app, { network: 'testnet', agentId: agent.agentId });
    const token = session['sessionToken'] as string;
    expect((await request(app).get('/api/agent/refresh/status').set('Authorization', `Bearer ${token}`)).body.stage).toBe('qr-ready');
    expectError(await status(app, tampered(token)), 401, 'Invalid session token');
    const identify = await request(app).post('/api/agent/identify').send({ network: 'testnet' });
    expectError(await status(app, identify.body.sessionToken as string), 400, 'Token is not for a refresh session');
    expectError(await request(app).get('/api/agent/deregister/status').query({ token }), 400, 'Token is not for a deregister session');
    clock.advance(THIRTY_MINUTES);
    expectError(await status(app, token), 410, 'Session expired');
    expectError(await request(app).get('/api/agent/refresh/qr').query({ token }), 410, 'Session expired');
    expectError(
      await request(app)
        .post('/api/agent/refresh/callback')
        .query({ token: callbackTokenOf(session['deepLink'] as string) })
        .send({ status: 'error', error: 'late' }),
      410,
      'Session expired',
    );
  });
});
