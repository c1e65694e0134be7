// What the service reports of a transaction survives whatever stops it right after the answer: Ctrl-C to its whole
// process group (as a terminal sends it), SIGTERM to the service alone, SIGHUP to the group (a closed terminal) or
// SIGKILL to the group. For each kind of
// transaction (a relayed chain-verify, a sponsored UserOperation through the proxy, a registration) the answer is
// taken, the signal sent at once, and a new start on the same DATA_DIR must hold the reported block, transaction
// and state. After SIGKILL no anvil may be left running. Real service processes, real anvil chains.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import type { Address, Hash, Hex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { signedHeaders } from '../../src/core/signed-request.js';
import { approve } from '../../src/identity-app/app.js';
import { mockDocumentFor } from '../../src/identity-app/document.js';
import { discoveredStack, embeddedChainClient, proxyHeaders, sponsoredBundler } from '../support/discovered-aa.js';
import { callService, type Json } from '../support/service-http.js';
import { freePort, serviceCommand } from '../support/service-process.js';

const TESTNET = 11142220;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface ServiceRun {
  base: string;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ServiceRun[] = [];
afterEach(async () => {
  for (const run of running.splice(0)) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) continue;
    run.child.kill('SIGINT');
    await run.exited;
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The call target of the sponsored UserOperation: one the operator allows the local paymaster to pay for. */
const SPONSORED_TARGET = '0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE';

/** `npm start`'s process, leading a process group of its own as a terminal's foreground job does. */
async function startService(dataDir: string): Promise<ServiceRun> {
  const port = await freePort();
  const child = spawn(serviceCommand[0], serviceCommand[1], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', AA_SPONSOR_ALLOWED_TARGETS: SPONSORED_TARGET },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const run: ServiceRun = { base: `http://127.0.0.1:${port}`, dataDir, child, output: () => out, exited };
  running.push(run);
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${out}`);
    const res = await fetch(`${run.base}/api/health`).catch(() => undefined);
    if (res?.status === 200) return run;
  }
  throw new Error(`the service did not become healthy:\n${out}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const chainFile = (dataDir: string, network: string, name: string): string => join(dataDir, 'chains', network, name);
const anvilPids = (dataDir: string): number[] =>
  ['mainnet', 'testnet'].map((network) => Number(readFileSync(chainFile(dataDir, network, 'anvil.pid'), 'utf8')));

type Stop = 'SIGINT to the group' | 'SIGTERM to the service' | 'SIGHUP to the group' | 'SIGKILL to the group';

/** Sends the signal the moment it is called, then waits for the service and its chains to be gone. */
async function stop(run: ServiceRun, how: Stop): Promise<void> {
  const chains = anvilPids(run.dataDir);
  const group = -(run.child.pid as number);
  if (how === 'SIGINT to the group') process.kill(group, 'SIGINT');
  else if (how === 'SIGHUP to the group') process.kill(group, 'SIGHUP');
  else if (how === 'SIGTERM to the service') run.child.kill('SIGTERM');
  else process.kill(group, 'SIGKILL');
  const { code, signal } = await run.exited;
  if (how === 'SIGKILL to the group') expect(signal).toBe('SIGKILL');
  else expect(code, run.output()).toBe(0);
  // an orderly stop stops the chains before the service exits; after SIGKILL the watchdog stops them
  for (const deadline = Date.now() + 10_000; Date.now() < deadline && chains.some(isAlive); ) await sleep(50);
  expect(chains.filter(isAlive), 'anvil processes left running').toEqual([]);
}

const chainClient = (dataDir: string) => embeddedChainClient(dataDir, TESTNET);

/** The reported transaction is on the chain, successful, in the reported block. */
async function expectMined(dataDir: string, txHash: Hash, blockNumber: bigint): Promise<void> {
  const client = chainClient(dataDir);
  const receipt = await client.getTransactionReceipt({ hash: txHash });
  expect(receipt).toMatchObject({ status: 'success', blockNumber });
  expect(await client.getBlockNumber()).toBeGreaterThanOrEqual(blockNumber);
}

// ----- the three kinds of transaction: each returns what its answer reported, and a check for after the restart

interface Reported {
  txHash: Hash;
  blockNumber: bigint;
  /** The state the transaction left, read through the restarted service. */
  check(run: ServiceRun): Promise<void>;
}

let humans = 0;
const newDocument = () => mockDocumentFor(`durable-answers:${process.pid}:${++humans}`);

/** A wallet-free registration through the REST session and the mock identity app; the answer: status completed. */
async function registration(run: ServiceRun): Promise<Reported & { sessionToken: string; agentKey: Hex; privateKey: Hex }> {
  const opened = await callService(run.base, '/api/agent/register', { mode: 'wallet-free', network: 'testnet' });
  expect(opened.status, JSON.stringify(opened.body)).toBe(200);
  const sessionToken = opened.body['sessionToken'] as string;
  const approval = await approve({ deepLink: opened.body['deepLink'] as string, dataDir: run.dataDir, document: newDocument() });
  expect(approval).toMatchObject({ status: 'submitted', durable: true });
  let status: Json = {};
  for (let i = 0; i < 200 && status['stage'] !== 'completed'; i++) {
    status = (await callService(run.base, `/api/agent/register/status?token=${encodeURIComponent(sessionToken)}`)).body;
    if (status['stage'] !== 'completed') await sleep(50);
  }
  expect(status).toMatchObject({ stage: 'completed', agentId: expect.any(Number), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  const exported = await callService(run.base, '/api/agent/register/export', { token: sessionToken });
  expect(exported.status).toBe(200);
  const { agentId, txHash } = status as { agentId: number; txHash: Hash };
  const receipt = await chainClient(run.dataDir).getTransactionReceipt({ hash: txHash });
  return {
    sessionToken,
    txHash,
    blockNumber: receipt.blockNumber,
    agentKey: addressAgentKey(exported.body['agentAddress'] as Address),
    privateKey: exported.body['privateKey'] as Hex,
    async check(restarted) {
      const again = await callService(restarted.base, `/api/agent/register/status?token=${encodeURIComponent(sessionToken)}`);
      expect(again.body).toMatchObject({ stage: 'completed', agentId, txHash });
      const info = await callService(restarted.base, `/api/agent/info/${TESTNET}/${agentId}`);
      expect(info.status).toBe(200);
      expect(info.body['agentAddress']).toBe(exported.body['agentAddress']);
    },
  };
}

/** The relayer submits the agent's EIP-712 meta-transaction; the answer names the transaction and the new count. */
async function chainVerify(run: ServiceRun, agent: { agentKey: Hex; privateKey: Hex }): Promise<Reported> {
  const signer = privateKeyToAccount(agent.privateKey);
  const described = await callService(run.base, `/api/demo/chain-verify?network=testnet&agentKey=${agent.agentKey}`);
  expect(described.status, JSON.stringify(described.body)).toBe(200);
  const { eip712, nonce } = described.body as { eip712: { domain: Record<string, unknown>; types: Record<string, unknown> }; nonce: string };
  const deadline = BigInt(Math.floor(Date.now() / 1000) + 600);
  const message = { agentKey: agent.agentKey, nonce: BigInt(nonce), deadline };
  const eip712Signature = await signer.signTypedData({
    domain: eip712.domain,
    types: eip712.types as never,
    primaryType: 'MetaVerify',
    message,
  } as never);
  const body = JSON.stringify({ agentKey: agent.agentKey, nonce, deadline: Number(deadline), eip712Signature });
  const path = '/api/demo/chain-verify?network=testnet';
  const headers = await signedHeaders({ type: 'secp256k1', account: signer }, { method: 'POST', url: path, body });
  const res = await fetch(`${run.base}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  const answer = (await res.json()) as Json;
  expect(res.status, JSON.stringify(answer)).toBe(200);
  const count = answer['verificationCount'] as string;
  return {
    txHash: answer['txHash'] as Hash,
    blockNumber: BigInt(answer['blockNumber'] as string),
    async check(restarted) {
      const after = await callService(restarted.base, `/api/demo/chain-verify?network=testnet&agentKey=${agent.agentKey}`);
      // the nonce the transaction used is spent: the next one is its successor
      expect(after.body['nonce']).toBe(String(BigInt(nonce) + 1n));
      expect(BigInt(count)).toBeGreaterThan(0n);
    },
  };
}

/** The receipt of a UserOperation, asked of the bundler through the proxy. */
async function userOperationReceipt(run: ServiceRun, hash: Hash): Promise<Json | null> {
  const stack = await discoveredStack(run.base);
  const res = await fetch(stack.bundlerUrl, {
    method: 'POST',
    headers: { ...(await proxyHeaders(run.base, stack)), 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getUserOperationReceipt', params: [hash] }),
  });
  return ((await res.json()) as { result: Json | null }).result;
}

/** An unfunded SimpleAccount v0.7 deploys itself in a sponsored UserOperation; the answer: its receipt. */
async function sponsoredUserOperation(run: ServiceRun): Promise<Reported> {
  const stack = await discoveredStack(run.base);
  const simple = stack.accounts.find((account) => account.kind === 'simple');
  if (!simple) throw new Error('the discovery document names no SimpleAccount factory');
  const client = chainClient(run.dataDir);
  const account = await toSimpleSmartAccount({
    client,
    owner: privateKeyToAccount(generatePrivateKey()),
    factoryAddress: simple.factory,
    entryPoint: { address: stack.entryPoint, version: '0.7' },
  });
  const bundler = await sponsoredBundler(run.base, stack, account, client);
  const hash = await bundler.sendUserOperation({ calls: [{ to: SPONSORED_TARGET, value: 0n, data: '0x' }] });
  const included = await bundler.waitForUserOperationReceipt({ hash });
  expect(included).toMatchObject({ success: true, paymaster: stack.paymaster });
  return {
    txHash: included.receipt.transactionHash,
    blockNumber: included.receipt.blockNumber,
    async check(restarted) {
      const receipt = await userOperationReceipt(restarted, hash);
      if (!receipt) throw new Error(`the bundler no longer knows UserOperation ${hash}`);
      expect(receipt['success']).toBe(true);
      expect((receipt['paymaster'] as string).toLowerCase()).toBe(stack.paymaster.toLowerCase());
      expect((receipt['receipt'] as Json)['transactionHash']).toBe(included.receipt.transactionHash);
      const chain = chainClient(restarted.dataDir);
      // the operation's nonce is spent: the EntryPoint's next one for its key is its successor
      const key = included.nonce >> 64n;
      const next = await chain.readContract({
        address: stack.entryPoint,
        abi: entryPoint07Abi,
        functionName: 'getNonce',
        args: [account.address, key],
      });
      expect(next).toBe(included.nonce + 1n);
      expect(await chain.getCode({ address: account.address })).toMatch(/^0x[0-9a-f]{2,}$/);
    },
  };
}

// ----- each stop, after each kind of transaction

const STOPS: Stop[] = ['SIGINT to the group', 'SIGTERM to the service', 'SIGHUP to the group', 'SIGKILL to the group'];

describe('a transaction the service reported survives a stop right after the answer', () => {
  it.each(STOPS)(
    '%s',
    async (how) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'durable-answers-'));
      dirs.push(dataDir);
      let run = await startService(dataDir);
      // the agent that signs the chain-verify relay; its own registration is one of the three kinds
      const agent = await registration(run);
      await stop(run, how);
      const kinds: [string, (current: ServiceRun) => Promise<Reported>][] = [
        ['chain-verify relay', (current) => chainVerify(current, agent)],
        ['sponsored UserOperation', sponsoredUserOperation],
        ['registration', registration],
      ];
      let previous: [string, Reported] = ['registration', agent];
      const restartAndCheck = async (): Promise<ServiceRun> => {
        const restarted = await startService(dataDir);
        const [kind, reported] = previous;
        await expectMined(dataDir, reported.txHash, reported.blockNumber).catch((error: Error) => {
          // what the chain and the service said, to tell a lost block from a chain that was not there
          const chain = `rpc-url ${readFileSync(chainFile(dataDir, 'testnet', 'rpc-url'), 'utf8').trim()}, anvil ${anvilPids(dataDir)
            .map((pid) => `${pid}${isAlive(pid) ? '' : ' (gone)'}`)
            .join(', ')}`;
          throw new Error(`${kind} after ${how}: ${error.message}\n${chain}\nservice log:\n${restarted.output().slice(-4_000)}`);
        });
        await reported.check(restarted);
        return restarted;
      };
      for (const [kind, send] of kinds) {
        run = await restartAndCheck();
        const reported = await send(run);
        await stop(run, how);
        previous = [kind, reported];
      }
      await restartAndCheck();
    },
    240_000,
  );
});
