// POST /api/demo/agent-to-agent on real local chains: the service's demo agent (registered by the mock identity
// app, once) answers a verified agent and signs its answer; the caller checks the signature with the client SDK.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { PrivateKeyAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignedResponse } from '../../src/client/index.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import { registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, provisionTestnetDemoAgent, type TestNetworks } from '../support/registration-flow.js';

const PATH = '/api/demo/agent-to-agent?network=testnet';

describe('POST /api/demo/agent-to-agent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-a2a-'));
  let networks: TestNetworks;
  let demoAgent: PrivateKeyAccount;
  let q: QueryTestApp;

  const provision = () => provisionTestnetDemoAgent(networks, dir);

  beforeAll(async () => {
    networks = await deployTestNetworks();
    const provisioned = await provision();
    expect(provisioned.registeredNow).toBe(true);
    demoAgent = provisioned.account;
    q = await queryTestApp(networks, { demoAgents: { testnet: demoAgent } });
  });

  afterAll(async () => {
    await q.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the demo agent is registered once and kept across restarts', async () => {
    const again = await provision();
    expect(again).toMatchObject({ registeredNow: false });
    expect(again.account.address).toBe(demoAgent.address);
  });

  it("answers a verified agent and signs the answer with the demo agent's key", async () => {
    const caller = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const body = '{"hi":"demo"}';
    const headers = await signedHeaders({ type: 'secp256k1', account: caller.agent }, { method: 'POST', url: PATH, body });
    const res = await request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      verified: true,
      demoAgent: { address: demoAgent.address, verified: true },
      callerAgent: { address: caller.agent.address, agentId: String(caller.agentId), verified: true },
      sameHuman: false,
      verificationCount: 1,
      uniqueAgents: 1,
    });
    const signer = await verifySignedResponse(
      { headers: res.headers as Record<string, string> },
      { method: 'POST', url: PATH, body: res.text },
      { expected: demoAgent.address },
    );
    expect(signer.agentAddress).toBe(demoAgent.address);
    // the caller's request is good once
    expect((await request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(body)).status).toBe(409);
  });

  it('503 naming the setting on a network without a demo agent, 401 without headers', async () => {
    const mainnet = await request(q.app).post('/api/demo/agent-to-agent?network=mainnet').send({});
    expect(mainnet.status).toBe(503);
    expect(mainnet.body.error).toMatch(/DEMO_AGENT_PRIVATE_KEY_MAINNET/);
    expect((await request(q.app).post(PATH).send({})).status).toBe(401);
  });
});
