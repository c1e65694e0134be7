// The registration flow as the API tests drive it: both test networks behind one ChainGateway, and the
// human's phone (the mock identity app) working from the deep link alone — prove on the link's chain for the
// link's request, then report to the link's deeplinkCallback exactly as the app does.
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { type SelfApp, selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { provisionDemoAgent } from '../../src/demo/demo-agent.js';
import { type MockDocument, mockDocumentFor, type ProveResult, proofRequestFromDeepLink, prove } from '../../src/identity-app/index.js';
import { deployTestSystem, type TestSystem } from './chain.js';

export interface TestNetworks {
  mainnet: TestSystem;
  testnet: TestSystem;
  /** What the service is given: both systems' gateways. */
  chains: ChainGateway;
}

export async function deployTestNetworks(): Promise<TestNetworks> {
  const [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet')]);
  return { mainnet, testnet, chains: new ChainGateway({ mainnet: mainnet.gateway, testnet: testnet.gateway }) };
}

/**
 * A human of their own: a mock passport whose document number (hence nullifier) no other test uses. The
 * registry allows one agent per human by default, so every registration that is not about that limit
 * brings a new document.
 */
export const newDocument = (overrides: Partial<MockDocument> = {}): MockDocument =>
  mockDocumentFor(`api-test:${randomBytes(8).toString('hex')}`, overrides);

export const selfAppOf = (deepLink: string): SelfApp => selfAppFromDeepLink(deepLink);

/** Path and query of the deep link's callback URL, to send it to the app under test. */
export function callbackTarget(deepLink: string): string {
  const url = new URL(selfAppOf(deepLink).deeplinkCallback);
  return `${url.pathname}${url.search}`;
}

/** The callback-scoped token inside the deep link. */
export function callbackTokenOf(deepLink: string): string {
  const token = new URL(selfAppOf(deepLink).deeplinkCallback).searchParams.get('token');
  if (!token) throw new Error('the deep link callback carries no token');
  return token;
}

/** The test system serving the deep link's chain (the phone knows chains by id). */
export function systemFor(networks: TestNetworks, deepLink: string): TestSystem {
  const { chainId } = proofRequestFromDeepLink(deepLink);
  const system = [networks.mainnet, networks.testnet].find((s) => s.deployment.chainId === chainId);
  if (!system) throw new Error(`no test system for chain ${chainId}`);
  return system;
}

export interface ApproveOptions {
  /** The passport the human scans; default: a new human (newDocument()). */
  document?: MockDocument;
  /** Report to the callback (default true); false plays an app whose callback never arrives. */
  callback?: boolean;
}

export interface Approval {
  proof: ProveResult;
  /** The service's answer to the app's callback. */
  callback?: request.Response;
}

/**
 * The human approves in the identity app: attest the document's disclosure for the deep link's request,
 * submit verifySelfProof from a funded relayer, then POST {"status":"success","txHash"} or
 * {"status":"error","error"} to the deep link's callback.
 */
export async function approveDeepLink(app: Express, networks: TestNetworks, deepLink: string, options: ApproveOptions = {}): Promise<Approval> {
  const system = systemFor(networks, deepLink);
  const proof = await prove({
    client: system.client,
    wallet: await system.newWallet(),
    attester: system.attester,
    request: proofRequestFromDeepLink(deepLink),
    document: options.document ?? newDocument(),
  });
  if (options.callback === false) return { proof };
  const body = proof.status === 'submitted' ? { status: 'success', txHash: proof.txHash } : { status: 'error', error: proof.reason };
  const callback = await request(app).post(callbackTarget(deepLink)).send(body);
  return { proof, callback };
}

/** The demo agent of the test network, provisioned as the service does it, its key kept in `dataDir`. */
export async function provisionTestnetDemoAgent(networks: TestNetworks, dataDir: string): ReturnType<typeof provisionDemoAgent> {
  return provisionDemoAgent({
    dataDir,
    network: 'testnet',
    gateway: networks.testnet.gateway,
    wallet: await networks.testnet.newWallet(),
    attester: networks.testnet.attester,
  });
}
