// An agent registered the way a user does it (REST session, the mock identity app approving, key export), as a
// request signer.
import type { Express } from 'express';
import request from 'supertest';
import { privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import type { RequestSigner } from '../../src/core/signed-request.js';
import type { MockDocument } from '../../src/identity-app/index.js';
import { eventually } from './queries.js';
import { approveDeepLink, newDocument, type TestNetworks } from './registration-flow.js';

export interface RegisteredSigner {
  signer: RequestSigner;
  /** The exported key: privateKey, publicKey (Ed25519), agentAddress, agentId. */
  key: { privateKey: `0x${string}`; publicKey?: `0x${string}`; agentAddress: string; agentId: number };
}

export async function registeredSigner(
  app: Express,
  networks: TestNetworks,
  options: { mode: 'wallet-free' | 'ed25519'; disclosures?: object; document?: MockDocument },
): Promise<RegisteredSigner> {
  const opened = await request(app)
    .post('/api/agent/register')
    .send({ mode: options.mode, network: 'testnet', ...(options.disclosures ? { disclosures: options.disclosures } : {}) });
  expect(opened.status).toBe(200);
  await approveDeepLink(app, networks, opened.body.deepLink, { document: options.document ?? newDocument() });
  const status = async () => (await request(app).get('/api/agent/register/status').query({ token: opened.body.sessionToken })).body;
  expect((await eventually(status, (s) => s.stage === 'completed', 10_000)).value.stage).toBe('completed');
  const exported = await request(app).post('/api/agent/register/export').send({ token: opened.body.sessionToken });
  expect(exported.status).toBe(200);
  const key = exported.body as RegisteredSigner['key'];
  const signer: RequestSigner =
    options.mode === 'ed25519' ? { type: 'ed25519', seed: key.privateKey } : { type: 'secp256k1', account: privateKeyToAccount(key.privateKey) };
  return { signer, key };
}
