// The registration flow of each of the six modes over real HTTP and real chains: open a session, the human
// approves in the identity app from the deep link alone, the session completes with the agent's id, the
// proof's transaction and the disclosed credentials, the key is exported where the service holds it, and
// the chain agrees: the key is a verified agent, owned (and guarded) by whom the mode says.
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Express } from 'express';
import request from 'supertest';
import { type Address, bytesToHex, getAddress, type Hex, hexToBytes, isAddress, type LocalAccount, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import type { PublicCredentials } from '../../src/core/credentials.js';
import { ed25519AgentAddress } from '../../src/core/ed25519-key.js';
import { expectSubmitted, newAccount } from '../support/agents.js';
import { testApp } from '../support/app.js';
import type { TestSystem } from '../support/chain.js';
import { approveDeepLink, deployTestNetworks, newDocument, selfAppOf, type TestNetworks } from '../support/registration-flow.js';
import { registryEvents, registryOf } from '../support/registry.js';

const THIRTY_MINUTES = 30 * 60 * 1000;
/** What the default mock passport discloses whatever is asked: the registry caps the proof by its expiry. */
const PASSPORT_EXPIRY = '01-01-35';

type Body = Record<string, unknown>;

describe('registration modes, end to end', () => {
  let net: TestNetworks;
  let testnet: TestSystem;

  beforeAll(async () => {
    net = await deployTestNetworks();
    testnet = net.testnet;
  });

  /** A fresh service (its own store, so its own rate-limit counters) over the shared chains. */
  const newApp = (): Express => testApp(net.chains).app;

  async function register(app: Express, body: Body): Promise<Body> {
    const res = await request(app).post('/api/agent/register').send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.body as Body;
  }

  /** The fields every registration session answer has, whatever the mode. */
  function expectSessionShape(session: Body, mode: string, network: string): void {
    expect(session).toMatchObject({ mode, network, stage: 'qr-ready' });
    expect(typeof session['sessionToken']).toBe('string');
    expect(isAddress(session['agentAddress'] as string, { strict: true })).toBe(true);
    expect(session['agentAddress']).toBe(getAddress(session['agentAddress'] as string));
    expect(session['deepLink']).toMatch(/^[a-z][a-z0-9+.-]*:\/\/verify\?scope=/);
    expect(session['qrData']).toBe(session['deepLink']);
    expect(session['qrImageBase64']).toMatch(/^iVBORw0KGgo/);
    expect(typeof session['scanUrl']).toBe('string');
    expect(Date.parse(session['expiresAt'] as string)).not.toBeNaN();
    expect(session['timeRemainingMs']).toBeGreaterThan(THIRTY_MINUTES - 60_000);
    expect(session['timeRemainingMs']).toBeLessThanOrEqual(THIRTY_MINUTES);
    expect(Array.isArray(session['humanInstructions'])).toBe(true);
    expect((session['humanInstructions'] as unknown[]).length).toBeGreaterThan(0);
  }

  /** The deep link alone names the registry, the chain, whom the proof is for and what to disclose. */
  function expectDeepLink(session: Body, system: TestSystem, userId: Address, disclosures: Body): void {
    const app = selfAppOf(session['deepLink'] as string);
    expect(app.endpoint).toBe(system.deployment.contracts.registry);
    expect(app.chainID).toBe(system.deployment.chainId);
    expect(app.userId).toBe(userId.slice(2).toLowerCase());
    expect(app.disclosures).toEqual(disclosures);
    expect(app.deeplinkCallback).toMatch(/^https?:\/\/.+\/api\/agent\/register\/callback\?token=.+/);
  }

  interface Completed {
    status: Body;
    txHash: Hex;
    agentId: bigint;
  }

  /** The human approves; the callback and then the status report the session completed. */
  async function approveAndPoll(app: Express, session: Body, system: TestSystem = testnet): Promise<Completed> {
    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string);
    expectSubmitted(proof);
    expect(callback?.status, JSON.stringify(callback?.body)).toBe(200);
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });

    const res = await request(app).get('/api/agent/register/status').query({ token: session['sessionToken'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const status = res.body as Body;
    expect(status).toMatchObject({
      stage: 'completed',
      agentAddress: session['agentAddress'],
      mode: session['mode'],
      network: session['network'],
      txHash: proof.txHash,
    });
    expect(status['expiresAt']).toBe(session['expiresAt']);
    expect(Number.isSafeInteger(status['agentId'])).toBe(true);
    const agentId = BigInt(status['agentId'] as number);
    expect(agentId).toBeGreaterThan(0n);
    // The reported transaction is the one that registered this agent.
    const registered = (await registryEvents(system, proof.txHash)).filter((e) => e.eventName === 'Registered');
    expect(registered.map((e) => (e.args as { agentId: bigint }).agentId)).toEqual([agentId]);
    return { status, txHash: proof.txHash, agentId };
  }

  /** On chain: the agent key maps to the id, is verified, and the NFT's owner and guardian are as the mode says. */
  async function expectOnChain(system: TestSystem, agentKey: Hex, agentId: bigint, expected: { owner: Address; guardian: Address }): Promise<void> {
    const registry = registryOf(system);
    expect(await system.gateway.registry.agentIdOf(agentKey)).toBe(agentId);
    expect(await system.gateway.registry.isVerifiedAgent(agentKey)).toBe(true);
    expect(await registry.read.ownerOf([agentId])).toBe(expected.owner);
    expect(await registry.read.agentGuardian([agentId])).toBe(expected.guardian);
  }

  async function exportKey(app: Express, token: string): Promise<request.Response> {
    const res = await request(app).get('/api/agent/register/export').query({ token });
    expect(res.headers['cache-control']).toBe('no-store');
    return res;
  }

  /** Export of a generated secp256k1 key: the key is the agent's. */
  async function expectSecp256k1Export(app: Express, session: Body, agentId: bigint): Promise<Hex> {
    const res = await exportKey(app, session['sessionToken'] as string);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      keyType: 'secp256k1',
      agentAddress: session['agentAddress'],
      agentId: Number(agentId),
      network: session['network'],
      mode: session['mode'],
    });
    expect(res.body.privateKey).toMatch(/^0x[0-9a-f]{64}$/i);
    expect(privateKeyToAccount(res.body.privateKey as Hex).address).toBe(session['agentAddress']);
    return res.body.privateKey as Hex;
  }

  /** Export of a generated Ed25519 key: the seed gives the registered public key and the agent address. */
  async function expectEd25519Export(app: Express, session: Body, agentId: bigint): Promise<Hex> {
    const res = await exportKey(app, session['sessionToken'] as string);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      keyType: 'ed25519',
      agentAddress: session['agentAddress'],
      agentId: Number(agentId),
      network: session['network'],
      mode: session['mode'],
    });
    expect(res.body.privateKey).toMatch(/^0x[0-9a-f]{64}$/i);
    const publicKey = bytesToHex(ed25519.getPublicKey(hexToBytes(res.body.privateKey as Hex)));
    expect(res.body.publicKey).toBe(publicKey);
    expect(ed25519AgentAddress(publicKey)).toBe(session['agentAddress']);
    return publicKey;
  }

  async function expectExportRefused(app: Express, session: Body, why: RegExp): Promise<void> {
    const res = await exportKey(app, session['sessionToken'] as string);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatch(why);
    expect(JSON.stringify(res.body)).not.toMatch(/privateKey/);
  }

  /** The caller's own Ed25519 key signs the service's challenge (32 raw bytes). */
  async function ownEd25519Key(app: Express, humanAddress?: Address, prefixed = false) {
    const seed = ed25519.utils.randomSecretKey();
    const publicKey = bytesToHex(ed25519.getPublicKey(seed));
    const hex = (value: Hex): string => (prefixed ? value : value.slice(2));
    const challenge = await request(app)
      .post('/api/agent/register/ed25519-challenge')
      .send({ pubkey: hex(publicKey), network: 'testnet', ...(humanAddress ? { humanAddress } : {}) });
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    expect(challenge.body).toMatchObject({
      human: humanAddress ?? ed25519AgentAddress(publicKey),
      nonce: '0',
      chainId: testnet.deployment.chainId,
      registry: testnet.deployment.contracts.registry,
    });
    const signature = bytesToHex(ed25519.sign(hexToBytes(challenge.body.challengeHash as Hex), seed));
    return { publicKey, fields: { ed25519Pubkey: hex(publicKey), ed25519Signature: hex(signature) } };
  }

  /** A wallet-held (privy, smartwallet) agent key signs the service's ECDSA challenge. */
  async function walletHeldKey(app: Express, mode: 'privy' | 'smartwallet', humanAddress: Address, guardian?: LocalAccount) {
    const agent = newAccount();
    const challenge = await request(app)
      .post('/api/agent/register/challenge')
      .send({ mode, network: 'testnet', agentAddress: agent.address, humanAddress });
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    expect(challenge.body).toMatchObject({
      // K binds the agent to the human; W (smartwallet) binds it to itself.
      human: mode === 'privy' ? humanAddress : agent.address,
      nonce: '0',
      chainId: testnet.deployment.chainId,
      registry: testnet.deployment.contracts.registry,
    });
    const agentSignature = await agent.signMessage({ message: { raw: challenge.body.challengeHash as Hex } });
    // smartwallet: the guardian consents by signing the same challenge
    const guardianSignature = guardian ? await guardian.signMessage({ message: { raw: challenge.body.challengeHash as Hex } }) : undefined;
    return { agent, fields: { agentAddress: agent.address, agentSignature, ...(guardianSignature ? { guardianSignature } : {}) } };
  }

  const credentials = (c: Partial<PublicCredentials>): PublicCredentials => ({
    olderThan: 0,
    ofac: [false, false, false],
    expiryDate: PASSPORT_EXPIRY,
    ...c,
  });

  it('linked: a generated key, the NFT owned by the human; credentials as requested; the key exports', async () => {
    const app = newApp();
    const human = newAccount().address;
    const session = await register(app, {
      mode: 'linked',
      network: 'testnet',
      humanAddress: human,
      disclosures: { minimumAge: 18, nationality: true },
    });
    expectSessionShape(session, 'linked', 'testnet');
    expect(session['configIndex']).toBe(1);
    expectDeepLink(session, testnet, human, { minimumAge: 18, nationality: true });

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({ nationality: 'GBR', olderThan: 18 }));

    await expectSecp256k1Export(app, session, agentId);
    await expectOnChain(testnet, addressAgentKey(session['agentAddress'] as Address), agentId, { owner: human, guardian: zeroAddress });
  });

  it('wallet-free: a generated key that owns its own NFT, no human wallet; the key exports', async () => {
    const app = newApp();
    const session = await register(app, {
      mode: 'wallet-free',
      network: 'testnet',
      disclosures: { minimumAge: 21, ofac: true, name: true },
    });
    expectSessionShape(session, 'wallet-free', 'testnet');
    expect(session['configIndex']).toBe(5);
    const agent = session['agentAddress'] as Address;
    expectDeepLink(session, testnet, agent, { minimumAge: 21, ofac: true, name: true });

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({ olderThan: 21, ofac: [true, true, true], name: ['ALICE', 'SMITH'] }));

    await expectSecp256k1Export(app, session, agentId);
    await expectOnChain(testnet, addressAgentKey(agent), agentId, { owner: agent, guardian: zeroAddress });
  });

  it('ed25519 with a generated key: the derived address owns the NFT; the seed exports', async () => {
    const app = newApp();
    const session = await register(app, { mode: 'ed25519', network: 'testnet', disclosures: { nationality: true } });
    expectSessionShape(session, 'ed25519', 'testnet');
    const derived = session['agentAddress'] as Address;
    expectDeepLink(session, testnet, derived, { nationality: true });

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({ nationality: 'GBR' }));

    const publicKey = await expectEd25519Export(app, session, agentId);
    await expectOnChain(testnet, publicKey, agentId, { owner: derived, guardian: zeroAddress });
  });

  it("ed25519 with the caller's own key: registered after the challenge; export refused (never had the key)", async () => {
    const app = newApp();
    const own = await ownEd25519Key(app);
    const session = await register(app, { mode: 'ed25519', network: 'testnet', ...own.fields });
    expectSessionShape(session, 'ed25519', 'testnet');
    const derived = ed25519AgentAddress(own.publicKey);
    expect(session['agentAddress']).toBe(derived);
    expectDeepLink(session, testnet, derived, {});

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({}));

    await expectExportRefused(app, session, /never had/);
    await expectOnChain(testnet, own.publicKey, agentId, { owner: derived, guardian: zeroAddress });
  });

  it('ed25519-linked with a generated key: the human is the guardian; the seed exports', async () => {
    const app = newApp();
    const human = newAccount().address;
    const session = await register(app, {
      mode: 'ed25519-linked',
      network: 'testnet',
      humanAddress: human,
      disclosures: { minimumAge: 18 },
    });
    expectSessionShape(session, 'ed25519-linked', 'testnet');
    expectDeepLink(session, testnet, human, { minimumAge: 18 });

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({ olderThan: 18 }));

    const publicKey = await expectEd25519Export(app, session, agentId);
    await expectOnChain(testnet, publicKey, agentId, { owner: session['agentAddress'] as Address, guardian: human });
  });

  it("ed25519-linked with the caller's own key (0x-prefixed hex): the human is the guardian; export refused", async () => {
    const app = newApp();
    const human = newAccount().address;
    const own = await ownEd25519Key(app, human, true);
    const session = await register(app, { mode: 'ed25519-linked', network: 'testnet', humanAddress: human, ...own.fields });
    expectSessionShape(session, 'ed25519-linked', 'testnet');
    const derived = ed25519AgentAddress(own.publicKey);
    expect(session['agentAddress']).toBe(derived);
    expectDeepLink(session, testnet, human, {});

    const { agentId } = await approveAndPoll(app, session);

    await expectExportRefused(app, session, /never had/);
    await expectOnChain(testnet, own.publicKey, agentId, { owner: derived, guardian: human });
  });

  it('privy: the wallet-held key signs the challenge; the human owns the NFT; export refused', async () => {
    const app = newApp();
    const human = newAccount().address;
    const { agent, fields } = await walletHeldKey(app, 'privy', human);
    const session = await register(app, {
      mode: 'privy',
      network: 'testnet',
      humanAddress: human,
      disclosures: { minimumAge: 18, ofac: true, nationality: true },
      ...fields,
    });
    expectSessionShape(session, 'privy', 'testnet');
    expect(session['agentAddress']).toBe(agent.address);
    expect(session['configIndex']).toBe(4);
    expectDeepLink(session, testnet, human, { minimumAge: 18, ofac: true, nationality: true });

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({ nationality: 'GBR', olderThan: 18, ofac: [true, true, true] }));

    await expectExportRefused(app, session, /privy/);
    await expectOnChain(testnet, addressAgentKey(agent.address), agentId, { owner: human, guardian: zeroAddress });
  });

  it('smartwallet: the wallet-held key owns its NFT with the consenting wallet as guardian; export refused', async () => {
    const app = newApp();
    const guardian = newAccount();
    const human = guardian.address;
    const { agent, fields } = await walletHeldKey(app, 'smartwallet', human, guardian);
    const session = await register(app, { mode: 'smartwallet', network: 'testnet', humanAddress: human, ...fields });
    expectSessionShape(session, 'smartwallet', 'testnet');
    expect(session['agentAddress']).toBe(agent.address);
    expectDeepLink(session, testnet, agent.address, {});

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['credentials']).toEqual(credentials({}));

    await expectExportRefused(app, session, /smartwallet/);
    await expectOnChain(testnet, addressAgentKey(agent.address), agentId, { owner: agent.address, guardian: human });
  });

  it('the alias agent-identity is the linked mode', async () => {
    const app = newApp();
    const human = newAccount().address;
    const session = await register(app, { mode: 'agent-identity', network: 'testnet', humanAddress: human });
    expectSessionShape(session, 'linked', 'testnet');
    expectDeepLink(session, testnet, human, {});

    const { status, agentId } = await approveAndPoll(app, session);
    expect(status['mode']).toBe('linked');
    await expectSecp256k1Export(app, session, agentId);
    await expectOnChain(testnet, addressAgentKey(session['agentAddress'] as Address), agentId, { owner: human, guardian: zeroAddress });
  });

  it('the alias walletfree is the wallet-free mode', async () => {
    const app = newApp();
    const session = await register(app, { mode: 'walletfree', network: 'testnet' });
    expectSessionShape(session, 'wallet-free', 'testnet');
    const agent = session['agentAddress'] as Address;
    expectDeepLink(session, testnet, agent, {});

    const { agentId } = await approveAndPoll(app, session);
    await expectSecp256k1Export(app, session, agentId);
    await expectOnChain(testnet, addressAgentKey(agent), agentId, { owner: agent, guardian: zeroAddress });
  });

  it('without a network the session is on mainnet, where a real passport registers the agent', async () => {
    const app = newApp();
    const human = newAccount().address;
    const session = await register(app, { mode: 'linked', humanAddress: human });
    expectSessionShape(session, 'linked', 'mainnet');
    expectDeepLink(session, net.mainnet, human, {});

    const { proof, callback } = await approveDeepLink(app, net, session['deepLink'] as string, { document: newDocument({ mock: false }) });
    expectSubmitted(proof);
    expect(callback?.body).toEqual({ received: true, stage: 'completed' });
    const status = await request(app).get('/api/agent/register/status').set('Authorization', `Bearer ${session['sessionToken']}`);
    expect(status.body).toMatchObject({ stage: 'completed', network: 'mainnet', txHash: proof.txHash });
    const agentId = BigInt(status.body.agentId as number);

    await expectSecp256k1Export(app, session, agentId);
    await expectOnChain(net.mainnet, addressAgentKey(session['agentAddress'] as Address), agentId, { owner: human, guardian: zeroAddress });
    // Nothing of it on testnet.
    expect(await testnet.gateway.registry.agentIdOf(addressAgentKey(session['agentAddress'] as Address))).toBe(0n);
  });

  it("completes from the chain alone when the app's callback never arrives, with the registering transaction", async () => {
    const app = newApp();
    const session = await register(app, { mode: 'wallet-free', network: 'testnet' });
    const { proof } = await approveDeepLink(app, net, session['deepLink'] as string, { callback: false });
    expectSubmitted(proof);

    const res = await request(app).get('/api/agent/register/status').query({ token: session['sessionToken'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stage: 'completed', txHash: proof.txHash });
    const agentId = BigInt(res.body.agentId as number);
    expect(agentId).toBe(await testnet.gateway.registry.agentIdOf(addressAgentKey(session['agentAddress'] as Address)));
    await expectSecp256k1Export(app, session, agentId);
  });
});
