// POST /api/demo/chain-verify on a real local chain: a registered agent signs the request and its EIP-712
// meta-transaction, the relayer mines it at the demo verifier contract; the contract's refusals are 400s that
// say why, the fourth relay for one human within the hour is a 429 with Retry-After, and the GET description
// names the domain and the agent's nonce.

import { ed25519 } from '@noble/curves/ed25519.js';
import request from 'supertest';
import { bytesToHex, encodePacked, type Hex, hexToBytes, keccak256, type LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainWallet } from '../../src/chain/clients.js';
import { DemoVerifierGateway } from '../../src/chain/demo-verifier-gateway.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import { fund } from '../../src/devnet/embedded.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { registeredSigner } from '../support/signers.js';

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
  let ed25519Verifier: DemoVerifierGateway;
  let agent: RegisteredAgent;
  let relayer: ChainWallet;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    const system = networks.testnet;
    relayer = await system.newWallet();
    verifier = new DemoVerifierGateway(system.client, system.deployment.contracts.demoVerifier, relayer);
    ed25519Verifier = new DemoVerifierGateway(system.client, system.deployment.contracts.demoVerifierEd25519 as Hex, relayer, 'ed25519');
    q = await queryTestApp(networks, { demoVerifiers: { testnet: verifier }, demoVerifiersEd25519: { testnet: ed25519Verifier } });
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

  it("relays an Ed25519 agent's meta-transaction (agentKey = the raw key, as in the registry)", async () => {
    const { key } = await registeredSigner(q.app, networks, { mode: 'ed25519' });
    await q.services.queries.syncNow();
    const seed = hexToBytes(key.privateKey);
    const agentKey = key.publicKey as Hex;
    const nonce = await ed25519Verifier.nonceOf(agentKey);
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 300);
    const message = keccak256(encodePacked(['bytes32', 'uint256', 'uint256'], [agentKey, nonce, deadline]));
    const body = JSON.stringify({
      agentKey,
      nonce: nonce.toString(),
      deadline: Number(deadline),
      eip712Signature: bytesToHex(ed25519.sign(hexToBytes(message), seed)),
    });
    const path = '/api/demo/chain-verify-ed25519?network=testnet';
    const headers = await signedHeaders({ type: 'ed25519', seed }, { method: 'POST', url: path, body });
    const res = await request(q.app).post(path).set(headers).set('content-type', 'application/json').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ verificationCount: '1', rateLimitRemaining: 2 });

    const forged = JSON.stringify({
      agentKey,
      nonce: (nonce + 1n).toString(),
      deadline: Number(deadline),
      eip712Signature: bytesToHex(ed25519.sign(hexToBytes(message), seed)),
    });
    const again = await request(q.app)
      .post(path)
      .set(await signedHeaders({ type: 'ed25519', seed }, { method: 'POST', url: path, body: forged }))
      .set('content-type', 'application/json')
      .send(forged);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/Ed25519 signature invalid/);
  });

  it('copies of one meta-transaction sent at once: one is relayed, the others are 409 or refused by the contract, and one use is counted', async () => {
    const other = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const body = await metaTx(other.agent, other.agentKey, await verifier.nonceOf(other.agentKey));
    const signed = [];
    for (let i = 0; i < 4; i++) {
      // four signed requests (each its own timestamp, so none is a replay of another) carrying the same meta-transaction
      signed.push(await signedHeaders({ type: 'secp256k1', account: other.agent }, { method: 'POST', url: PATH, body: JSON.stringify(body) }));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(
      signed.map((headers) => request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(JSON.stringify(body))),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(
      statuses.every((status) => status === 200 || status === 409 || status === 400),
      JSON.stringify(answers.map((a) => a.body)),
    ).toBe(true);
    expect(answers.find((res) => res.status === 200)?.body.rateLimitRemaining).toBe(2);
    const next = await relay(await metaTx(other.agent, other.agentKey, await verifier.nonceOf(other.agentKey)), other.agent);
    expect(next.status).toBe(200);
    expect(next.body.rateLimitRemaining).toBe(1);
  });

  it("a relay the chain does not take uses none of the human's budget", async () => {
    const other = await registerLinked(networks.testnet);
    await q.services.queries.syncNow();
    const client = networks.testnet.client;
    const balance = await client.getBalance({ address: relayer.account.address });
    // the relayer cannot pay: the transaction is refused before it is sent
    await fund(client, relayer.account.address, 0n);
    const failed = await relay(await metaTx(other.agent, other.agentKey, await verifier.nonceOf(other.agentKey)), other.agent);
    await fund(client, relayer.account.address, balance);
    expect(failed.status).toBe(500);
    const relayed = await relay(await metaTx(other.agent, other.agentKey, await verifier.nonceOf(other.agentKey)), other.agent);
    expect(relayed.status, JSON.stringify(relayed.body)).toBe(200);
    expect(relayed.body.rateLimitRemaining).toBe(2);
  });
});
