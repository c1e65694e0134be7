// A running service over plain HTTP, as an outside client sees it: JSON calls, the wallet-held (privy,
// smartwallet) challenge signed by the agent key and, in smartwallet mode, by the guardian, and session polling.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address, Hex, LocalAccount } from 'viem';
import { expect } from 'vitest';

export type Json = Record<string, unknown>;

export interface Answer {
  status: number;
  body: Json;
}

/** `handler` served on a loopback port of its own: its base URL, and closing it (open connections too). */
export async function serveOnLoopback(handler: RequestListener): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** GET (no body) or POST (JSON body) against the service; the answer's status and JSON body. */
export async function callService(base: string, path: string, body?: object): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: body ? 'POST' : 'GET',
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
}

/** Anything that signs a personal message over raw bytes: an EOA, or a smart account (ERC-1271 / ERC-6492). */
export interface MessageSigner {
  address: Address;
  signMessage(args: { message: { raw: Hex } }): Promise<Hex>;
}

/**
 * POST /api/agent/register/challenge for a wallet-held agent key, then the agent key's signature of its
 * challengeHash and, when a guardian is given (smartwallet), the guardian's signature of the same hash.
 */
export async function signWalletHeldChallenge(
  base: string,
  request: { mode: 'privy' | 'smartwallet'; network: string; agent: LocalAccount; humanAddress: Address; guardian?: MessageSigner },
): Promise<{ challengeHash: Hex; agentSignature: Hex; guardianSignature?: Hex }> {
  const { mode, network, agent, humanAddress, guardian } = request;
  const challenge = await callService(base, '/api/agent/register/challenge', { mode, network, agentAddress: agent.address, humanAddress });
  expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
  const challengeHash = challenge.body['challengeHash'] as Hex;
  const agentSignature = await agent.signMessage({ message: { raw: challengeHash } });
  if (!guardian) return { challengeHash, agentSignature };
  return { challengeHash, agentSignature, guardianSignature: await guardian.signMessage({ message: { raw: challengeHash } }) };
}

/**
 * Polls GET /api/agent/{kind}/status until the session leaves qr-ready and proof-received (the chain decides, and
 * the service may learn of it a poll later), following the refreshed sessionToken; returns the last answer.
 */
export async function waitForSession(base: string, kind: 'register' | 'deregister', token: string, attempts = 200): Promise<Json> {
  let current = token;
  for (let i = 0; ; i++) {
    const { status, body } = await callService(base, `/api/agent/${kind}/status?token=${encodeURIComponent(current)}`);
    expect(status, JSON.stringify(body)).toBe(200);
    if ((body['stage'] !== 'qr-ready' && body['stage'] !== 'proof-received') || i >= attempts) return body;
    current = (body['sessionToken'] as string | undefined) ?? current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
