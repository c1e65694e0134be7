// The identity app's callback is a hint the chain must confirm, for every kind of session: a txHash the chain
// never learns of fails the session after the (test-configured) deadline with a reason; a mined transaction that
// is not this session's proof fails it at once; and the human's real proof still completes a session whatever was
// reported before, while the session lives (its token's 30 minutes).
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { type Hex, keccak256 } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectSubmitted } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { approveDeepLink, callbackTarget, deployTestNetworks, newDocument, type TestNetworks } from '../support/registration-flow.js';
import { type Body, manualClock, registerAgent } from '../support/session-flows.js';

type Kind = 'register' | 'deregister' | 'refresh' | 'identify';

const DEADLINE_MS = 5_000;
const forgedHash = (): Hex => keccak256(randomBytes(32));
const NEVER_CONFIRMED = /^The identity app reported transaction 0x[0-9a-f]{64} but the chain never confirmed it/;

describe('callbacks are confirmed on chain', () => {
  let net: TestNetworks;

  beforeAll(async () => {
    net = await deployTestNetworks();
  });

  /** An app whose clock the test moves, with a short deadline for unknown transactions. */
  function clockedApp() {
    const clock = manualClock();
    return { clock, app: testApp(net.chains, { clock: clock.now, reportedTxTimeoutMs: DEADLINE_MS }).app };
  }

  /** Opens a session of `kind` on testnet (an agent is registered first for deregister and refresh). */
  async function open(app: Express, kind: Kind): Promise<Body> {
    let body: Body = { network: 'testnet' };
    if (kind === 'register') body = { mode: 'wallet-free', network: 'testnet' };
    if (kind === 'deregister') body = { network: 'testnet', agentAddress: (await registerAgent(app, net, 'linked')).agentAddress };
    if (kind === 'refresh') body = { network: 'testnet', agentId: (await registerAgent(app, net, 'linked')).agentId };
    const res = await request(app).post(`/api/agent/${kind}`).send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Body;
  }

  const report = (app: Express, session: Body, txHash: Hex) =>
    request(app)
      .post(callbackTarget(session['deepLink'] as string))
      .send({ status: 'success', txHash });
  const status = async (app: Express, kind: Kind, session: Body): Promise<Body> =>
    (await request(app).get(`/api/agent/${kind}/status`).query({ token: session['sessionToken'] })).body as Body;

  it.each<Kind>(['register', 'deregister', 'refresh', 'identify'])(
    '%s: a forged txHash waits at proof-received, then fails with the reason once the deadline passes',
    async (kind) => {
      const { app, clock } = clockedApp();
      const session = await open(app, kind);
      const forged = forgedHash();
      expect((await report(app, session, forged)).body).toEqual({ received: true, stage: 'proof-received' });
      // within the deadline the chain may still learn of it (mempool, RPC latency)
      clock.advance(DEADLINE_MS - 1_000);
      expect(await status(app, kind, session)).toMatchObject({ stage: 'proof-received', txHash: forged });
      clock.advance(2_000);
      const failed = await status(app, kind, session);
      expect(failed.stage).toBe('failed');
      expect(failed['error']).toMatch(NEVER_CONFIRMED);
      expect(failed['error']).toContain(forged);
    },
  );

  it('reporting again, the same hash or another, does not stretch the wait past the deadline of the first report', async () => {
    const { app, clock } = clockedApp();
    const session = await open(app, 'register');
    const first = forgedHash();
    await report(app, session, first);
    clock.advance(DEADLINE_MS - 1_500);
    expect((await report(app, session, first)).body).toEqual({ received: true, stage: 'proof-received' });
    const second = forgedHash();
    expect((await report(app, session, second)).body).toEqual({ received: true, stage: 'proof-received' });
    clock.advance(2_000);
    const failed = await status(app, 'register', session);
    expect(failed.stage).toBe('failed');
    expect(failed['error']).toMatch(NEVER_CONFIRMED);
    expect(failed['error']).toContain(second);
  });

  it('with the real clock, the session fails by itself after the deadline', async () => {
    const deadline = 1_000;
    const { app } = testApp(net.chains, { reportedTxTimeoutMs: deadline });
    const session = await open(app, 'register');
    const reportedAt = Date.now();
    expect((await report(app, session, forgedHash())).body).toEqual({ received: true, stage: 'proof-received' });
    let body = await status(app, 'register', session);
    for (let i = 0; i < 300 && body.stage === 'proof-received'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      body = await status(app, 'register', session);
    }
    expect(body.stage).toBe('failed');
    expect(body['error']).toMatch(NEVER_CONFIRMED);
    expect(Date.now() - reportedAt).toBeGreaterThanOrEqual(deadline);
  });

  describe("the human's real proof completes the session whatever was reported before", () => {
    it('registration: failed by a forged report, completed by the registry state, with the real transaction', async () => {
      const { app, clock } = clockedApp();
      const session = await open(app, 'register');
      const forged = forgedHash();
      await report(app, session, forged);
      clock.advance(DEADLINE_MS + 1_000);
      expect((await status(app, 'register', session)).stage).toBe('failed');

      // the proof lands; no callback follows (or it is lost): the registry's state decides
      const { proof } = await approveDeepLink(app, net, session['deepLink'] as string, { callback: false });
      expectSubmitted(proof);
      const done = await status(app, 'register', session);
      expect(done).toMatchObject({ stage: 'completed', txHash: proof.txHash });
      expect(done['error']).toBeUndefined();
    });

    it('identify: a real report after a forged one completes it, before or after the deadline', async () => {
      const { app, clock } = clockedApp();
      for (const deadlinePassed of [false, true]) {
        const session = await open(app, 'identify');
        await report(app, session, forgedHash());
        if (deadlinePassed) {
          clock.advance(DEADLINE_MS + 1_000);
          expect((await status(app, 'identify', session)).stage).toBe('failed');
        }
        const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string);
        expectSubmitted(proof);
        expect(callback?.body).toEqual({ received: true, stage: 'completed' });
        expect(await status(app, 'identify', session)).toMatchObject({
          stage: 'completed',
          txHash: proof.txHash,
          nullifier: proof.nullifier.toString(),
        });
      }
    });

    it('deregistration: completed by the registry state, without the forged hash as its transaction', async () => {
      const { app } = clockedApp();
      const agent = await registerAgent(app, net, 'linked');
      const res = await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: agent.agentAddress });
      const session = res.body as Body;
      await report(app, session, forgedHash());
      const { proof } = await approveDeepLink(app, net, session['deepLink'] as string, { document: agent.document, callback: false });
      expectSubmitted(proof);
      const done = await status(app, 'deregister', session);
      expect(done.stage).toBe('completed');
      expect(done['txHash']).toBeUndefined();
    });
  });

  describe('a mined transaction that is not this session’s proof is refused at once', () => {
    it("registration: another session's registration fails it, and its own proof still completes it", async () => {
      const { app } = clockedApp();
      const other = await open(app, 'register');
      const theirs = await approveDeepLink(app, net, other['deepLink'] as string);
      expectSubmitted(theirs.proof);
      expect(theirs.callback?.body).toEqual({ received: true, stage: 'completed' });

      const mine = await open(app, 'register');
      expect((await report(app, mine, theirs.proof.txHash)).body).toEqual({ received: true, stage: 'failed' });
      expect(await status(app, 'register', mine)).toMatchObject({
        stage: 'failed',
        error: `Transaction ${theirs.proof.txHash} carries another session's proof`,
      });

      const own = await approveDeepLink(app, net, mine['deepLink'] as string);
      expectSubmitted(own.proof);
      expect(own.callback?.body).toEqual({ received: true, stage: 'completed' });
      expect(await status(app, 'register', mine)).toMatchObject({ stage: 'completed', txHash: own.proof.txHash });
    });

    it('registration: a proof for the same human but another agent is refused', async () => {
      const { app } = clockedApp();
      const humanAddress = `0x${randomBytes(20).toString('hex')}`;
      const open = async () =>
        (await request(app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress })).body as Body;
      const first = await open();
      const approved = await approveDeepLink(app, net, first['deepLink'] as string, { document: newDocument() });
      expectSubmitted(approved.proof);
      const second = await open();
      expect((await report(app, second, approved.proof.txHash)).body).toEqual({ received: true, stage: 'failed' });
      expect((await status(app, 'register', second))['error']).toMatch(/carries another session's proof/);
    });

    it("deregistration: the agent's own registration (same human, another request) is not its removal", async () => {
      const { app } = clockedApp();
      const document = newDocument();
      const humanAddress = `0x${randomBytes(20).toString('hex')}`;
      const registration = (await request(app).post('/api/agent/register').send({ mode: 'linked', network: 'testnet', humanAddress })).body as Body;
      const registered = await approveDeepLink(app, net, registration['deepLink'] as string, { document });
      expectSubmitted(registered.proof);
      const session = (await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: registration['agentAddress'] }))
        .body as Body;
      expect((await report(app, session, registered.proof.txHash)).body).toEqual({ received: true, stage: 'failed' });
      expect((await status(app, 'deregister', session))['error']).toMatch(/carries another session's proof/);
    });

    it('a transaction that is not a proof to the registry fails the session saying so', async () => {
      const { app } = clockedApp();
      const session = await open(app, 'register');
      const wallet = await net.testnet.newWallet();
      const hash = await wallet.sendTransaction({ account: wallet.account, chain: wallet.chain, to: wallet.account.address, value: 1n });
      await net.testnet.client.waitForTransactionReceipt({ hash });
      expect((await report(app, session, hash)).body).toEqual({ received: true, stage: 'failed' });
      expect((await status(app, 'register', session))['error']).toBe(`Transaction ${hash} is not a proof submitted to the registry`);
    });
  });
});
