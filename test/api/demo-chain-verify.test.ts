// POST /api/demo/chain-verify on a real local chain: a registered agent signs the request and its EIP-712
// meta-transaction, the relayer mines it at the demo verifier contract; the contract's refusals are 400s that
// say why, the fourth relay for one human within the hour is a 429 with Retry-After, and the GET description
// names the domain and the agent's nonce.
import request from 'supertest';
import type { Hex, LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoVerifierGateway } from '../../src/chain/demo-verifier-gateway.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const PATH = '/api/demo/chain-verify?network=testnet';
const TYPES = {
  MetaVerify: [
    { name: 'agentKey', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

describe('POST /api/demo/chain-verify', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let verifier: DemoVerifierGateway;
  let agent: RegisteredAgent;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    const system = networks.testnet;
    verifier = new DemoVerifierGateway(system.client, system.deployment.contracts.demoVerifier, await system.newWallet());
    q = await queryTestApp(networks, { demoVerifiers: { testnet: verifier } });
    agent = await registerLinked(system);
    await q.services.queries.syncNow();
  });

  afterAll(() => q.stop());

  const metaTx = async (signer: LocalAccount, agentKey: Hex, nonce: bigint, deadline = BigInt(Math.floor(Date.now() / 1000) + 300)) => ({
    agentKey,
    nonce: nonce.toString(),
    deadline: Number(deadline),
    eip712Signature: await signer.signTypedData({
      domain: { name: 'AgentDemoVerifier', version: '1', chainId: 11142220, verifyingContract: verifier.address },
      types: TYPES,
      primaryType: 'MetaVerify',
      message: { agentKey, nonce, deadline },
    }),
  });
  const relay = async (body: object, signer: LocalAccount = agent.agent) => {
    const text = JSON.stringify(body);
    const headers = await signedHeaders({ type: 'secp256k1', account: signer }, { method: 'POST', url: PATH, body: text });
    return request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(text);
  };

  it('relays a meta-transaction and counts it; the fourth within the hour for one human is refused', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await relay(await metaTx(agent.agent, agent.agentKey, await verifier.nonceOf(agent.agentKey)));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        agentId: String(agent.agentId),
        verificationCount: String(i + 1),
        rateLimitRemaining: 2 - i,
      });
    }
    const fourth = await relay(await metaTx(agent.agent, agent.agentKey, await verifier.nonceOf(agent.agentKey)));
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
  });

  it("names the contract's refusals, and refuses unsigned requests and bad bodies", async () => {
    const other = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const nonce = await verifier.nonceOf(other.agentKey);
    const wrongSigner = await relay(await metaTx(agent.agent, other.agentKey, nonce), other.agent);
    expect(wrongSigner.status).toBe(400);
    expect(wrongSigner.body.error).toMatch(/EIP-712 signature invalid/);
    const expired = await relay(await metaTx(other.agent, other.agentKey, nonce, 1n), other.agent);
    expect(expired.body.error).toMatch(/deadline expired/);
    const badNonce = await relay(await metaTx(other.agent, other.agentKey, nonce + 5n), other.agent);
    expect(badNonce.body.error).toMatch(/invalid nonce/);
    expect((await relay({ agentKey: 'nope' }, other.agent)).body.error).toMatch(/^Invalid request body/);
    expect((await request(q.app).post(PATH).send({})).status).toBe(401);
  });

  it('GET describes the EIP-712 domain and the nonce of an agent key', async () => {
    const res = await request(q.app).get('/api/demo/chain-verify').query({ network: 'testnet', agentKey: agent.agentKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      eip712: { domain: { name: 'AgentDemoVerifier', chainId: 11142220, verifyingContract: verifier.address }, primaryType: 'MetaVerify' },
      agentKey: agent.agentKey,
      nonce: '3',
    });
    // no relayer on mainnet here: POST is refused, GET still describes the contract
    expect((await request(q.app).get('/api/demo/chain-verify').query({ network: 'mainnet' })).status).toBe(200);
    const text = JSON.stringify(await metaTx(agent.agent, agent.agentKey, 0n));
    const headers = await signedHeaders(
      { type: 'secp256k1', account: agent.agent },
      { method: 'POST', url: '/api/demo/chain-verify?network=mainnet', body: text },
    );
    const refused = await request(q.app).post('/api/demo/chain-verify?network=mainnet').set(headers).send(text);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/RELAYER_PRIVATE_KEY/);
  });
});
