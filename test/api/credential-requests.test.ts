// Agents proving their requests with the human-backed-agent credential instead of a signature, on real local chains
// with a real registry service: the agent's SDK (presentingFetch, credentialAuthorization) sends `Authorization:
// SD-JWT <presentation>` whose key-binding JWT is bound to the request, and verifiers check it offline: a Hono app
// with verifyAgentRequest and no chain at all, and an Express app with requireAgent that also takes signatures (and
// whose chain, behind a counting front, is never read for a credential). Refusals: a changed body, path or host, a
// wrong audience, a stale KB-JWT, an unknown key, another network, a replay; the policies and a per-human quota,
// counted under the pairwise sub; a deregistered agent's credential refused once the cached status list is fetched
// again; and the whole check working after the registry service has stopped.
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type AgentCredential,
  type AgentVerifierOptions,
  credentialAuthorization,
  HttpCache,
  presentingFetch,
  requestCredential,
  requireAgent,
  type SelectiveClaim,
  signingFetch,
  type VerifiedRequestAgent,
  verifyAgentRequest,
} from '../../src/client/index.js';
import { NETWORKS } from '../../src/core/networks.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { setMaxAgentsPerHuman } from '../support/registry.js';
import { type RpcCounter, rpcCounter } from '../support/rpc-counter.js';
import { serveOnLoopback } from '../support/service-http.js';
import { type RegisteredSigner, registeredSigner } from '../support/signers.js';

const AUDIENCE = 'https://shop.example';

/** The agent as the apps answer it (bigints as decimal text). */
const shown = (agent: VerifiedRequestAgent | undefined) =>
  agent && {
    scheme: agent.scheme,
    keyType: agent.keyType,
    agentId: String(agent.agentId),
    agentAddress: agent.agentAddress,
    agentCount: String(agent.agentCount),
    credentials: agent.credentials,
    ...(agent.scheme === 'sd-jwt' ? { sub: agent.sub, disclosed: agent.disclosed } : { nullifier: String(agent.nullifier) }),
    ...(agent.quota ? { remaining: agent.quota.remaining } : {}),
  };

const listening = async (server: Server): Promise<string> => {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe('requests proved with the human-backed-agent credential', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let registry: { base: string; close(): Promise<void> };
  let otherJwks: { base: string; close(): Promise<void> };
  let handler: RequestListener = (_req, res) => res.end();
  let rpc: RpcCounter;
  let hono: Server;
  let expressServer: Server;
  let honoBase: string;
  let expressBase: string;
  /** Where the Hono app keeps the registry's JWKS and status lists: the test's, to see what it fetched. */
  const honoCache = new HttpCache();
  /** A French human who proved 21+ and cleared the OFAC checks, with two agents (secp256k1, Ed25519). */
  let ecdsa: RegisteredSigner;
  let ed: RegisteredSigner;
  /** Another human's agent. */
  let other: RegisteredSigner;

  const credentialFor = (who: RegisteredSigner, audience = AUDIENCE): Promise<AgentCredential> =>
    requestCredential(who.signer, { registryUrl: registry.base, audience });

  /** A fetch proving each request with `who`'s credential for AUDIENCE. */
  const agentFetch = async (who: RegisteredSigner, disclose: readonly SelectiveClaim[] = []) =>
    presentingFetch(await credentialFor(who), who.signer, { audience: AUDIENCE, disclose });

  const answer = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });

  beforeAll(async () => {
    networks = await deployTestNetworks();
    await setMaxAgentsPerHuman(networks.testnet, 0n);
    registry = await serveOnLoopback((req, res) => handler(req, res));
    q = await queryTestApp(networks, { publicUrl: registry.base, eventPollIntervalMs: 3_600_000 });
    handler = q.app;
    rpc = await rpcCounter(networks.testnet.rpcUrl);
    const twin = newDocument({ nationality: 'FRA' });
    const disclosures = { minimumAge: 21, ofac: true, nationality: true };
    [ecdsa, other] = await Promise.all([
      registeredSigner(q.app, networks, { mode: 'wallet-free', disclosures, document: twin }),
      registeredSigner(q.app, networks, { mode: 'wallet-free', disclosures }),
    ]);
    ed = await registeredSigner(q.app, networks, { mode: 'ed25519', disclosures, document: twin });
    await q.services.queries.syncNow();

    // Hono: credentials only, no chain; one route with policies and a quota
    const credentials = { audience: AUDIENCE, issuer: registry.base, cache: honoCache };
    const plain: AgentVerifierOptions = { network: 'testnet', credentials };
    const strict: AgentVerifierOptions = {
      network: 'testnet',
      credentials,
      policy: { minimumAge: 18, ofac: true, quota: { limit: 2, windowS: 3600 } },
    };
    const mainnet: AgentVerifierOptions = { credentials };
    // a JWKS of another key: a credential's kid is not in it
    otherJwks = await serveOnLoopback((_req, res) => {
      res.setHeader('content-type', 'application/jwk-set+json');
      res.end(
        JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'm9ZOZmBG3Mi14qjb_3cMe7xk2pXAn6KOhGdkhsmVc0Q', kid: 'elsewhere', alg: 'EdDSA' }] }),
      );
    });
    const unknownKeys: AgentVerifierOptions = {
      network: 'testnet',
      credentials: { audience: AUDIENCE, issuer: registry.base, jwksUrl: otherJwks.base, cache: new HttpCache() },
    };
    const app = new Hono<{ Variables: { agent: VerifiedRequestAgent } }>();
    for (const [path, options] of [
      ['/orders', plain],
      ['/adults/orders', strict],
      ['/mainnet/orders', mainnet],
      ['/other-keys/orders', unknownKeys],
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

    // Express: requireAgent taking signatures (on chain, behind the counting front) and credentials
    const expressApp = express();
    expressApp.all(
      '/orders',
      express.text({ type: '*/*' }),
      requireAgent({
        network: 'testnet',
        rpcUrl: rpc.url,
        registry: networks.testnet.deployment.contracts.registry,
        credentials: { audience: AUDIENCE, issuer: registry.base },
      }),
      (req, res) => {
        res.json({ agent: shown(req.agent) });
      },
    );
    expressServer = createServer(expressApp).listen(0, '127.0.0.1');
    [honoBase, expressBase] = await Promise.all([listening(hono), listening(expressServer)]);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  afterAll(async () => {
    for (const server of [hono, expressServer]) {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    }
    await rpc?.close();
    await otherJwks?.close();
    await registry.close();
    await q.stop();
  });

  it('an agent gets in with its credential alone: the disclosed claims, the pairwise sub, no chain read', async () => {
    const issued = await credentialFor(ed);
    const send = presentingFetch(issued, ed.signer, { audience: AUDIENCE, disclose: ['age_over_21', 'nationality'] });
    const got = await answer(
      await send(`${honoBase}/orders?size=large`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"item":"tea"}' }),
    );
    expect(got).toEqual({
      status: 200,
      body: {
        agent: {
          scheme: 'sd-jwt',
          keyType: 'ed25519',
          agentId: String(ed.key.agentId),
          agentAddress: ed.key.agentAddress,
          agentCount: '2',
          credentials: { nationality: 'FRA', olderThan: 21, ofac: [false, false, false] },
          sub: issued.sub,
          disclosed: { age_over_21: true, nationality: 'FRA' },
        },
      },
    });
    // a GET with no body, from the human's other agent: the same sub at this audience
    const twin = await answer(await (await agentFetch(ecdsa))(`${honoBase}/orders`));
    expect(twin.body.agent).toMatchObject({ scheme: 'sd-jwt', keyType: 'secp256k1', sub: issued.sub, disclosed: {} });

    // requireAgent: the same, and the chain behind it is never asked
    rpc.reset();
    const viaExpress = await answer(await (await agentFetch(other, ['ofac_clear']))(`${expressBase}/orders`, { method: 'POST', body: 'x' }));
    expect(viaExpress).toMatchObject({
      status: 200,
      body: { agent: { scheme: 'sd-jwt', agentId: String(other.key.agentId), disclosed: { ofac_clear: true } } },
    });
    expect(rpc.count).toBe(0);
    // and a signed request still gets in there, checked on chain
    const signed = await answer(await signingFetch(ecdsa.signer)(`${expressBase}/orders`, { method: 'POST', body: 'y' }));
    expect(signed).toMatchObject({ status: 200, body: { agent: { scheme: 'x-svc-agent', agentId: String(ecdsa.key.agentId) } } });
  });

  it('a presentation proves one request: another body, path, query or host is refused, and so is a second use', async () => {
    const issued = await credentialFor(ecdsa);
    const url = `${honoBase}/orders?size=large`;
    const authorization = await credentialAuthorization(
      issued,
      ecdsa.signer,
      { method: 'POST', url, body: '{"item":"tea"}' },
      { audience: AUDIENCE },
    );
    const send = (target: string, body: string, method = 'POST') => fetch(target, { method, headers: { authorization }, body });
    for (const [target, body, method] of [
      [url, '{"item":"coffee"}', 'POST'],
      [`${honoBase}/orders?size=small`, '{"item":"tea"}', 'POST'],
      [`${honoBase}/adults/orders?size=large`, '{"item":"tea"}', 'POST'],
      [url.replace('127.0.0.1', 'localhost'), '{"item":"tea"}', 'POST'],
      [url, '{"item":"tea"}', 'PUT'],
    ] as const) {
      const refused = await answer(await send(target, body, method));
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ reason: 'nonce', error: expect.stringMatching(/another request/) });
    }
    expect((await answer(await send(url, '{"item":"tea"}'))).status).toBe(200);
    const again = await answer(await send(url, '{"item":"tea"}'));
    expect(again).toEqual({ status: 409, body: { reason: 'replay', error: expect.stringMatching(/^Replay detected/) } });
  });

  it('refuses a missing or malformed presentation, another audience, a stale KB-JWT, an unknown key and another network', async () => {
    const bare = await fetch(`${honoBase}/orders`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(`SD-JWT audience="${AUDIENCE}"`);
    expect(await bare.json()).toEqual({ error: expect.stringMatching(/Authorization: SD-JWT/) });
    const malformed = await fetch(`${honoBase}/orders`, { headers: { authorization: 'SD-JWT not a presentation' } });
    expect(malformed.status).toBe(400);
    const undecodable = await answer(await fetch(`${honoBase}/orders`, { headers: { authorization: 'SD-JWT abc~def' } }));
    expect(undecodable).toMatchObject({ status: 400, body: { reason: 'malformed' } });

    const issued = await credentialFor(ed);
    const url = `${honoBase}/orders`;
    const present = (options: { audience?: string; now?: number } = {}, target = url) =>
      credentialAuthorization(issued, ed.signer, { method: 'GET', url: target }, { audience: options.audience ?? AUDIENCE, ...options });
    const get = async (authorization: string, target = url) => answer(await fetch(target, { headers: { authorization } }));

    expect(await get(await present({ audience: 'https://bank.example' }))).toMatchObject({ status: 403, body: { reason: 'audience' } });
    // a credential asked for another verifier: its sub is the human's pseudonym there, not here
    const elsewhere = await credentialFor(ed, 'https://bank.example');
    const forBank = await credentialAuthorization(elsewhere, ed.signer, { method: 'GET', url }, { audience: AUDIENCE });
    expect(await get(forBank)).toMatchObject({
      status: 403,
      body: { reason: 'audience', error: expect.stringMatching(/issued for "https:\/\/bank.example"/) },
    });
    const stale = await present({ now: Math.floor(Date.now() / 1000) - 301 });
    expect(await get(stale)).toMatchObject({ status: 403, body: { reason: 'key-binding', error: expect.stringMatching(/too old/) } });
    const otherKeys = `${honoBase}/other-keys/orders`;
    expect(await get(await present({}, otherKeys), otherKeys)).toMatchObject({
      status: 403,
      body: { reason: 'signature', error: expect.stringMatching(/lists no key/) },
    });
    const onMainnet = `${honoBase}/mainnet/orders`;
    expect(await get(await present({}, onMainnet), onMainnet)).toMatchObject({
      status: 403,
      body: { reason: 'network', error: expect.stringMatching(new RegExp(`chain ${NETWORKS.testnet.chainId}.*chain ${NETWORKS.mainnet.chainId}`)) },
    });
  });

  it("applies the policies to what the agent discloses, and counts the quota under the pairwise sub: one budget for the human's agents", async () => {
    const path = `${honoBase}/adults/orders`;
    const hidden = await answer(await (await agentFetch(ecdsa))(path));
    expect(hidden).toMatchObject({ status: 403, body: { policy: 'minimumAge' } });
    const shows = ['age_over_18', 'ofac_clear'] as const;
    expect(await answer(await (await agentFetch(ecdsa, shows))(path))).toMatchObject({ status: 200, body: { agent: { remaining: 1 } } });
    expect(await answer(await (await agentFetch(ed, shows))(path))).toMatchObject({ status: 200, body: { agent: { remaining: 0 } } });
    const spent = await (await agentFetch(ecdsa, shows))(path);
    expect(spent.status).toBe(429);
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await spent.json()).toMatchObject({ policy: 'quota' });
    // another human has a budget of their own
    expect(await answer(await (await agentFetch(other, shows))(path))).toMatchObject({ status: 200, body: { agent: { remaining: 1 } } });
  });

  it("a deregistered agent's credential is refused once the verifier fetches the status list again", async () => {
    const human = newDocument();
    const doomed = await registeredSigner(q.app, networks, { mode: 'wallet-free', document: human });
    const issued = await credentialFor(doomed);
    const send = presentingFetch(issued, doomed.signer, { audience: AUDIENCE });
    expect((await send(`${honoBase}/orders`)).status).toBe(200);
    const fetchedAt = honoCache.fetchedAt(issued.status.uri);
    expect(fetchedAt).toBeDefined();

    const session = await request(q.app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: doomed.key.agentAddress });
    expect(session.status).toBe(200);
    await approveDeepLink(q.app, networks, session.body.deepLink, { document: human });
    await q.services.queries.syncNow();
    await q.services.credentialStatus.settled();

    // the verifier keeps the list it has for its max-age (60 s): until then the credential still gets in
    expect((await send(`${honoBase}/orders`)).status).toBe(200);
    // past it (the clocks of this process moved on), the list is fetched again and the bit is set
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    const refused = await answer(await send(`${honoBase}/orders`));
    expect(refused).toMatchObject({ status: 403, body: { reason: 'revoked' } });
    expect(honoCache.fetchedAt(issued.status.uri)).toBeGreaterThan(fetchedAt as number);
  });

  it('keeps letting agents in after the registry service has stopped, from the JWKS and status list it holds', async () => {
    const send = await agentFetch(ed, ['age_over_18']);
    const otherSend = await agentFetch(other);
    expect((await send(`${honoBase}/orders`)).status).toBe(200);
    await registry.close();
    await expect(fetch(`${registry.base}/.well-known/jwks.json`)).rejects.toThrow();
    const offline = await answer(await send(`${honoBase}/orders`, { method: 'POST', body: '{"item":"tea"}' }));
    expect(offline).toMatchObject({
      status: 200,
      body: { agent: { scheme: 'sd-jwt', agentId: String(ed.key.agentId), disclosed: { age_over_18: true } } },
    });
    expect((await otherSend(`${honoBase}/orders`)).status).toBe(200);
  });
});
