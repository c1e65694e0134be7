// The smartwallet registration mode end to end through the running service (both local chains, the local ERC-4337
// bundler and paymaster behind the account-abstraction proxy), nothing mocked but the passport:
// - discovery names the testnet stack, and its factory is deployed;
// - a counterfactual passkey smart account consents to guard an agent with an ERC-6492 signature (another
//   passkey's account cannot), the identity app proves the human, and every query shows the agent and its guardian;
// - through the proxy only, one sponsored UserOperation deploys the account and calls guardianRevoke: the account
//   holds no ETH, the paymaster's deposit pays, and the agent is gone;
// - a second human's agent, guarded by the now-deployed account (plain ERC-1271), is removed by that human's proof.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, encodeFunctionData, type Hex, isAddressEqual, parseErc6492Signature, zeroAddress } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PasskeySmartAccount } from '../../src/aa/passkey-account.js';
import type { ChainClient } from '../../src/chain/clients.js';
import { AA_PROXY_TOKEN_HEADER, aaProxyClients, fetchProxyToken, toPasskeySmartAccount } from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { agentRegistryAbi } from '../../src/contracts/artifacts/AgentRegistry.js';
import { approve, documentFrom } from '../../src/identity-app/app.js';
import type { MockDocument } from '../../src/identity-app/index.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/main.js';
import { softwarePasskey } from '../support/aa.js';
import { newAccount } from '../support/agents.js';
import { callService, type Json, signWalletHeldChallenge, waitForSession } from '../support/service-http.js';

const TESTNET = 11142220;
const ENTRY_POINT = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

/** A smartwallet registration session, opened and waiting for the human. */
interface OpenedSession {
  agentAddress: Address;
  sessionToken: string;
  deepLink: string;
  guardianSignature: Hex;
}

describe('smartwallet mode through the running service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'smartwallet-e2e-'));
  let service: RunningService;
  let base: string;
  let client: ChainClient;
  let registry: Address;
  let stack: { entryPoint: Address; accountFactory: Address; paymaster: Address };
  /** The human's passkey smart account: the guardian of both agents. */
  let account: PasskeySmartAccount;
  /** The first agent's session, opened before the human proves. */
  let first: OpenedSession;
  let firstAgentId: number;

  /** A human of their own: a mock passport with a number no other run uses. */
  const newHuman = (): MockDocument => documentFrom({ documentNumber: `SW${randomBytes(6).toString('hex').toUpperCase()}` });

  /** The human's phone: the identity app proves `document` for the deep link and calls the session back. */
  async function approveAs(deepLink: string, document: MockDocument): Promise<void> {
    const result = await approve({ deepLink, document, dataDir });
    expect(
      result,
      JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
    ).toMatchObject({
      status: 'submitted',
      callback: { ok: true },
    });
  }

  /** Opens a smartwallet session for a new agent key (generated here, as the human's wallet would) guarded by `account`. */
  async function openGuardedSession(): Promise<OpenedSession> {
    const agent = newAccount();
    const signed = await signWalletHeldChallenge(base, {
      mode: 'smartwallet',
      network: 'testnet',
      agent,
      humanAddress: account.address,
      guardian: account,
    });
    const session = await callService(base, '/api/agent/register', {
      mode: 'smartwallet',
      network: 'testnet',
      humanAddress: account.address,
      agentAddress: agent.address,
      agentSignature: signed.agentSignature,
      guardianSignature: signed.guardianSignature,
    });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body).toMatchObject({ stage: 'qr-ready', mode: 'smartwallet', network: 'testnet', agentAddress: agent.address });
    const { sessionToken, deepLink } = session.body as { sessionToken: string; deepLink: string };
    return { agentAddress: agent.address, sessionToken, deepLink, guardianSignature: signed.guardianSignature as Hex };
  }

  /** The human proves with `document`; the session completes. Export is refused: the key never left the human's side. */
  async function completeRegistration(session: OpenedSession, document: MockDocument): Promise<number> {
    await approveAs(session.deepLink, document);
    const done = await waitForSession(base, 'register', session.sessionToken);
    expect(done).toMatchObject({ stage: 'completed', agentAddress: session.agentAddress });
    const exported = await callService(base, `/api/agent/register/export?token=${encodeURIComponent(done['sessionToken'] as string)}`);
    expect(exported.status).toBe(400);
    expect(exported.body['error']).toMatch(/smartwallet/);
    return done['agentId'] as number;
  }

  /** The agents GET /api/agent/agents lists for `address`, once the log follower has seen the latest block. */
  async function agentsOf(address: Address, expected: number[]): Promise<void> {
    await expect
      .poll(async () => (await callService(base, `/api/agent/agents/${TESTNET}/${address}`)).body['agents'], { timeout: 10_000, interval: 50 })
      .toEqual(expected);
  }

  /** Info answers 404 once the log follower has seen the burn (at most a poll after the block). */
  async function goneFromInfo(agentId: number): Promise<void> {
    await expect
      .poll(async () => (await callService(base, `/api/agent/info/${TESTNET}/${agentId}`)).status, { timeout: 10_000, interval: 50 })
      .toBe(404);
  }

  /** Calls the proxy answered 200 on `route` so far, from the service's own /metrics. */
  async function proxyCalls(route: 'bundler' | 'paymaster'): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    const lines = text
      .split('\n')
      .filter((l) => l.startsWith('http_requests_total{') && l.includes(`route="/api/aa/${route}"`) && l.includes('status="200"'));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  }

  const guardianOf = (agentId: number): Promise<Address> =>
    client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'agentGuardian', args: [BigInt(agentId)] });
  const paymasterDeposit = (): Promise<bigint> =>
    client.readContract({ address: stack.entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [stack.paymaster] });

  beforeAll(async () => {
    service = await startService(loadConfig({ DATA_DIR: dataDir, PORT: '0' }), createLogger('silent'));
    base = service.url;
    const testnet = service.chains.get('testnet');
    client = testnet.client;
    registry = testnet.contracts.registry;
    const local = service.accountAbstraction.testnet;
    if (!local) throw new Error('the embedded testnet has no ERC-4337 stack');
    stack = local;
    account = await toPasskeySmartAccount({ client, owner: softwarePasskey(), factory: stack.accountFactory });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('discovery names the testnet ERC-4337 stack and the proxy, and the factory is on chain', async () => {
    const { status, body } = await callService(base, '/.well-known/self-agent-id.json');
    expect(status).toBe(200);
    const testnet = (body['accountAbstraction'] as Record<string, Json>)['testnet'] as Json;
    expect(testnet).toMatchObject({
      chainId: TESTNET,
      entryPoint: ENTRY_POINT,
      accountFactory: stack.accountFactory,
      paymaster: stack.paymaster,
      tokenUrl: `${base}/api/aa/token?chainId=${TESTNET}`,
      bundlerUrl: `${base}/api/aa/bundler?chainId=${TESTNET}`,
      paymasterUrl: `${base}/api/aa/paymaster?chainId=${TESTNET}`,
    });
    expect(stack.entryPoint).toBe(ENTRY_POINT);
    for (const address of [stack.entryPoint, stack.accountFactory, stack.paymaster]) {
      expect(await client.getCode({ address }), address).toMatch(/^0x[0-9a-f]{2,}$/);
    }
  });

  it('with no configuration both networks serve the three proxy routes from their own local stack', async () => {
    for (const chainId of [42220, TESTNET]) {
      const proxy = { baseUrl: base, chainId };
      const { token } = await fetchProxyToken(proxy);
      const call = async (route: 'bundler' | 'paymaster', method: string) => {
        const res = await fetch(`${base}/api/aa/${route}?chainId=${chainId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: base, [AA_PROXY_TOKEN_HEADER]: token },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
        });
        expect(res.status, `${route} ${method} on ${chainId}`).toBe(200);
        return ((await res.json()) as { result: unknown }).result;
      };
      expect(await call('bundler', 'eth_supportedEntryPoints')).toEqual([ENTRY_POINT]);
      expect(await call('bundler', 'eth_chainId')).toBe(`0x${chainId.toString(16)}`);
      expect(await call('paymaster', 'eth_chainId')).toBe(`0x${chainId.toString(16)}`);
    }
  });

  it('a counterfactual passkey account consents with ERC-6492 and the session opens; another passkey cannot consent for it', async () => {
    expect(await client.getCode({ address: account.address })).toBeUndefined();
    const agent = newAccount();
    const stranger = await toPasskeySmartAccount({ client, owner: softwarePasskey(), factory: stack.accountFactory });
    const signed = await signWalletHeldChallenge(base, {
      mode: 'smartwallet',
      network: 'testnet',
      agent,
      humanAddress: account.address,
      guardian: stranger,
    });
    const refused = await callService(base, '/api/agent/register', {
      mode: 'smartwallet',
      network: 'testnet',
      humanAddress: account.address,
      agentAddress: agent.address,
      agentSignature: signed.agentSignature,
      guardianSignature: signed.guardianSignature,
    });
    expect(refused.status).toBe(400);
    expect(refused.body['error']).toMatch(/^guardianSignature does not verify/);

    first = await openGuardedSession();
    // signed while the account had no code: wrapped for ERC-6492 with the factory's call; consenting deploys nothing
    expect(parseErc6492Signature(first.guardianSignature).address).toBe(stack.accountFactory);
    expect(await client.getCode({ address: account.address })).toBeUndefined();
  });

  it('the identity app proves the human: the agent owns itself, the smart account guards it, export is refused', async () => {
    firstAgentId = await completeRegistration(first, newHuman());
    const info = await callService(base, `/api/agent/info/${TESTNET}/${firstAgentId}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ agentId: firstAgentId, chainId: TESTNET, agentAddress: first.agentAddress, isVerified: true });
    await agentsOf(account.address, [firstAgentId]);
    await agentsOf(first.agentAddress, [firstAgentId]);
    expect(await guardianOf(firstAgentId)).toBe(account.address);
    const owner = await client.readContract({ address: registry, abi: agentRegistryAbi, functionName: 'ownerOf', args: [BigInt(firstAgentId)] });
    expect(owner).toBe(first.agentAddress);
  });

  it('the proxy refuses user operation calls without a token (401) and from another origin (403)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] });
    const bundlerUrl = `${base}/api/aa/bundler?chainId=${TESTNET}`;
    const noToken = await fetch(bundlerUrl, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body });
    expect(noToken.status).toBe(401);
    const { token } = await fetchProxyToken({ baseUrl: base, chainId: TESTNET });
    const headers = { 'content-type': 'application/json', [AA_PROXY_TOKEN_HEADER]: token };
    const elsewhere = await fetch(bundlerUrl, { method: 'POST', headers: { ...headers, origin: 'https://elsewhere.example' }, body });
    expect(elsewhere.status).toBe(403);
    const sameOrigin = await fetch(bundlerUrl, { method: 'POST', headers: { ...headers, origin: base }, body });
    expect(await sameOrigin.json()).toMatchObject({ result: [ENTRY_POINT] });
  });

  it('one sponsored UserOperation through the proxy deploys the account and revokes the agent', async () => {
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    const depositBefore = await paymasterDeposit();
    const [bundlerCalls, paymasterCalls] = [await proxyCalls('bundler'), await proxyCalls('paymaster')];
    const { bundler } = aaProxyClients({ baseUrl: base, chainId: TESTNET, client, account });
    const hash = await bundler.sendUserOperation({
      calls: [{ to: registry, data: encodeFunctionData({ abi: agentRegistryAbi, functionName: 'guardianRevoke', args: [BigInt(firstAgentId)] }) }],
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, pollingInterval: 250 });
    console.log(
      `guardianRevoke with deployment: ${receipt.actualGasUsed} gas charged, ${receipt.receipt.gasUsed} gas in the handleOps transaction, ` +
        `${receipt.actualGasCost} wei paid by the paymaster`,
    );
    expect(receipt).toMatchObject({ success: true, sender: account.address, entryPoint: ENTRY_POINT });
    expect(isAddressEqual(receipt.paymaster ?? zeroAddress, stack.paymaster)).toBe(true);
    expect(receipt.receipt.status).toBe('success');
    // estimate, send and receipt went through the proxy's bundler route; stub and approval through its paymaster route
    expect(await proxyCalls('bundler')).toBeGreaterThanOrEqual(bundlerCalls + 3);
    expect(await proxyCalls('paymaster')).toBeGreaterThanOrEqual(paymasterCalls + 2);

    expect(await client.getCode({ address: account.address })).toMatch(/^0x[0-9a-f]{2,}$/);
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    expect(await paymasterDeposit()).toBe(depositBefore - receipt.actualGasCost);
    await goneFromInfo(firstAgentId);
    const verify = await callService(base, `/api/agent/verify/${TESTNET}/${firstAgentId}`);
    expect(verify).toMatchObject({ status: 200, body: { agentId: firstAgentId, isVerified: false, humanNullifier: '0', agentCountForHuman: 0 } });
    await agentsOf(account.address, []);
  });

  it('a second human names the deployed account as guardian (plain ERC-1271) and removes the agent by proof', async () => {
    const human = newHuman();
    const second = await openGuardedSession();
    expect(parseErc6492Signature(second.guardianSignature).address).toBeUndefined(); // no ERC-6492 wrapper: the account has code
    const agentId = await completeRegistration(second, human);
    const { agentAddress } = second;
    expect(await guardianOf(agentId)).toBe(account.address);
    await agentsOf(account.address, [agentId]);

    const session = await callService(base, '/api/agent/deregister', { network: 'testnet', agentAddress });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body).toMatchObject({ stage: 'qr-ready', agentId, agentAddress });
    await approveAs(session.body['deepLink'] as string, human);
    const done = await waitForSession(base, 'deregister', session.body['sessionToken'] as string);
    expect(done).toMatchObject({ stage: 'completed', agentId, agentAddress });

    await goneFromInfo(agentId);
    expect(await guardianOf(agentId)).toBe(zeroAddress);
    await agentsOf(account.address, []);
  });
});
