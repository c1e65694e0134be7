// Human-level policies through the SDK's verifier, against agents registered through the mock identity app on a real
// local chain: each policy kind refuses with 403 {error, policy} an agent whose human does not meet it (age, OFAC,
// nationality, agents per human, proof age, provider strength) and lets in one who does; a per-human quota is shared
// by all of one human's agents (429 with Retry-After once spent, through requireAgent in an Express app) while an
// agent of another human has its own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentPolicyInput,
  type AgentVerifier,
  createAgentVerifier,
  type RequestSigner,
  requireAgent,
  signingFetch,
  signRequest,
} from '../../src/client/index.js';
import { NETWORKS } from '../../src/core/networks.js';
import { mockDocumentFor } from '../../src/identity-app/index.js';
import { expectSubmitted, linkedData, newAccount, type RegisteredAgent, registerLinked, submitProof } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { testProviderArtifact } from '../support/queries.js';
import { mined, registryAs, setMaxAgentsPerHuman } from '../support/registry.js';

const URL_ = 'https://svc.example/orders';
const DAY_S = 86_400;

/** YYYY-MM-DD, `days` from now. */
const isoIn = (days: number): string => new Date(Date.now() + days * DAY_S * 1000).toISOString().slice(0, 10);

let serial = 0;

/** A verifier per policy (each with its own cache, replay guard and quota store), asked with a fresh ERC-8128 signature. */
function asker(system: TestSystem) {
  const verifiers = new Map<AgentPolicyInput, AgentVerifier>();
  return async (policy: AgentPolicyInput, signer: RequestSigner): Promise<{ status: number; body?: unknown }> => {
    let verify = verifiers.get(policy);
    if (!verify) {
      verify = createAgentVerifier({ network: 'testnet', rpcUrl: system.rpcUrl, registry: system.deployment.contracts.registry, policy });
      verifiers.set(policy, verify);
    }
    const body = JSON.stringify({ serial: ++serial });
    const headers = await signRequest(signer, { method: 'POST', url: URL_, body }, { scheme: 'rfc9421', chainId: NETWORKS.testnet.chainId });
    const verified = await verify(new Request(URL_, { method: 'POST', headers, body }));
    return verified.ok ? { status: 200 } : { status: verified.response.status, body: await verified.response.json() };
  };
}

const secp = (registered: RegisteredAgent): RequestSigner => ({ type: 'secp256k1', account: registered.agent });

describe('policies through the SDK verifier', () => {
  let system: TestSystem;
  let ask: ReturnType<typeof asker>;
  /** No disclosures: age 0, OFAC not checked, no nationality. */
  let plain: RequestSigner;
  /** Proved over 18 with the OFAC checks. */
  let adult: RequestSigner;
  let french: RequestSigner;
  let british: RequestSigner;
  /** Two agents of one human. */
  let twins: [RequestSigner, RequestSigner];
  /** Its document expires in 10 days: the registry caps the proof's expiry by it. */
  let expiring: RequestSigner;

  /** A linked agent whose human discloses the nationality on their passport. */
  async function disclosing(nationality: string): Promise<RequestSigner> {
    const agent = newAccount();
    const human = newAccount().address;
    const proof = await submitProof(system, {
      userId: human,
      userDefinedData: await linkedData(system, agent, human),
      disclosures: { nationality: true },
      document: mockDocumentFor(human, { nationality }),
    });
    expectSubmitted(proof);
    return { type: 'secp256k1', account: agent };
  }

  beforeAll(async () => {
    system = await deployTestSystem('testnet');
    ask = asker(system);
    // this deployment lets one human hold several agents (the registry's default is one)
    await setMaxAgentsPerHuman(system, 0n);
    const human = newAccount().address;
    const [p, a, f, b, t1, t2, e] = await Promise.all([
      registerLinked(system),
      registerLinked(system, { minimumAge: 18, ofac: true }),
      disclosing('FRA'),
      disclosing('GBR'),
      registerLinked(system, { human }),
      registerLinked(system, { human }),
      registerLinked(system, { document: mockDocumentFor(newAccount().address, { expiryDate: isoIn(10) }) }),
    ]);
    expect(t1.nullifier).toBe(t2.nullifier);
    [plain, adult, french, british, expiring] = [secp(p), secp(a), f, b, secp(e)];
    twins = [secp(t1), secp(t2)];
  });

  it('minimumAge: 403 for a human who proved no age, in for one over 18', async () => {
    const policy = { minimumAge: 18 };
    expect(await ask(policy, plain)).toEqual({
      status: 403,
      body: { policy: 'minimumAge', error: 'The human proved no minimum age; this service needs 18 or over: prove minimumAge 18 or more' },
    });
    expect(await ask(policy, adult)).toEqual({ status: 200 });
  });

  it('ofac: 403 when the proof does not show the checks passed, in when it does', async () => {
    const policy = { ofac: true };
    expect(await ask(policy, plain)).toEqual({
      status: 403,
      body: { policy: 'ofac', error: expect.stringMatching(/^The proof does not show the OFAC checks passed/) },
    });
    expect(await ask(policy, adult)).toEqual({ status: 200 });
  });

  it('nationalities: 403 for an undisclosed, a not allowed or a denied nationality, in otherwise', async () => {
    const allow = { nationalities: { allow: ['GBR'] } };
    const deny = { nationalities: { deny: ['FRA'] } };
    expect(await ask(allow, plain)).toEqual({
      status: 403,
      body: {
        policy: 'nationalities',
        error: 'The human did not disclose a nationality, which this service checks: prove with nationality disclosed',
      },
    });
    expect(await ask(allow, french)).toEqual({
      status: 403,
      body: { policy: 'nationalities', error: 'Nationality FRA is not accepted; this service accepts GBR' },
    });
    expect(await ask(deny, french)).toEqual({
      status: 403,
      body: { policy: 'nationalities', error: 'Nationality FRA is not accepted; this service refuses FRA' },
    });
    expect(await ask(allow, british)).toEqual({ status: 200 });
    expect(await ask(deny, british)).toEqual({ status: 200 });
  });

  it('maxAgentsPerHuman: 403 for an agent of a human with two, in for a human with one', async () => {
    const policy = { maxAgentsPerHuman: 1 };
    for (const twin of twins) {
      expect(await ask(policy, twin)).toEqual({
        status: 403,
        body: {
          policy: 'maxAgentsPerHuman',
          error: 'The human has 2 live agents; this service accepts humans with at most 1: deregister 1',
        },
      });
    }
    expect(await ask(policy, plain)).toEqual({ status: 200 });
  });

  it("maxProofAgeS: 403 for a proof that looks old (its expiry capped by the document's), in for a fresh one", async () => {
    // the proof's time is estimated as its expiry less the registry's maximum proof age (365 days): a proof capped
    // by a document that expires in 10 days looks about 355 days old
    const policy = { maxProofAgeS: 30 * DAY_S };
    expect(await ask(policy, expiring)).toEqual({
      status: 403,
      body: {
        policy: 'maxProofAgeS',
        error: expect.stringMatching(
          /^The human's proof is about 35\d days old; this service accepts proofs at most 30 days old: refresh the proof$/,
        ),
      },
    });
    expect(await ask(policy, plain)).toEqual({ status: 200 });
  });

  it('minimumStrength: 403 for an agent proved through a weaker provider, in when the bar is lower', async () => {
    // a deployment of its own, whose operator makes a provider of strength 60 the one the identity hub records
    const weakSystem = await deployTestSystem('testnet');
    const { abi, bytecode } = testProviderArtifact();
    const deployed = await mined(weakSystem, weakSystem.operator.deployContract({ abi, bytecode, args: ['weak', 60] }));
    await mined(weakSystem, registryAs(weakSystem, weakSystem.operator).write.setSelfProofProvider([getAddress(deployed.contractAddress!)]));
    const weak = secp(await registerLinked(weakSystem));
    const askWeak = asker(weakSystem);
    expect(await askWeak({ minimumStrength: 80 }, weak)).toEqual({
      status: 403,
      body: {
        policy: 'minimumStrength',
        error: "The proof provider's strength is 60; this service needs 80 or more: prove with a stronger provider",
      },
    });
    expect(await askWeak({ minimumStrength: 50 }, weak)).toEqual({ status: 200 });
  });

  it('a policy that is not valid is the service’s mistake: the verifier is not built', () => {
    const chain = { network: 'testnet', rpcUrl: system.rpcUrl, registry: system.deployment.contracts.registry } as const;
    expect(() => createAgentVerifier({ ...chain, policy: { minimumAge: -1 } })).toThrow(RangeError);
    expect(() => requireAgent({ ...chain, policy: { nationalities: { allow: ['GBR'], deny: ['GBR'] } } })).toThrow(/both allowed and denied/);
  });

  describe('a per-human quota, through requireAgent in an Express app', () => {
    let server: Server;
    let url: string;

    beforeAll(async () => {
      const app = express();
      const quota = requireAgent({
        network: 'testnet',
        rpcUrl: system.rpcUrl,
        registry: system.deployment.contracts.registry,
        policy: { quota: { limit: 2, windowS: 3600 } },
      });
      app.post('/orders', express.text({ type: '*/*' }), quota, (req, res) => {
        res.json({ agentId: String(req.agent?.agentId), remaining: req.agent?.quota?.remaining });
      });
      server = createServer(app).listen(0, '127.0.0.1');
      await new Promise<void>((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
    });

    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });

    const order = async (signer: RequestSigner) => {
      const res = await signingFetch(signer)(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ serial: ++serial }),
      });
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { remaining?: number; error?: string; policy?: string },
      };
    };

    it("two agents of one human share one budget; another human's agent has its own", async () => {
      const [first, second] = twins;
      expect(await order(first)).toMatchObject({ status: 200, body: { remaining: 1 } });
      expect(await order(second)).toMatchObject({ status: 200, body: { remaining: 0 } });
      for (const twin of twins) {
        const refused = await order(twin);
        expect(refused).toEqual({
          status: 429,
          retryAfter: expect.stringMatching(/^\d+$/),
          body: {
            policy: 'quota',
            error: expect.stringMatching(
              /^Quota exhausted: at most 2 requests per 3600 s per human, shared by all of the human's agents; retry in \d+ s$/,
            ),
          },
        });
        const retryAfter = Number(refused.retryAfter);
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(3600);
      }
      // another human: a budget of their own
      expect(await order(plain)).toMatchObject({ status: 200, body: { remaining: 1 } });
      expect(await order(plain)).toMatchObject({ status: 200, body: { remaining: 0 } });
      expect((await order(plain)).status).toBe(429);
    });
  });
});
