// Helpers for the deregistration, refresh and identify API tests: register an agent through the API for a
// given human (document), and the common error-case plumbing (manual clock, tampered token).
import type { Express } from 'express';
import request from 'supertest';
import type { Address } from 'viem';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { MockDocument } from '../../src/identity-app/index.js';
import { expectSubmitted, newAccount } from './agents.js';
import { approveDeepLink, newDocument, type TestNetworks } from './registration-flow.js';

export type Body = Record<string, unknown>;

export interface ApiAgent {
  agentId: number;
  agentAddress: Address;
  /** The NFT owner: the human's wallet (linked) or the derived address (ed25519). */
  owner: Address;
  document: MockDocument;
  mode: 'linked' | 'ed25519';
}

/** Registers an agent on testnet through POST /api/agent/register: an ECDSA agent (linked) or an Ed25519 one (generated key). */
export async function registerAgent(
  app: Express,
  net: TestNetworks,
  mode: 'linked' | 'ed25519',
  options: { document?: MockDocument; disclosures?: Body } = {},
): Promise<ApiAgent> {
  const document = options.document ?? newDocument();
  const human = newAccount().address;
  const res = await request(app)
    .post('/api/agent/register')
    .send({
      mode,
      network: 'testnet',
      ...(mode === 'linked' ? { humanAddress: human } : {}),
      ...(options.disclosures ? { disclosures: options.disclosures } : {}),
    });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const approval = await approveDeepLink(app, net, res.body.deepLink as string, { document });
  expectSubmitted(approval.proof);
  expect(approval.callback?.body).toEqual({ received: true, stage: 'completed' });
  const status = await request(app).get('/api/agent/register/status').query({ token: res.body.sessionToken });
  expect(status.body.stage).toBe('completed');
  const agentAddress = res.body.agentAddress as Address;
  return { agentId: status.body.agentId as number, agentAddress, owner: mode === 'linked' ? human : agentAddress, document, mode };
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.now()) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The token with one character of its ciphertext changed. */
export function tampered(token: string): string {
  const parts = token.split('.');
  const part = parts[3]!;
  const at = Math.floor(part.length / 2);
  parts[3] = `${part.slice(0, at)}${part[at] === 'A' ? 'B' : 'A'}${part.slice(at + 1)}`;
  return parts.join('.');
}

export function expectError(res: request.Response, code: number, message: RegExp | string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(code);
  if (typeof message === 'string') expect(res.body).toEqual({ error: message });
  else expect(res.body.error).toMatch(message);
}

export const THIRTY_MINUTES = 30 * 60 * 1000;

/** The body is exactly what the route's documented schema (the OpenAPI document's source) describes: no undocumented field. */
export function expectConforms(schema: z.ZodObject, body: unknown): void {
  const result = schema.strict().safeParse(body);
  expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
}
