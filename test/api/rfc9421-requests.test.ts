// POST /api/demo/verify with RFC 9421 signatures on real local chains, agents registered through the mock identity
// app: an ERC-8128 request of a secp256k1 agent and a Web Bot Auth request of an Ed25519 agent (ours, and one made
// by Cloudflare's web-bot-auth) are accepted; every refusal gives its status and message (another host, a stale or
// future window, a changed body, a missing component, a malformed field, an unknown agent); a nonce is spent once,
// across endpoints and after a restart over the same store; the x-svc-agent-* scheme works beside it; and a warm
// verification costs no RPC round trip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import request from 'supertest';
import { bytesToHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { NETWORKS } from '../../src/core/networks.js';
import type { Rfc9421SignOptions } from '../../src/core/rfc9421-sign.js';
import { AGENT_HEADERS, type RequestSigner, signedHeaders } from '../../src/core/signed-request.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { newAccount } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { cloudflareHeaders, directoryOf, profileOptions, type Rfc9421Send, rfc9421Headers, sendWith, TESTNET_CHAIN_ID } from '../support/rfc9421.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';

const PATH = '/api/demo/verify?network=testnet';
const BODY = '{"hello":"registry"}';
const LOOPBACK_ONLY = 'without PUBLIC_URL or SIGNATURE_AUTHORITIES this service accepts loopback names only (localhost, 127.0.0.1, [::1])';
const REPLAY = 'Replay detected: this nonce was used before; sign with a fresh one';

describe('POST /api/demo/verify signed with RFC 9421', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rfc9421-requests-'));
  let networks: TestNetworks;
  let store: SqliteStore;
  let q: QueryTestApp;
  let secp: RegisteredSigner;
  let ed: RegisteredSigner;
  let otherEd: RegisteredSigner;

  const nowS = () => Math.floor(Date.now() / 1000);
  const target = (overrides: Partial<Rfc9421Send> = {}): Rfc9421Send => ({ path: PATH, body: BODY, ...overrides });

  /** `agent` signs the request as its profile asks (options change one thing) and sends it; the headers and the answer. */
  const send = async (
    agent: Pick<RegisteredSigner, 'signer' | 'key'>,
    options: Rfc9421SignOptions & { signedUrl?: string; signedBody?: string } = {},
    overrides: Partial<Rfc9421Send> = {},
  ) => {
    const headers = await rfc9421Headers(agent.signer, target(overrides), { ...profileOptions(agent), ...options });
    return { headers, res: await sendWith(q.app, headers, target(overrides)) };
  };

  beforeAll(async () => {
    networks = await deployTestNetworks();
    store = new SqliteStore(join(dir, 'store.sqlite'));
    // the log follower polls only when told to (syncNow), so RPC round trips can be counted exactly
    q = await queryTestApp(networks, { store, eventPollIntervalMs: 3_600_000 });
    secp = await registeredSigner(q.app, networks, { mode: 'wallet-free' });
    ed = await registeredSigner(q.app, networks, { mode: 'ed25519' });
    otherEd = await registeredSigner(q.app, networks, { mode: 'ed25519' });
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('accepted', () => {
    it('an ERC-8128 request of a registered secp256k1 agent, its keyid naming the testnet', async () => {
      const { headers, res } = await send(secp);
      expect(headers['signature-input']).toContain(`keyid="erc8128:${TESTNET_CHAIN_ID}:${secp.key.agentAddress.toLowerCase()}"`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        valid: true,
        network: 'testnet',
        keyType: 'secp256k1',
        agentAddress: secp.key.agentAddress,
        agentKey: addressAgentKey(secp.key.agentAddress as `0x${string}`),
        agentId: String(secp.key.agentId),
        agentCount: '1',
      });
    });

    it('403 for an ERC-8128 keyid naming the other chain', async () => {
      const { res } = await send(secp, { chainId: NETWORKS.mainnet.chainId });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: `The keyid names chain ${NETWORKS.mainnet.chainId}: this service accepts chain ids ${TESTNET_CHAIN_ID}` });
    });

    it('a Web Bot Auth request of a registered Ed25519 agent whose Signature-Agent is its key directory here', async () => {
      const { headers, res } = await send(ed);
      expect(headers['signature-agent']).toBe(`sig1="http://localhost/api/agent/key-directory/${TESTNET_CHAIN_ID}/${ed.key.agentId}"`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        valid: true,
        keyType: 'ed25519',
        agentKey: ed.key.publicKey,
        agentAddress: ed.key.agentAddress,
        agentId: String(ed.key.agentId),
      });
    });

    it('a request Cloudflare’s web-bot-auth signs for the Ed25519 agent, with our covered components', async () => {
      const headers = await cloudflareHeaders(ed, target());
      expect(headers['signature-input']).toMatch(/tag="web-bot-auth"/);
      const res = await sendWith(q.app, headers, target());
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ keyType: 'ed25519', agentKey: ed.key.publicKey, agentId: String(ed.key.agentId) });
    });

    it('the x-svc-agent-* scheme, unchanged, on the same endpoint', async () => {
      for (const { signer, key } of [secp, ed]) {
        const headers = await signedHeaders(signer, { method: 'POST', url: PATH, body: BODY });
        const post = () => request(q.app).post(PATH).set(headers).set('content-type', 'application/json').send(BODY);
        const res = await post();
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ valid: true, agentAddress: headers[AGENT_HEADERS.address], agentId: String(key.agentId) });
        expect((await post()).body).toEqual({ error: 'Replay detected' });
      }
    });
  });

  describe('refused', () => {
    it('403 for a signature made for another host, whether sent with its Host or ours', async () => {
      for (const agent of [secp, ed]) {
        const theirs = await send(agent, {}, { host: 'other.example' });
        expect(theirs.res.status).toBe(403);
        expect(theirs.res.body).toEqual({ error: `Signed for another host (other.example): ${LOOPBACK_ONLY}` });
        const ours = await send(agent, { signedUrl: `http://other.example${PATH}` });
        expect(ours.res.status).toBe(403);
        expect(ours.res.body.error).toMatch(/^Invalid signature: /);
      }
    });

    it('403 for an expired signature (a stale created) and for one created in the future', async () => {
      for (const agent of [secp, ed]) {
        const created = nowS() - 400;
        const stale = await send(agent, { created, expiresInS: 300 });
        expect(stale.res.status).toBe(403);
        expect(stale.res.body).toEqual({ error: `The signature expired at ${created + 300} (unix seconds): sign the request again` });
        const ahead = nowS() + 120;
        const future = await send(agent, { created: ahead });
        expect(future.res.status).toBe(403);
        expect(future.res.body).toEqual({ error: `created is in the future (${ahead}): check the signer's clock` });
      }
    });

    it('403 for a changed body: its Content-Digest no longer matches', async () => {
      for (const agent of [secp, ed]) {
        const { res } = await send(agent, { signedBody: '{"hello":"someone else"}' });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          error: 'Content-Digest sha-256 does not match the body: the body was changed, or the digest was not taken over its exact bytes',
        });
      }
    });

    it('403 for a signature that leaves out covered components: web-bot-auth’s defaults alone', async () => {
      const headers = await cloudflareHeaders(ed, target(), null);
      expect(headers['signature-input']).toMatch(/^sig1=\("@authority" "signature-agent"\)/);
      const res = await sendWith(q.app, headers, target());
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/^The signature does not cover @method, @path, @query, content-digest: sign @method, @authority, @path, @query/);
    });

    it('400 for a malformed Signature-Input, or a Signature of no Signature-Input label', async () => {
      const headers = await rfc9421Headers(ed.signer, target(), profileOptions(ed));
      const broken = await sendWith(q.app, { ...headers, 'signature-input': 'sig1=("@method"' }, target());
      expect(broken.status).toBe(400);
      expect(broken.body.error).toMatch(/^Signature-Input is not a structured dictionary \(RFC 9651\): /);
      const unpaired = await sendWith(q.app, { ...headers, signature: headers['signature']!.replace('sig1=', 'sig2=') }, target());
      expect(unpaired.status).toBe(400);
      expect(unpaired.body).toEqual({ error: 'Signature sig2 has no Signature-Input of the same label' });
    });

    it('403 for an unknown agent: an unregistered key, or a Signature-Agent naming another agent, a secp256k1 one, or none here', async () => {
      const stranger = await send({ signer: { type: 'secp256k1', account: newAccount() }, key: secp.key });
      expect(stranger.res.status).toBe(403);
      expect(stranger.res.body.error).toMatch(
        /^Agent not verified on-chain: no agent is registered with this key on testnet \(chain 11142220\); if it is registered on the other network, name it/,
      );

      const unregistered: RequestSigner = { type: 'ed25519', seed: bytesToHex(ed25519.utils.randomSecretKey()) };
      const notTheirs = (id: number) => `Unknown agent: the keyid is not the JWK thumbprint of agent ${id}'s registered key`;
      const edCases: [string, RequestSigner, string | undefined, string][] = [
        ['an unregistered key naming an agent’s directory', unregistered, directoryOf(ed.key.agentId), notTheirs(ed.key.agentId)],
        ['another Ed25519 agent’s directory', ed.signer, directoryOf(otherEd.key.agentId), notTheirs(otherEd.key.agentId)],
        [
          'a secp256k1 agent',
          ed.signer,
          directoryOf(secp.key.agentId),
          `Unknown agent: no Ed25519 agent ${secp.key.agentId} is registered on testnet`,
        ],
        ['an agent id never registered', ed.signer, directoryOf(987_654), 'Unknown agent: no Ed25519 agent 987654 is registered on testnet'],
        [
          'a directory on another host',
          ed.signer,
          directoryOf(ed.key.agentId, 'other.example'),
          `Unknown agent: Signature-Agent must name the agent's key directory here (/api/agent/key-directory/{chainId}/{agentId}, chainId ${TESTNET_CHAIN_ID})`,
        ],
        [
          'the agent’s directory on the other chain',
          ed.signer,
          directoryOf(ed.key.agentId, 'localhost', NETWORKS.mainnet.chainId),
          `Unknown agent: Signature-Agent must name the agent's key directory here (/api/agent/key-directory/{chainId}/{agentId}, chainId ${TESTNET_CHAIN_ID})`,
        ],
        [
          'no Signature-Agent',
          ed.signer,
          undefined,
          `Web Bot Auth: Signature-Agent must name the agent's key directory here (/api/agent/key-directory/{chainId}/{agentId}, chainId ${TESTNET_CHAIN_ID})`,
        ],
      ];
      for (const [name, signer, signatureAgent, error] of edCases) {
        const headers = await rfc9421Headers(signer, target(), signatureAgent === undefined ? {} : { signatureAgent });
        const res = await sendWith(q.app, headers, target());
        expect(res.status, name).toBe(403);
        expect(res.body, name).toEqual({ error });
      }
    });
  });

  describe('a nonce is spent once', () => {
    it('409 for the same request again, and for another request of the same signer with that nonce', async () => {
      for (const agent of [secp, ed]) {
        const nonce = `once-${agent.key.agentId}`;
        const first = await send(agent, { nonce });
        expect(first.res.status).toBe(200);
        const again = await sendWith(q.app, first.headers, target());
        expect(again.status).toBe(409);
        expect(again.body).toEqual({ error: REPLAY });
        const otherBody = await send(agent, { nonce }, { body: '{"hello":"again"}' });
        expect(otherBody.res.status).toBe(409);
        expect(otherBody.res.body).toEqual({ error: REPLAY });
      }
    });

    it('another signer may use the same nonce', async () => {
      expect((await send(secp, { nonce: 'shared-nonce' })).res.status).toBe(200);
      expect((await send(ed, { nonce: 'shared-nonce' })).res.status).toBe(200);
    });

    it('409 for a nonce spent at another endpoint (census)', async () => {
      for (const agent of [secp, ed]) {
        const nonce = `across-${agent.key.agentId}`;
        const census = await send(agent, { nonce }, { path: '/api/demo/census?network=testnet', body: '{}' });
        expect(census.res.status, JSON.stringify(census.res.body)).toBe(200);
        const verify = await send(agent, { nonce });
        expect(verify.res.status).toBe(409);
        expect(verify.res.body).toEqual({ error: REPLAY });
      }
    });

    it('409 once the service restarted over the same store', async () => {
      const spent = await Promise.all([secp, ed].map((agent) => send(agent)));
      for (const { res } of spent) expect(res.status).toBe(200);
      // another service process over the same sqlite file
      const restarted = testApp(new ChainGateway({ mainnet: networks.mainnet.gateway, testnet: networks.testnet.gateway }), { store });
      try {
        for (const { headers } of spent) {
          const again = await sendWith(restarted.app, headers, target());
          expect(again.status).toBe(409);
          expect(again.body).toEqual({ error: REPLAY });
        }
      } finally {
        await restarted.services.queries.stop();
      }
    });
  });

  it('a warm verification costs no RPC round trip, for either profile', async () => {
    for (const agent of [secp, ed]) {
      expect((await send(agent)).res.status).toBe(200); // warm
      q.resetRpc();
      expect((await send(agent)).res.status).toBe(200);
      expect(q.rpc).toEqual({ testnet: 0, mainnet: 0 });
    }
    const cloudflare = await cloudflareHeaders(ed, target());
    q.resetRpc();
    expect((await sendWith(q.app, cloudflare, target())).status).toBe(200);
    expect(q.rpc).toEqual({ testnet: 0, mainnet: 0 });
  });
});
