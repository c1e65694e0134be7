// The SDK's verifier inside real apps against a real local chain: verifyAgentRequest in a Hono app served by
// @hono/node-server, and requireAgent (built on it) in an Express app. Agents registered through the mock identity
// app sign with the SDK in both schemes: x-svc-agent, RFC 9421 as ERC-8128 (a secp256k1 agent) and as Web Bot Auth
// (an Ed25519 agent, its Signature-Agent naming its key directory); a request signed by Cloudflare's web-bot-auth
// package, an outside implementation, gets in too. Refusals: no signature 401, a malformed Signature-Input 400, a
// signature for another host 403, an unknown agent 403, a replay 409. The chain is reached through a counting
// front: a warm verification makes no RPC round trip.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import type { Address, Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders as cloudflareSign } from 'web-bot-auth';
import { signerFromJWK } from 'web-bot-auth/crypto';
import {
  type AgentVerifierOptions,
  createAgentVerifier,
  ed25519PublicJwk,
  keyDirectoryUrl,
  type RequestSigner,
  requireAgent,
  type SignRequestOptions,
  signingFetch,
  signRequest,
  type VerifiedRequestAgent,
  verifyAgentRequest,
} from '../../src/client/index.js';
import { contentDigest } from '../../src/core/content-digest.js';
import { NETWORKS } from '../../src/core/networks.js';
import { newAccount, type RegisteredEd25519Agent, registerEd25519, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { type RpcCounter, rpcCounter } from '../support/rpc-counter.js';

const CHAIN_ID = NETWORKS.testnet.chainId;
/** Where the agents' key directories are: the registry service, which the verifier never calls (the key is on chain). */
const REGISTRY_SERVICE = 'https://registry.example';
/** The public host of the routes that sit behind a proxy. */
const PUBLIC_HOST = 'api.example';

/** The agent as the apps answer it (bigints as decimal text). */
const shown = (agent: VerifiedRequestAgent | undefined) =>
  agent && {
    scheme: agent.scheme,
    keyType: agent.keyType,
    agentId: String(agent.agentId),
    agentKey: agent.agentKey,
    agentAddress: agent.agentAddress,
    agentCount: String(agent.agentCount),
    nullifier: agent.scheme === 'sd-jwt' ? undefined : String(agent.nullifier),
    strength: agent.strength,
    proofExpiresAt: agent.proofExpiresAt,
    credentials: agent.credentials,
  };

/** One request over node:http, so that the Host header is the test's to choose (fetch sets it from the URL). */
function sendRaw(base: string, spec: { method: string; path: string; host: string; headers: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; body: { error?: string } }>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', ...spec.headers, host: spec.host };
    const req = httpRequest(`${base}${spec.path}`, { method: spec.method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error?: string } }));
    });
    req.on('error', reject);
    req.end(spec.body ?? '');
  });
}

describe('verifyAgentRequest and requireAgent in real apps', () => {
  let system: TestSystem;
  let rpc: RpcCounter;
  let hono: Server;
  let expressServer: Server;
  const bases: Record<'Hono' | 'Express', string> = { Hono: '', Express: '' };
  let secp: { signer: RequestSigner; agentId: bigint; address: Address };
  let ed: RegisteredEd25519Agent & { signer: RequestSigner; directory: string };

  const listening = async (server: Server): Promise<string> => {
    if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    rpc = await rpcCounter(system.rpcUrl);
    const chain = { network: 'testnet', rpcUrl: rpc.url, registry: system.deployment.contracts.registry } as const;

    // Hono: the verifier as middleware, the agent in the context
    const honoOptions: AgentVerifierOptions = { ...chain };
    const proxiedHonoOptions: AgentVerifierOptions = { ...chain, authorities: [PUBLIC_HOST] };
    const app = new Hono<{ Variables: { agent: VerifiedRequestAgent } }>();
    for (const [path, options] of [
      ['/orders', honoOptions],
      ['/behind-proxy/orders', proxiedHonoOptions],
    ] as const) {
      app.use(path, async (c, next) => {
        const verified = await verifyAgentRequest(c.req.raw, options);
        if (!verified.ok) return verified.response;
        c.set('agent', verified.agent);
        await next();
      });
      app.all(path, (c) => c.json({ agent: shown(c.get('agent')) }));
    }
    hono = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;

    // Express: requireAgent after a text parser, the agent on the request
    const expressApp = express();
    const answer = (req: express.Request, res: express.Response) => {
      res.json({ agent: shown(req.agent) });
    };
    expressApp.all('/orders', express.text({ type: '*/*' }), requireAgent({ ...chain }), answer);
    expressApp.all('/behind-proxy/orders', express.text({ type: '*/*' }), requireAgent({ ...chain, authorities: [PUBLIC_HOST] }), answer);
    expressServer = createServer(expressApp).listen(0, '127.0.0.1');

    [bases.Hono, bases.Express] = await Promise.all([listening(hono), listening(expressServer)]);
    const linked = await registerLinked(system);
    secp = { signer: { type: 'secp256k1', account: linked.agent }, agentId: linked.agentId, address: linked.agent.address };
    const edAgent = await registerEd25519(system);
    ed = { ...edAgent, signer: { type: 'ed25519', seed: edAgent.seed }, directory: keyDirectoryUrl(REGISTRY_SERVICE, CHAIN_ID, edAgent.agentId) };
  });

  afterAll(async () => {
    for (const server of [hono, expressServer]) {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    }
    await rpc?.close();
  });

  const ERC8128: SignRequestOptions = { scheme: 'rfc9421', chainId: CHAIN_ID };
  let serial = 0;
  /** A fresh body each time: two x-svc-agent signatures of one body in one millisecond are one message. */
  const order = () => JSON.stringify({ item: 'tea', serial: ++serial });

  describe.each(['Hono', 'Express'] as const)('inside a real %s app', (name) => {
    const post = (signer: RequestSigner, options: SignRequestOptions = {}, path = '/orders?size=large') =>
      signingFetch(
        signer,
        fetch,
        options,
      )(`${bases[name]}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: order() });

    it('lets in a secp256k1 agent signing with x-svc-agent and with ERC-8128, and says who it is', async () => {
      for (const [options, scheme] of [
        [{}, 'x-svc-agent'],
        [ERC8128, 'erc8128'],
      ] as const) {
        const res = await post(secp.signer, options);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { agent: unknown }).agent).toEqual({
          scheme,
          keyType: 'secp256k1',
          agentId: String(secp.agentId),
          agentKey: `0x${'0'.repeat(24)}${secp.address.slice(2).toLowerCase()}`,
          agentAddress: secp.address,
          agentCount: '1',
          nullifier: expect.stringMatching(/^[1-9]\d*$/),
          strength: 100,
          proofExpiresAt: expect.any(Number),
          credentials: { olderThan: 0, ofac: [false, false, false], expiryDate: expect.any(String) },
        });
      }
    });

    it('lets in an Ed25519 agent signing with x-svc-agent and with Web Bot Auth, naming its key directory', async () => {
      for (const [options, scheme] of [
        [{}, 'x-svc-agent'],
        [{ scheme: 'rfc9421', signatureAgent: ed.directory }, 'web-bot-auth'],
      ] as const) {
        const res = await post(ed.signer, options);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { agent: unknown }).agent).toMatchObject({
          scheme,
          keyType: 'ed25519',
          agentId: String(ed.agentId),
          agentKey: ed.key.pubkey,
          nullifier: String(ed.nullifier),
          agentCount: '1',
          strength: 100,
        });
      }
    });

    it("accepts a Web Bot Auth request signed by Cloudflare's web-bot-auth package", async () => {
      const url = `${bases[name]}/orders?size=large`;
      const body = order();
      // web-bot-auth 0.1.3 signs @query as "" without a query (RFC 9421 says "?"), and covers the whole
      // Signature-Agent field: a URL with a query, and the dictionary member keyed by its label, sig1
      const headers = { 'content-type': 'application/json', 'content-digest': contentDigest(body), 'signature-agent': `sig1="${ed.directory}"` };
      const created = new Date();
      const signed = await cloudflareSign(
        new Request(url, { method: 'POST', body, headers }),
        await signerFromJWK({ ...ed25519PublicJwk(ed.key.pubkey), d: Buffer.from(ed.seed.slice(2), 'hex').toString('base64url') }),
        {
          created,
          expires: new Date(created.getTime() + 300_000),
          components: ['@method', '@authority', '@path', '@query', 'content-digest', 'signature-agent'],
        },
      );
      const res = await fetch(url, {
        method: 'POST',
        body,
        headers: { ...headers, 'signature-input': signed['Signature-Input'], signature: signed.Signature },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { agent: unknown }).agent).toMatchObject({ scheme: 'web-bot-auth', agentId: String(ed.agentId) });
    });

    it('401 without a signature, 400 for a malformed Signature-Input', async () => {
      const bare = await fetch(`${bases[name]}/orders`, { method: 'POST', body: '{}' });
      expect(bare.status).toBe(401);
      expect(await bare.json()).toEqual({ error: expect.stringMatching(/^Missing agent signature: .*RFC 9421.*x-svc-agent/) });
      const malformed = await fetch(`${bases[name]}/orders`, {
        method: 'POST',
        body: '{}',
        headers: { 'signature-input': 'sig1=(', signature: 'sig1=:AA==:' },
      });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toEqual({ error: expect.stringMatching(/^Signature-Input is not a structured dictionary/) });
    });

    it('refuses a signature made for another host: 403 naming it behind a proxy, an invalid signature here', async () => {
      const body = order();
      const signedFor = async (host: string) =>
        signRequest(
          ed.signer,
          { method: 'POST', url: `https://${host}/behind-proxy/orders`, body },
          { scheme: 'rfc9421', signatureAgent: ed.directory },
        );
      const send = async (host: string, signed: string) =>
        sendRaw(bases[name], { method: 'POST', path: '/behind-proxy/orders', host, headers: await signedFor(signed), body });
      expect(await send('other.example', 'other.example')).toEqual({
        status: 403,
        body: { error: `Signed for another host (other.example): this service answers at ${PUBLIC_HOST}` },
      });
      // the same route at its public host lets it in
      expect((await send(PUBLIC_HOST, PUBLIC_HOST)).status).toBe(200);

      // by default the host is the request's own: a signature for another one does not verify over this request
      const elsewhere = await signRequest(
        secp.signer,
        { method: 'POST', url: 'https://other.example/orders', body },
        { scheme: 'rfc9421', chainId: CHAIN_ID },
      );
      const res = await fetch(`${bases[name]}/orders`, { method: 'POST', headers: elsewhere, body });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: expect.stringMatching(/^Invalid signature/) });
    });

    it('409 for a replay in either scheme', async () => {
      for (const options of [{}, ERC8128, { scheme: 'rfc9421', signatureAgent: ed.directory } as const]) {
        const signer = 'signatureAgent' in options ? ed.signer : secp.signer;
        const body = order();
        const url = `${bases[name]}/orders`;
        const headers = await signRequest(signer, { method: 'POST', url, body }, options);
        expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(200);
        const replay = await fetch(url, { method: 'POST', headers, body });
        expect(replay.status).toBe(409);
        expect(await replay.json()).toEqual({ error: expect.stringMatching(/^Replay detected/) });
      }
    });

    it('403 for an unknown agent in either scheme', async () => {
      const stranger: RequestSigner = { type: 'secp256k1', account: newAccount() };
      for (const options of [{}, ERC8128]) {
        const res = await post(stranger, options);
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: 'Agent not verified on-chain' });
      }
      // an Ed25519 key no agent has, naming a registered agent's directory, or one of no agent
      const unknown: RequestSigner = { type: 'ed25519', seed: `0x${'42'.repeat(32)}` as Hex };
      const named = await post(unknown, { scheme: 'rfc9421', signatureAgent: ed.directory });
      expect(named.status).toBe(403);
      expect(await named.json()).toEqual({ error: `Unknown agent: the keyid is not the JWK thumbprint of agent ${ed.agentId}'s registered key` });
      const nobody = await post(unknown, { scheme: 'rfc9421', signatureAgent: keyDirectoryUrl(REGISTRY_SERVICE, CHAIN_ID, 999_999n) });
      expect(nobody.status).toBe(403);
      expect(await nobody.json()).toEqual({ error: 'Unknown agent: no Ed25519 agent 999999 is registered on testnet' });
      const otherChain = await post(ed.signer, { scheme: 'rfc9421', signatureAgent: keyDirectoryUrl(REGISTRY_SERVICE, 42220, ed.agentId) });
      expect(otherChain.status).toBe(403);
      expect(await otherChain.json()).toEqual({ error: expect.stringMatching(/^Unknown agent: Signature-Agent must name .* chainId 11142220/) });
    });
  });

  it('a warm verification makes no RPC round trip, in every scheme', async () => {
    // agents of their own, so that each scheme's first request is cold
    const [linked, other, edAgent] = await Promise.all([registerLinked(system), registerLinked(system), registerEd25519(system)]);
    const cases: [string, RequestSigner, SignRequestOptions][] = [
      ['x-svc-agent', { type: 'secp256k1', account: linked.agent }, {}],
      ['erc8128', { type: 'secp256k1', account: other.agent }, ERC8128],
      [
        'web-bot-auth',
        { type: 'ed25519', seed: edAgent.seed },
        { scheme: 'rfc9421', signatureAgent: keyDirectoryUrl(REGISTRY_SERVICE, CHAIN_ID, edAgent.agentId) },
      ],
    ];
    const trips: Record<string, { cold: number; warm: number[] }> = {};
    for (const [scheme, signer, options] of cases) {
      const send = () => signingFetch(signer, fetch, options)(`${bases.Hono}/orders`, { method: 'POST', body: order() }).then((res) => res.status);
      rpc.reset();
      expect(await send()).toBe(200);
      trips[scheme] = { cold: rpc.count, warm: [] };
      for (let i = 0; i < 3; i++) {
        rpc.reset();
        expect(await send()).toBe(200);
        trips[scheme].warm.push(rpc.count);
      }
    }
    for (const scheme of ['x-svc-agent', 'erc8128', 'web-bot-auth']) {
      expect(trips[scheme]!.cold, scheme).toBeGreaterThan(0);
      expect(trips[scheme]!.warm, scheme).toEqual([0, 0, 0]);
    }
  });

  it('503 naming the chain when it cannot be read', async () => {
    // a port nothing listens on: the node is down
    const verify = createAgentVerifier({ network: 'testnet', rpcUrl: 'http://127.0.0.1:9', registry: system.deployment.contracts.registry });
    for (const options of [{}, ERC8128, { scheme: 'rfc9421', signatureAgent: ed.directory } as const]) {
      const signer = 'signatureAgent' in options ? ed.signer : secp.signer;
      const url = 'https://svc.example/orders';
      const body = order();
      const verified = await verify(
        new Request(url, { method: 'POST', headers: await signRequest(signer, { method: 'POST', url, body }, options), body }),
      );
      expect(verified.ok).toBe(false);
      if (verified.ok) continue;
      expect(verified.response.status).toBe(503);
      expect(await verified.response.json()).toEqual({
        error: expect.stringMatching(/^The agent check could not read the chain: HTTP request failed/),
      });
    }
  });

  it('says how to sign: an absolute URL for RFC 9421, and a Signature-Agent for an Ed25519 agent', async () => {
    await expect(signRequest(secp.signer, { method: 'GET', url: '/orders' }, { scheme: 'rfc9421' })).rejects.toThrow(/absolute URL/);
    await expect(
      signRequest({ type: 'ed25519', seed: ed.seed }, { method: 'GET', url: 'https://svc.example/' }, { scheme: 'rfc9421' }),
    ).rejects.toThrow(/Web Bot Auth, which needs options\.signatureAgent/);
  });
});
