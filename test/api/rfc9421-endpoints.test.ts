// The other signed endpoints take RFC 9421 requests as /api/demo/verify does, on real local chains with agents
// registered through the mock identity app: the census (POST and the signed GET), the chat (which names the signing
// agent), the demo agent-to-agent answer, both chain-verify relays, and the A2A verify intent, which checks a request
// carried in a data part (RFC 9421 with the absolute URL it was signed for, or x-svc-agent-*).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, encodePacked, type Hex, hexToBytes, keccak256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoVerifierGateway } from '../../src/chain/demo-verifier-gateway.js';
import { verifySignedResponse } from '../../src/client/index.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import { legacyDataOf, rpc } from '../support/a2a.js';
import { type TestApp, testApp } from '../support/app.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, newDocument, provisionTestnetDemoAgent, type TestNetworks } from '../support/registration-flow.js';
import { profileOptions, type Rfc9421Send, rfc9421Headers, sendWith, TESTNET_CHAIN_ID, urlAt } from '../support/rfc9421.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';
import { step } from '../support/slow-steps.js';

const LOOPBACK_ONLY = 'without PUBLIC_URL or SIGNATURE_AUTHORITIES this service accepts loopback names only (localhost, 127.0.0.1, [::1])';

describe('RFC 9421 requests at every signed endpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rfc9421-endpoints-'));
  let networks: TestNetworks;
  let q: QueryTestApp;
  let chatApp: TestApp;
  let secp: RegisteredSigner;
  let ed: RegisteredSigner;
  let demoAgentAddress: `0x${string}`;
  let verifier: DemoVerifierGateway;
  let ed25519Verifier: DemoVerifierGateway;

  /** `agent` signs the request as its profile asks and sends it to `app`. */
  const send = async (agent: RegisteredSigner, target: Rfc9421Send, app = q.app) =>
    sendWith(app, await rfc9421Headers(agent.signer, target, profileOptions(agent)), target);

  beforeAll(async () => {
    networks = await step('deploy the contracts', deployTestNetworks);
    const demo = await step('register the demo agent', () => provisionTestnetDemoAgent(networks, dir));
    demoAgentAddress = demo.account.address;
    const system = networks.testnet;
    const relayer = await system.newWallet();
    verifier = new DemoVerifierGateway(system.client, system.deployment.contracts.demoVerifier, relayer);
    ed25519Verifier = new DemoVerifierGateway(system.client, system.deployment.contracts.demoVerifierEd25519 as Hex, relayer, 'ed25519');
    q = await step('start the service', () =>
      queryTestApp(networks, {
        demoAgents: { testnet: demo.account },
        demoVerifiers: { testnet: verifier },
        demoVerifiersEd25519: { testnet: ed25519Verifier },
        a2a: true,
      }),
    );
    // the chat's built-in agent, on a second instance
    chatApp = testApp(networks.chains);
    const disclosures = { nationality: true, minimumAge: 18, ofac: true } as const;
    secp = await step('register the secp256k1 agent', () =>
      registeredSigner(q.app, networks, { mode: 'wallet-free', disclosures, document: newDocument({ nationality: 'DEU' }) }),
    );
    ed = await step('register the Ed25519 agent', () =>
      registeredSigner(q.app, networks, { mode: 'ed25519', disclosures, document: newDocument({ nationality: 'FRA' }) }),
    );
    await step('sync the follower', () => q.services.queries.syncNow());
  });

  afterAll(async () => {
    // after a setup that failed part way, stop what it started
    await q?.stop();
    await chatApp?.services.queries.stop();
    chatApp?.services.watcher.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/api/demo/census: both profiles contribute, and a signed GET reads the aggregate', async () => {
    const path = '/api/demo/census?network=testnet';
    for (const [agent, nationality] of [
      [secp, 'DEU'],
      [ed, 'FRA'],
    ] as const) {
      const res = await send(agent, { path, body: '{}' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ recorded: true, yourEntry: { nationality, olderThan: 18, ofac: [true, true, true] } });
    }
    for (const agent of [secp, ed]) {
      const res = await send(agent, { method: 'GET', path });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ totalAgents: 2, verifiedOver18: 2, ofacClear: 2 });
    }
  });

  it('/api/demo/chat names the agent that signed', async () => {
    const path = '/api/demo/chat?network=testnet';
    for (const agent of [secp, ed]) {
      const body = JSON.stringify({ query: `verify agent ${agent.key.agentId}`, session_id: `rfc9421-${agent.key.agentId}` });
      const res = await send(agent, { path, body }, chatApp.app);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ agent: agent.key.agentAddress, data: { agentId: agent.key.agentId, isVerified: true } });
      expect(res.body.reply).toMatch(new RegExp(`^Hello agent #${agent.key.agentId} `));
    }
    // a signature that does not verify is refused, not taken for an anonymous caller
    const body = JSON.stringify({ query: 'help' });
    const elsewhere = await sendWith(chatApp.app, await rfc9421Headers(ed.signer, { path, body, host: 'other.example' }, profileOptions(ed)), {
      path,
      body,
      host: 'other.example',
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toEqual({ error: `Signed for another host (other.example): ${LOOPBACK_ONLY}` });
  });

  it('/api/demo/agent-to-agent answers the verified caller and signs its answer', async () => {
    const path = '/api/demo/agent-to-agent?network=testnet';
    for (const agent of [secp, ed]) {
      const res = await send(agent, { path, body: '{"hi":"demo"}' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        verified: true,
        demoAgent: { address: demoAgentAddress, verified: true },
        callerAgent: { address: agent.key.agentAddress, agentId: String(agent.key.agentId), verified: true },
        sameHuman: false,
      });
      const signer = await verifySignedResponse(
        { headers: res.headers as Record<string, string> },
        { method: 'POST', url: path, body: res.text },
        { expected: demoAgentAddress },
      );
      expect(signer.agentAddress).toBe(demoAgentAddress);
    }
  });

  it('/api/demo/chain-verify and chain-verify-ed25519 relay the meta-transaction of an RFC 9421 caller', async () => {
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 300);
    const account = privateKeyToAccount(secp.key.privateKey);
    const secpKey = addressAgentKey(account.address);
    const secpNonce = await verifier.nonceOf(secpKey);
    const eip712Signature = await account.signTypedData({
      domain: { name: 'AgentDemoVerifier', version: '1', chainId: TESTNET_CHAIN_ID, verifyingContract: verifier.address },
      types: {
        MetaVerify: [
          { name: 'agentKey', type: 'bytes32' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'MetaVerify',
      message: { agentKey: secpKey, nonce: secpNonce, deadline },
    });
    const edKey = ed.key.publicKey as Hex;
    const edNonce = await ed25519Verifier.nonceOf(edKey);
    const message = keccak256(encodePacked(['bytes32', 'uint256', 'uint256'], [edKey, edNonce, deadline]));
    const relays: [RegisteredSigner, string, object][] = [
      [secp, '/api/demo/chain-verify?network=testnet', { agentKey: secpKey, nonce: String(secpNonce), deadline: Number(deadline), eip712Signature }],
      [
        ed,
        '/api/demo/chain-verify-ed25519?network=testnet',
        {
          agentKey: edKey,
          nonce: String(edNonce),
          deadline: Number(deadline),
          eip712Signature: bytesToHex(ed25519.sign(hexToBytes(message), hexToBytes(ed.key.privateKey))),
        },
      ],
    ];
    for (const [agent, path, metaTx] of relays) {
      const res = await send(agent, { path, body: JSON.stringify(metaTx) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), agentId: String(agent.key.agentId) });
    }
  });

  describe('the A2A verify intent', () => {
    const URL_PATH = '/orders?id=1';
    const BODY = '{"order":1}';

    /** The verify intent's answer to a signed request in a data part: its v0.3 task state and data. */
    const verify = async (signedRequest: object) => {
      const res = await rpc(q.app, 'message/send', {
        message: {
          kind: 'message',
          messageId: crypto.randomUUID(),
          role: 'user',
          parts: [{ kind: 'data', data: { intent: 'verify', network: 'testnet', signedRequest } }],
        },
      });
      expect(res.status).toBe(200);
      return { state: res.body.result.status.state as string, data: legacyDataOf(res.body.result) };
    };

    it('accepts an RFC 9421 request of either profile carried with its absolute URL, once', async () => {
      for (const [agent, scheme] of [
        [secp, 'erc8128'],
        [ed, 'web-bot-auth'],
      ] as const) {
        const headers = await rfc9421Headers(agent.signer, { path: URL_PATH, body: BODY }, profileOptions(agent));
        const signedRequest = { headers, method: 'POST', url: urlAt(URL_PATH), body: BODY };
        const first = await verify(signedRequest);
        expect(first.state, JSON.stringify(first.data)).toBe('completed');
        expect(first.data).toMatchObject({
          valid: true,
          scheme,
          agentId: String(agent.key.agentId),
          agentAddress: agent.key.agentAddress,
          keyType: agent.signer.type,
        });
        expect(await verify(signedRequest)).toEqual({
          state: 'failed',
          data: expect.objectContaining({ status: 409, error: 'Replay detected: this nonce was used before; sign with a fresh one' }),
        });
      }
    });

    it('accepts an x-svc-agent-* request as before', async () => {
      for (const agent of [secp, ed]) {
        const headers = await signedHeaders(agent.signer, { method: 'POST', url: URL_PATH, body: BODY });
        const answer = await verify({ headers, method: 'POST', url: URL_PATH, body: BODY });
        expect(answer.state).toBe('completed');
        expect(answer.data).toMatchObject({ valid: true, scheme: 'x-svc-agent', agentId: String(agent.key.agentId) });
      }
    });

    it('asks for the absolute URL of an RFC 9421 request given by its path (400), refuses one signed for another host or with a changed body (403)', async () => {
      const headers = await rfc9421Headers(ed.signer, { path: URL_PATH, body: BODY }, profileOptions(ed));
      // a value the caller can correct in its next turn, as every 400 of an intent
      expect(await verify({ headers, method: 'POST', url: URL_PATH, body: BODY })).toEqual({
        state: 'input-required',
        data: expect.objectContaining({
          status: 400,
          error: 'An RFC 9421 signature signs the authority: send the request with a Host header (over A2A: give the absolute URL it was signed for)',
        }),
      });
      const elsewhere = await rfc9421Headers(ed.signer, { path: URL_PATH, body: BODY, host: 'other.example' }, profileOptions(ed));
      expect(await verify({ headers: elsewhere, method: 'POST', url: urlAt(URL_PATH, 'other.example'), body: BODY })).toEqual({
        state: 'failed',
        data: expect.objectContaining({ status: 403, error: `Signed for another host (other.example): ${LOOPBACK_ONLY}` }),
      });
      expect(await verify({ headers, method: 'POST', url: urlAt(URL_PATH), body: '{}' })).toEqual({
        state: 'failed',
        data: expect.objectContaining({ status: 403, error: expect.stringMatching(/^Content-Digest sha-256 does not match the body/) }),
      });
    });
  });
});
