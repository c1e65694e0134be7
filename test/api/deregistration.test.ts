// Deregistration sessions end to end over real HTTP and real chains: an ECDSA and an Ed25519 agent are
// removed by the human who registered them (the identity app works from the deep link alone); another
// human is refused (NotAgentOwner); plus the token and input errors.
import type { Express } from 'express';
import request from 'supertest';
import type { Address } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { RegistryGateway } from '../../src/chain/registry-gateway.js';
import { selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { registrationQrSchema } from '../../src/http/schemas/registration.js';
import { deregistrationSessionSchema, deregistrationStatusSchema } from '../../src/http/schemas/sessions.js';
import { expectSubmitted, newAccount } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, callbackTokenOf, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
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

const TESTNET = 11142220;

describe('deregistration sessions', () => {
  let net: TestNetworks;

  beforeAll(async () => {
    net = await deployTestNetworks();
  });

  const newApp = (): Express => testApp(net.chains).app;

  async function deregister(app: Express, body: Body): Promise<Body> {
    const res = await request(app).post('/api/agent/deregister').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.body as Body;
  }

  const status = (app: Express, token: string) => request(app).get('/api/agent/deregister/status').query({ token });

  async function removes(agent: ApiAgent, app: Express): Promise<void> {
    const session = await deregister(app, { network: 'testnet', agentAddress: agent.agentAddress });
    expect(session).toMatchObject({
      stage: 'qr-ready',
      agentId: agent.agentId,
      agentAddress: agent.agentAddress,
      network: 'testnet',
      configIndex: 0,
    });
    expectConforms(deregistrationSessionSchema, session);
    const qr = await request(app).get('/api/agent/deregister/qr').query({ token: session['sessionToken'] });
    expectConforms(registrationQrSchema, qr.body);
    expect(qr.body.deepLink).toMatch(/^selfapp:\/\/verify\?/);
    expectConforms(deregistrationStatusSchema, (await status(app, session['sessionToken'] as string)).body);
    const selfApp = selfAppFromDeepLink(session['deepLink'] as string);
    expect(selfApp.userId).toBe(agent.owner.slice(2).toLowerCase());
    expect(selfApp.userDefinedData).toBe(`X0${agent.agentAddress.slice(2).toLowerCase()}`);
    expect(selfApp.deeplinkCallback).toMatch(/\/api\/agent\/deregister\/callback\?token=/);

    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: agent.document });
    expectSubmitted(proof);
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });

    const res = await status(app, session['sessionToken'] as string);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      stage: 'completed',
      agentId: agent.agentId,
      agentAddress: agent.agentAddress,
      network: 'testnet',
      txHash: proof.txHash,
    });
    expect(res.body.sessionToken).not.toBe(session['sessionToken']);
    expectConforms(deregistrationStatusSchema, res.body);

    expect(await net.testnet.gateway.registry.ownerOf(BigInt(agent.agentId))).toBeUndefined();
    expect((await request(app).get(`/api/agent/info/${TESTNET}/${agent.agentId}`)).status).toBe(404);
    // Once completed, the QR is gone and the agent is unknown.
    expect((await request(app).get('/api/agent/deregister/qr').query({ token: res.body.sessionToken })).status).toBe(409);
    expectError(
      await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: agent.agentAddress }),
      404,
      `Agent ${agent.agentAddress} is not registered on testnet`,
    );
  }

  it('an ECDSA (linked) agent: the human proves again, the NFT is burned', async () => {
    const app = newApp();
    await removes(await registerAgent(app, net, 'linked'), app);
  });

  it('an Ed25519 agent, named by its derived address: removed too', async () => {
    const app = newApp();
    await removes(await registerAgent(app, net, 'ed25519'), app);
  });

  it('config digit from the disclosures; the agent address in any case', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked', { disclosures: { minimumAge: 18 } });
    const session = await deregister(app, { network: 'testnet', agentAddress: agent.agentAddress.toLowerCase(), disclosures: { minimumAge: 18 } });
    expect(session['configIndex']).toBe(1);
    const selfApp = selfAppFromDeepLink(session['deepLink'] as string);
    expect(selfApp.userDefinedData.slice(0, 2)).toBe('X1');
    expect(selfApp.disclosures).toEqual({ minimumAge: 18 });
    const { callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: agent.document });
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });
  });

  it('another human: failed with NotAgentOwner, the agent stays', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'ed25519');
    const session = await deregister(app, { network: 'testnet', agentAddress: agent.agentAddress });
    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: newDocument() });
    expect(proof.status).toBe('reverted');
    expect(callback?.body).toEqual({ received: true, stage: 'failed' });
    const res = await status(app, session['sessionToken'] as string);
    expect(res.body.stage).toBe('failed');
    expect(res.body.error).toMatch(/NotAgentOwner/);
    expect(await net.testnet.gateway.registry.ownerOf(BigInt(agent.agentId))).toBe(agent.owner);
  });

  it("a registry without ed25519KeyForAddress (Celo's) is not an error: the address is simply not an Ed25519 agent", async () => {
    const { client, deployment } = net.testnet;
    const address = newAccount().address;
    for (const contract of [deployment.contracts.proofProvider, deployment.contracts.hub, address]) {
      expect(await new RegistryGateway(client, contract).ed25519KeyForAddress(address)).toBeUndefined();
    }
    expect(await net.testnet.gateway.registry.ed25519KeyForAddress(address)).toBeUndefined();
  });

  it('unknown agent 404; malformed input 400', async () => {
    const app = newApp();
    const unknown = newAccount().address;
    expectError(
      await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: unknown }),
      404,
      `Agent ${unknown} is not registered on testnet`,
    );
    expectError(await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: '0x1234' }), 400, /agentAddress/);
    expectError(await request(app).post('/api/agent/deregister').send({ network: 'testnet' }), 400, /agentAddress/);
    expectError(await request(app).post('/api/agent/deregister').send({ network: 'moon', agentAddress: unknown }), 400, /network|moon/i);
    expectError(
      await request(app)
        .post('/api/agent/deregister')
        .send({ network: 'testnet', agentAddress: unknown, disclosures: { minimumAge: 17 } }),
      400,
      /minimumAge/,
    );
    expectError(await request(app).post('/api/agent/deregister').send([1]), 400, /JSON object/);
  });

  describe('tokens', () => {
    let agent: ApiAgent;
    const clock = manualClock();
    let app: Express;

    beforeAll(async () => {
      app = testApp(net.chains, { clock: clock.now }).app;
      agent = await registerAgent(app, net, 'linked');
    });

    it('expired (410), tampered (401), another type (400), missing (400); Bearer works', async () => {
      const session = await deregister(app, { network: 'testnet', agentAddress: agent.agentAddress });
      const token = session['sessionToken'] as string;
      const bearer = await request(app).get('/api/agent/deregister/status').set('Authorization', `Bearer ${token}`);
      expect(bearer.status).toBe(200);
      expect(bearer.body.stage).toBe('qr-ready');
      expect((await request(app).get('/api/agent/deregister/qr').query({ token })).status).toBe(200);
      const png = await request(app).get('/api/agent/deregister/qr').query({ token, format: 'png' });
      expect(png.headers['content-type']).toMatch(/image\/png/);

      expectError(await status(app, tampered(token)), 401, 'Invalid session token');
      expectError(await request(app).get('/api/agent/deregister/status'), 400, /Missing session token/);
      const registration = await request(app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
      expectError(await status(app, registration.body.sessionToken as string), 400, 'Token is not for a deregister session');
      expectError(await request(app).get('/api/agent/register/status').query({ token }), 400, 'Token is not for a register session');
      // The callback token only calls the callback.
      expectError(await status(app, callbackTokenOf(session['deepLink'] as string)), 401, 'Invalid session token');

      clock.advance(THIRTY_MINUTES);
      expectError(await status(app, token), 410, 'Session expired');
      expectError(
        await request(app)
          .post('/api/agent/deregister/callback')
          .query({ token: callbackTokenOf(session['deepLink'] as string) })
          .send({ status: 'error', error: 'late' }),
        410,
        'Session expired',
      );
    });
  });

  it('a rejected request: the callback error fails the session', async () => {
    const app = newApp();
    const agent = await registerAgent(app, net, 'linked');
    const session = await deregister(app, { network: 'testnet', agentAddress: agent.agentAddress as Address });
    const res = await request(app)
      .post('/api/agent/deregister/callback')
      .query({ token: callbackTokenOf(session['deepLink'] as string) })
      .send({ status: 'error', error: 'The human declined' });
    expect(res.body).toEqual({ received: true, stage: 'failed' });
    expect((await status(app, session['sessionToken'] as string)).body).toMatchObject({ stage: 'failed', error: 'The human declined' });
  });
});
