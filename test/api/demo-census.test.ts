// /api/demo/census on real local chains: verified agents contribute what their humans disclosed (one entry per
// agent), signed GETs read the aggregate of the agents still registered, entries survive a restart over the same
// store, and unsigned or replayed requests are refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { type RequestSigner, signedHeaders } from '../../src/core/signed-request.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { testApp } from '../support/app.js';
import { eventually, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { approveDeepLink, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { registeredSigner } from '../support/signers.js';

const PATH = '/api/demo/census?network=testnet';

describe('/api/demo/census', () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-census-'));
  let networks: TestNetworks;
  let store: SqliteStore;
  let q: QueryTestApp;

  /** A wallet-free agent whose human disclosed `nationality` and proved `minimumAge` and OFAC. */
  const agentOf = async (nationality: string, minimumAge: 0 | 18 | 21): Promise<RequestSigner> =>
    (
      await registeredSigner(q.app, networks, {
        mode: 'wallet-free',
        disclosures: { nationality: true, minimumAge, ofac: true },
        document: newDocument({ nationality }),
      })
    ).signer;

  const contribute = async (signer: RequestSigner, app = q.app) => {
    const body = '{}';
    const headers = await signedHeaders(signer, { method: 'POST', url: PATH, body });
    return request(app).post(PATH).set(headers).set('content-type', 'application/json').send(body);
  };
  const summary = async (signer: RequestSigner, app = q.app) =>
    request(app)
      .get(PATH)
      .set(await signedHeaders(signer, { method: 'GET', url: PATH }));

  let fra: RequestSigner;
  let deu: RequestSigner;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    store = new SqliteStore(join(dir, 'store.sqlite'));
    q = await queryTestApp(networks, { store });
    fra = await agentOf('FRA', 21);
    deu = await agentOf('DEU', 18);
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records one entry per agent and aggregates them', async () => {
    const first = await contribute(fra);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ recorded: true, totalAgents: 1, yourEntry: { nationality: 'FRA', olderThan: 21, ofac: [true, true, true] } });
    expect((await contribute(fra)).body.totalAgents).toBe(1); // contributing again replaces the entry
    expect((await contribute(deu)).body.totalAgents).toBe(2);
    const res = await summary(deu);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      topCountries: [
        { country: 'DEU', count: 1 },
        { country: 'FRA', count: 1 },
      ],
      verifiedOver18: 2,
      verifiedOver21: 1,
      ofacClear: 2,
      totalAgents: 2,
    });
  });

  it('the census survives a restart over the same store', async () => {
    await contribute(fra);
    const restarted = testApp(new ChainGateway({ mainnet: networks.mainnet.gateway, testnet: networks.testnet.gateway }), { store });
    try {
      expect((await summary(fra, restarted.app)).body.totalAgents).toBe(2);
    } finally {
      await restarted.services.queries.stop();
    }
  });

  it('refuses unsigned requests (401) and replays (409); ?help describes the endpoint without a signature', async () => {
    expect((await request(q.app).get(PATH)).status).toBe(401);
    expect((await request(q.app).post(PATH).send({})).status).toBe(401);
    const headers = await signedHeaders(fra, { method: 'GET', url: PATH });
    expect((await request(q.app).get(PATH).set(headers)).status).toBe(200);
    expect((await request(q.app).get(PATH).set(headers)).status).toBe(409);
    const help = await request(q.app).get('/api/demo/census?help=1');
    expect(help.status).toBe(200);
    expect(help.body).toMatchObject({ endpoint: '/api/demo/census', authentication: { required: true } });
  });

  it("a deregistered agent's entry no longer counts, and leaves the stored census", async () => {
    const document = newDocument({ nationality: 'ITA' });
    const { signer, key } = await registeredSigner(q.app, networks, {
      mode: 'wallet-free',
      disclosures: { nationality: true, minimumAge: 21, ofac: true },
      document,
    });
    expect((await contribute(signer)).body.totalAgents).toBe(3);
    expect((await summary(fra)).body).toMatchObject({
      totalAgents: 3,
      verifiedOver21: 2,
      topCountries: expect.arrayContaining([{ country: 'ITA', count: 1 }]),
    });

    // the same human removes the agent: its NFT is burned
    const opened = await request(q.app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: key.agentAddress });
    expect(opened.status).toBe(200);
    await approveDeepLink(q.app, networks, opened.body.deepLink, { document });
    const status = async () => (await request(q.app).get('/api/agent/deregister/status').query({ token: opened.body.sessionToken })).body;
    expect((await eventually(status, (s) => s.stage === 'completed', 10_000)).value.stage).toBe('completed');
    // the agent cache hears of the burn at the log follower's next poll, as every answer does (at most a block behind)
    await q.services.queries.syncNow();

    const after = await summary(deu);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ totalAgents: 2, verifiedOver18: 2, verifiedOver21: 1, ofacClear: 2 });
    expect(after.body.topCountries).not.toContainEqual(expect.objectContaining({ country: 'ITA' }));
    const kept = (await store.get<Record<string, unknown>>('demo:census:testnet')) ?? {};
    expect(Object.keys(kept).sort()).not.toContain(key.agentAddress.toLowerCase());
    expect(Object.keys(kept)).toHaveLength(2);
  });
});
