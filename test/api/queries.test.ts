// The public query endpoints over real chains: answers about real registered agents (linked and wallet-free),
// the exact no-proof bodies, agents per human and per nullifier, cards against the A2A schema, the discovery
// documents, the redirect, and every error status.
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import type { Express } from 'express';
import request from 'supertest';
import { type Address, getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRATION_MODES } from '../../src/core/registration-modes.js';
import { expectSubmitted, linkedData, newAccount, type RegisteredAgent, registerLinked, registerWalletFree, submitProof } from '../support/agents.js';
import type { LocalChainWallet, TestSystem } from '../support/chain.js';
import { A2A_SCHEMA, a2aCardValidator, deregisterByProof, eventually, type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { blockTimestamp, mined, registryAs, setMaxAgentsPerHuman } from '../support/registry.js';
import { hasSharedFile, unlessShared } from '../support/shared.js';

const TESTNET = 11142220;
const MAINNET = 42220;
const PUBLIC_URL = 'https://registry.example';
const ZERO = '0x0000000000000000000000000000000000000000';
const NEVER_MINTED = 987_654;

const NO_PROOF = {
  isVerified: false,
  proofProvider: ZERO,
  isSelfProvider: false,
  verificationStrength: 0,
  strengthLabel: 'None',
  humanNullifier: '0',
  agentCountForHuman: 0,
};

describe('public queries', () => {
  let networks: TestNetworks;
  let system: TestSystem;
  let q: QueryTestApp;
  let app: Express;
  let humanWallet: LocalChainWallet;
  let human: Address;
  /** Linked to `human`, disclosed age 18, OFAC and nationality; has metadata. */
  let linked: RegisteredAgent;
  /** A second agent of the same human (same passport, so the same nullifier). */
  let linked2: RegisteredAgent;
  /** Wallet-free, `human` as its guardian. */
  let walletFree: RegisteredAgent;

  const get = (path: string) => request(app).get(path);

  beforeAll(async () => {
    networks = await deployTestNetworks();
    system = networks.testnet;
    q = await queryTestApp(networks, { publicUrl: PUBLIC_URL });
    app = q.app;
    await setMaxAgentsPerHuman(system, 0n);
    humanWallet = await system.newWallet();
    human = humanWallet.account.address;

    const agent = newAccount();
    const proof = await submitProof(system, {
      userId: human,
      userDefinedData: await linkedData(system, agent, human, 4),
      disclosures: { minimumAge: 18, ofac: true, nationality: true },
    });
    expectSubmitted(proof);
    const agentKey = `0x${'0'.repeat(24)}${agent.address.slice(2).toLowerCase()}` as const;
    linked = { agentId: await system.gateway.registry.agentIdOf(agentKey), agent, agentKey, human, txHash: proof.txHash, nullifier: proof.nullifier };
    linked2 = await registerLinked(system, { human });
    walletFree = await registerWalletFree(system, { guardian: human });
    await mined(
      system,
      registryAs(system, humanWallet).write.updateAgentMetadata([
        linked.agentId,
        JSON.stringify({
          name: 'Research assistant',
          description: 'Finds papers',
          url: 'https://assistant.example/a2a',
          version: '0.4.0',
          skills: [{ id: 'search', name: 'Search', description: 'Search papers', tags: ['research'] }],
        }),
      ]),
    );
    await q.services.queries.syncNow();
  });

  afterAll(async () => {
    await q?.stop();
  });

  describe('GET /api/agent/info/{chainId}/{agentId}', () => {
    it("answers the interface's fields about a linked agent; registeredAt is the registering block's time", async () => {
      const res = await get(`/api/agent/info/${TESTNET}/${linked.agentId}`);
      expect(res.status).toBe(200);
      const receipt = await system.client.getTransactionReceipt({ hash: linked.txHash });
      expect(res.body).toEqual({
        agentId: Number(linked.agentId),
        chainId: TESTNET,
        agentAddress: linked.agent.address,
        isVerified: true,
        proofProvider: system.deployment.contracts.proofProvider,
        verificationStrength: 100,
        strengthLabel: 'passport',
        // the hub always reports the document's expiry date
        credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true], expiryDate: expect.stringMatching(/^\d\d-\d\d-\d\d$/) },
        registeredAt: Number(await blockTimestamp(system, receipt.blockNumber)),
        network: 'testnet',
      });
    });

    it('a wallet-free agent: its own address; undisclosed credentials still have the three fields', async () => {
      const res = await get(`/api/agent/info/${TESTNET}/${walletFree.agentId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        agentId: Number(walletFree.agentId),
        agentAddress: walletFree.agent.address,
        isVerified: true,
        credentials: { nationality: '', olderThan: 0, ofac: [false, false, false] },
      });
    });
  });

  describe('GET /api/agent/verify/{chainId}/{agentId}', () => {
    it("a verified agent: the registry's own provider, the human's nullifier and agent count", async () => {
      const res = await get(`/api/agent/verify/${TESTNET}/${linked.agentId}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        agentId: Number(linked.agentId),
        chainId: TESTNET,
        isVerified: true,
        proofProvider: system.deployment.contracts.proofProvider,
        isSelfProvider: true,
        verificationStrength: 100,
        strengthLabel: 'passport',
        humanNullifier: linked.nullifier.toString(),
        agentCountForHuman: 2,
      });
    });

    it('an agent never minted gets exactly the no-proof body', async () => {
      const res = await get(`/api/agent/verify/${TESTNET}/${NEVER_MINTED}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ agentId: NEVER_MINTED, chainId: TESTNET, ...NO_PROOF });
      const mainnet = await get(`/api/agent/verify/${MAINNET}/${linked.agentId}`);
      expect(mainnet.body).toEqual({ agentId: Number(linked.agentId), chainId: MAINNET, ...NO_PROOF });
    });
  });

  describe('GET /api/verify-status/{chainId}/{agentId}', () => {
    it('a verified agent: proof type, registration block as text, provider', async () => {
      const res = await get(`/api/verify-status/${TESTNET}/${linked.agentId}`);
      const receipt = await system.client.getTransactionReceipt({ hash: linked.txHash });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        verified: true,
        proofType: 'passport',
        registeredAtBlock: receipt.blockNumber.toString(),
        providerAddress: system.deployment.contracts.proofProvider,
      });
    });

    it('an agent without a proof: only {"verified": false}', async () => {
      const res = await get(`/api/verify-status/${TESTNET}/${NEVER_MINTED}`);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ verified: false });
    });
  });

  it('GET /api/reputation: the provider strength as score, its name and the proof type', async () => {
    const res = await get(`/api/reputation/${TESTNET}/${walletFree.agentId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ score: 100, hasProof: true, providerName: 'self', proofType: 'passport' });
  });

  describe('GET /api/agent/agents/{chainId}/{address}', () => {
    it('the agents a wallet owns or guards, in id order', async () => {
      const res = await get(`/api/agent/agents/${TESTNET}/${human.toLowerCase()}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        agents: [linked.agentId, linked2.agentId, walletFree.agentId].map(Number).sort((a, b) => a - b),
        chainId: TESTNET,
        humanAddress: human,
      });
    });

    it("a wallet-free agent's own address finds it; an unknown address and another chain find none", async () => {
      expect((await get(`/api/agent/agents/${TESTNET}/${walletFree.agent.address}`)).body.agents).toEqual([Number(walletFree.agentId)]);
      expect((await get(`/api/agent/agents/${TESTNET}/${newAccount().address}`)).body.agents).toEqual([]);
      const mainnet = await get(`/api/agent/agents/${MAINNET}/${human}`);
      expect(mainnet.body).toEqual({ agents: [], chainId: MAINNET, humanAddress: human });
    });
  });

  describe('GET /api/agent/agents-by-nullifier/{chainId}/{nullifier}', () => {
    it("the human's live agents, in id order", async () => {
      const res = await get(`/api/agent/agents-by-nullifier/${TESTNET}/${linked.nullifier}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        nullifier: linked.nullifier.toString(),
        agents: [Number(linked.agentId), Number(linked2.agentId)],
        chainId: TESTNET,
      });
    });

    it('a nullifier without agents: an empty list', async () => {
      const res = await get(`/api/agent/agents-by-nullifier/${TESTNET}/12345`);
      expect(res.body).toEqual({ nullifier: '12345', agents: [], chainId: TESTNET });
    });
  });

  describe.skipIf(!hasSharedFile(A2A_SCHEMA))(unlessShared(A2A_SCHEMA, 'GET /api/cards/{chainId}/{agentId}'), () => {
    let validate: ValidateFunction;
    // biome-ignore lint/suspicious/noDuplicateTestHooks: the hook of this nested describe.skipIf block, which biome takes for the outer one
    beforeAll(() => {
      validate = a2aCardValidator();
    });

    it("the owner's card from chain, with the proof-of-human block; valid against the A2A AgentCard schema", async () => {
      const res = await get(`/api/cards/${TESTNET}/${linked.agentId}`);
      expect(res.status).toBe(200);
      expect(validate(res.body) ? [] : validate.errors).toEqual([]);
      expect(res.body).toMatchObject({
        protocolVersion: '0.3.0',
        name: 'Research assistant',
        description: 'Finds papers',
        url: 'https://assistant.example/a2a',
        version: '0.4.0',
        skills: [{ id: 'search', name: 'Search', description: 'Search papers', tags: ['research'] }],
        registrations: [{ agentId: Number(linked.agentId), agentRegistry: `eip155:${TESTNET}:${system.deployment.contracts.registry}` }],
        proofOfHuman: {
          agentId: Number(linked.agentId),
          registry: system.deployment.contracts.registry,
          chainId: TESTNET,
          proofProvider: system.deployment.contracts.proofProvider,
          verificationStrength: 100,
          isVerified: true,
          credentials: { nationality: 'GBR', olderThan: 18, ofac: [true, true, true] },
        },
      });
    });

    it('an agent without metadata still gets a valid card, "Agent #<id>", pointing at the registry\'s A2A endpoint', async () => {
      const res = await get(`/api/cards/${TESTNET}/${walletFree.agentId}`);
      expect(res.status).toBe(200);
      expect(validate(res.body) ? [] : validate.errors).toEqual([]);
      expect(res.body).toMatchObject({ name: `Agent #${walletFree.agentId}`, url: `${PUBLIC_URL}/api/a2a`, skills: [] });
    });
  });

  describe('GET /.well-known/a2a/{agentId}', () => {
    it('redirects (307) to the card on the given chain, mainnet by default', async () => {
      const res = await get(`/.well-known/a2a/${linked.agentId}?chain=${TESTNET}`);
      expect(res.status).toBe(307);
      expect(res.headers['location']).toBe(`/api/cards/${TESTNET}/${linked.agentId}`);
      const byDefault = await get(`/.well-known/a2a/${linked.agentId}`);
      expect(byDefault.status).toBe(307);
      expect(byDefault.headers['location']).toBe(`/api/cards/${MAINNET}/${linked.agentId}`);
    });

    it('refuses an unsupported chain and a malformed agent id', async () => {
      const chain = await get(`/.well-known/a2a/1?chain=44787`);
      expect(chain.status).toBe(400);
      expect(chain.body.error).toMatch(/^chain: .*44787/);
      const id = await get(`/.well-known/a2a/abc`);
      expect(id.status).toBe(400);
      expect(id.body.error).toMatch(/^agentId: /);
    });
  });

  it("GET /.well-known/self-agent-id.json: exactly the interface's fields, the JWKS, the credential, the signed documents, every endpoint and the signing schemes", async () => {
    const res = await get('/.well-known/self-agent-id.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'name',
        'version',
        'apiBase',
        'networks',
        'registrationModes',
        'capabilities',
        'sessionTtlMs',
        'jwksUri',
        'agentCredential',
        'proofOfHumanExtension',
        'signedRegistrationFile',
        'endpoints',
        'signingSchemes',
        'chains',
        'mcp',
      ].sort(),
    );
    expect(res.body).toEqual({
      name: 'Agent Identity Registry',
      version: expect.any(String),
      apiBase: `${PUBLIC_URL}/api/agent`,
      networks: ['mainnet', 'testnet'],
      registrationModes: [...REGISTRATION_MODES],
      capabilities: ['register', 'deregister', 'verify', 'credentials', 'agent-card', 'a2a'],
      sessionTtlMs: 1_800_000,
      jwksUri: `${PUBLIC_URL}/.well-known/jwks.json`,
      agentCredential: {
        endpoint: `${PUBLIC_URL}/api/agent/credential`,
        format: 'dc+sd-jwt',
        vct: 'urn:agent-identity-registry:vct:human-backed-agent:1',
        statusListUri: `${PUBLIC_URL}/api/credentials/status/{listId}`,
      },
      proofOfHumanExtension: `${PUBLIC_URL}/extensions/proof-of-human/v1`,
      signedRegistrationFile: `${PUBLIC_URL}/.well-known/agent-registration.json.jws`,
      endpoints: expect.objectContaining({ openapi: `${PUBLIC_URL}/openapi.json`, llmsTxt: `${PUBLIC_URL}/llms.txt` }),
      signingSchemes: expect.any(Array),
      // the service runs these chains itself (embedded), so it names their RPC too
      chains: {
        mainnet: { chainId: 42220, registry: networks.mainnet.deployment.contracts.registry, rpcUrl: networks.mainnet.rpcUrl },
        testnet: { chainId: 11142220, registry: networks.testnet.deployment.contracts.registry, rpcUrl: networks.testnet.rpcUrl },
      },
      mcp: { endpoint: `${PUBLIC_URL}/mcp`, transport: 'streamable-http', protocolVersion: LATEST_PROTOCOL_VERSION },
    });
    expect(REGISTRATION_MODES).toHaveLength(6);
  });

  it('GET /.well-known/agent-registration.json: the ERC-8004 registration file of the service', async () => {
    const res = await get('/.well-known/agent-registration.json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1',
      name: 'Agent Identity Registry',
      description: expect.any(String),
      active: true,
      registrations: [],
    });
    expect(res.body.services).toEqual(
      expect.arrayContaining([
        { name: 'A2A', endpoint: `${PUBLIC_URL}/api/a2a`, version: '0.3.0' },
        { name: 'web', endpoint: PUBLIC_URL },
      ]),
    );
  });

  describe('errors', () => {
    const agentPaths = ['/api/agent/info', '/api/agent/verify', '/api/cards', '/api/reputation', '/api/verify-status'];

    it('400 for a chain other than 42220 and 11142220, naming chainId', async () => {
      const paths = [...agentPaths.map((p) => `${p}/{chain}/1`), `/api/agent/agents/{chain}/${human}`, '/api/agent/agents-by-nullifier/{chain}/1'];
      for (const path of paths) {
        for (const chain of ['1', '44787', 'mainnet', '0x a']) {
          const res = await get(path.replace('{chain}', encodeURIComponent(chain)));
          expect(res.status, `${path} ${chain}`).toBe(400);
          expect(res.body.error, path).toMatch(/^chainId: unsupported chain/);
        }
      }
    });

    it('400 for a malformed agentId, naming it (hex, zero, negative, fractions and too large are refused)', async () => {
      for (const path of agentPaths) {
        for (const agentId of ['abc', '0', '-1', '0x1', '1.5', '1e3', '9007199254740992', ' 1']) {
          const res = await get(`${path}/${TESTNET}/${encodeURIComponent(agentId)}`);
          expect(res.status, `${path} ${agentId}`).toBe(400);
          expect(res.body.error).toMatch(/^agentId: /);
        }
      }
    });

    it('400 for a malformed address or nullifier, naming it', async () => {
      for (const address of ['abc', '0x1234', `${human}00`, human.slice(2)]) {
        const res = await get(`/api/agent/agents/${TESTNET}/${address}`);
        expect(res.status, address).toBe(400);
        expect(res.body.error).toMatch(/^address: /);
      }
      for (const nullifier of ['abc', '0x12', '-1', '1.0', (2n ** 256n).toString()]) {
        const res = await get(`/api/agent/agents-by-nullifier/${TESTNET}/${encodeURIComponent(nullifier)}`);
        expect(res.status, nullifier).toBe(400);
        expect(res.body.error).toMatch(/^nullifier: /);
      }
    });

    it('404 {"error": "Agent <id> not found on chain <chainId>"} for an agent never minted (info, card, reputation)', async () => {
      for (const path of ['/api/agent/info', '/api/cards', '/api/reputation']) {
        const res = await get(`${path}/${TESTNET}/${NEVER_MINTED}`);
        expect(res.status, path).toBe(404);
        expect(res.body).toEqual({ error: `Agent ${NEVER_MINTED} not found on chain ${TESTNET}` });
        const mainnet = await get(`${path}/${MAINNET}/${linked.agentId}`);
        expect(mainnet.body).toEqual({ error: `Agent ${linked.agentId} not found on chain ${MAINNET}` });
      }
    });

    it("404 for a burned agent; verify and verify-status answer the no-proof bodies; it leaves its human's lists", async () => {
      const doomed = await registerWalletFree(system, { guardian: human });
      await q.services.queries.syncNow();
      expect((await get(`/api/agent/info/${TESTNET}/${doomed.agentId}`)).status).toBe(200);
      expect((await get(`/api/agent/agents/${TESTNET}/${human}`)).body.agents).toContain(Number(doomed.agentId));

      await deregisterByProof(system, { human: doomed.human, agent: doomed.agent.address });
      const gone = await eventually(
        () => get(`/api/agent/info/${TESTNET}/${doomed.agentId}`),
        (res) => res.status === 404,
        3_000,
      );
      expect(gone.value.body).toEqual({ error: `Agent ${doomed.agentId} not found on chain ${TESTNET}` });
      for (const path of ['/api/cards', '/api/reputation']) {
        expect((await get(`${path}/${TESTNET}/${doomed.agentId}`)).status, path).toBe(404);
      }
      expect((await get(`/api/agent/verify/${TESTNET}/${doomed.agentId}`)).body).toEqual({
        agentId: Number(doomed.agentId),
        chainId: TESTNET,
        ...NO_PROOF,
      });
      expect((await get(`/api/verify-status/${TESTNET}/${doomed.agentId}`)).body).toStrictEqual({ verified: false });
      expect((await get(`/api/agent/agents/${TESTNET}/${human}`)).body.agents).not.toContain(Number(doomed.agentId));
      expect((await get(`/api/agent/agents/${TESTNET}/${getAddress(doomed.agent.address)}`)).body.agents).toEqual([]);
      expect((await get(`/api/agent/agents-by-nullifier/${TESTNET}/${doomed.nullifier}`)).body.agents).toEqual([]);
    });
  });
});
