// The mock identity app's CLI as a user runs it: the real process, a real chain, a real HTTP callback
// receiver, and nothing but the deep link (plus the DATA_DIR the service keeps) to go on.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressAgentKey } from '../../src/core/agent-key.js';
import { buildSelfApp, deepLinkFor } from '../../src/core/deep-link.js';
import { configIndexFor, type MinimumAge } from '../../src/core/disclosures.js';
import { fund } from '../../src/devnet/embedded.js';
import { DEFAULT_MOCK_DOCUMENT, documentNullifier } from '../../src/identity-app/index.js';
import { linkedData, newAccount } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { registryOf, scopeOf } from '../support/registry.js';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tsx src/identity-app/cli.ts ...args` from the repository root with DATA_DIR set. */
function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      'node_modules/.bin/tsx',
      ['src/identity-app/cli.ts', ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The one JSON line the CLI prints. */
function outputOf(run: CliRun): Record<string, unknown> {
  const lines = run.stdout.trim().split('\n');
  expect(lines, `stdout: ${run.stdout} stderr: ${run.stderr}`).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/** A callback receiver: records every JSON body by the token in its URL; `?fail=1` answers 500. */
class CallbackReceiver {
  readonly bodies = new Map<string, unknown[]>();
  private server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const token = url.searchParams.get('token') ?? '';
      const list = this.bodies.get(token) ?? [];
      list.push({ method: req.method, contentType: req.headers['content-type'], body: JSON.parse(raw) as unknown });
      this.bodies.set(token, list);
      const status = url.searchParams.get('fail') ? 500 : 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: status === 200 }));
    });
  });
  base = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.base = `http://127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** A callback URL with its own token, as the service puts in the deep link. */
  callbackUrl(extra = ''): { url: string; token: string } {
    const token = randomUUID();
    return { url: `${this.base}/api/agent/register/callback?token=${token}${extra}`, token };
  }

  received(token: string): unknown[] {
    return (this.bodies.get(token) ?? []).map((entry) => (entry as { body: unknown }).body);
  }
}

let system: TestSystem;
let dataDir: string;
const receiver = new CallbackReceiver();

beforeAll(async () => {
  system = await deployTestSystem('testnet');
  await receiver.start();
  // The service's DATA_DIR as the CLI finds it: the dev accounts and the running chain's RPC URL.
  dataDir = mkdtempSync(join(tmpdir(), 'identity-app-cli-'));
  const identityApp = generatePrivateKey();
  await fund(system.client, privateKeyToAccount(identityApp).address);
  writeFileSync(join(dataDir, 'dev-accounts.json'), JSON.stringify({ operator: generatePrivateKey(), attester: system.attesterKey, identityApp }));
  mkdirSync(join(dataDir, 'chains', 'testnet'), { recursive: true });
  writeFileSync(join(dataDir, 'chains', 'testnet', 'rpc-url'), `${system.rpcUrl}\n`);
});

afterAll(async () => {
  await receiver.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Session {
  deepLink: string;
  token: string;
  agent: LocalAccount;
  human: Address;
}

/** A linked (K) registration's deep link, as the service builds it. */
async function linkedSession(options: { human?: Address; minimumAge?: MinimumAge; callbackExtra?: string } = {}): Promise<Session> {
  const agent = newAccount();
  const human = options.human ?? newAccount().address;
  const minimumAge = options.minimumAge ?? 0;
  const { url, token } = receiver.callbackUrl(options.callbackExtra);
  const app = buildSelfApp({
    sessionId: token,
    appName: 'Agent identity registry (test)',
    network: 'testnet',
    registry: system.deployment.contracts.registry,
    userId: human,
    userDefinedData: await linkedData(system, agent, human, configIndexFor({ minimumAge, ofac: false })),
    disclosures: { minimumAge, ofac: false },
    callbackUrl: url,
  });
  return { deepLink: deepLinkFor(app), token, agent, human };
}

const agentIdOf = (agent: Address): Promise<bigint> => registryOf(system).read.getAgentId([addressAgentKey(agent)]);
const env = (): Record<string, string> => ({ DATA_DIR: dataDir });

describe('identity-app approve', () => {
  it('registers the agent on chain and reports the txHash to the callback', async () => {
    const session = await linkedSession();
    const run = await runCli(['approve', session.deepLink, '--document-number', 'CLI000001'], env());
    expect(run.code, run.stderr).toBe(0);
    const output = outputOf(run);
    expect(output).toMatchObject({ status: 'submitted', network: 'testnet', callback: 200 });
    expect(output['txHash']).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await agentIdOf(session.agent.address)).toBeGreaterThan(0n);
    const receipt = await system.client.getTransactionReceipt({ hash: output['txHash'] as `0x${string}` });
    expect(receipt.status).toBe('success');
    expect(receiver.bodies.get(session.token)).toEqual([
      { method: 'POST', contentType: 'application/json', body: { status: 'success', txHash: output['txHash'] } },
    ]);
  });

  it('the same --document-number is the same human: a second agent is refused and the callback gets the reason', async () => {
    const first = await linkedSession();
    const firstRun = await runCli(['approve', first.deepLink, '--document-number', 'CLI000002'], env());
    expect(firstRun.code, firstRun.stderr).toBe(0);
    const firstOutput = outputOf(firstRun);

    const second = await linkedSession();
    const run = await runCli(['approve', second.deepLink, '--document-number', 'cli000002'], env());
    expect(run.code).toBe(1);
    const output = outputOf(run);
    expect(output).toMatchObject({
      status: 'reverted',
      network: 'testnet',
      reason: `TooManyAgentsForHuman(${String(firstOutput['nullifier'])}, 1)`,
      callback: 200,
    });
    expect(await agentIdOf(second.agent.address)).toBe(0n);
    expect(receiver.received(second.token)).toEqual([{ status: 'error', error: output['reason'] }]);
  });

  it('without --document-number it uses the one default document (the same human every time)', async () => {
    const session = await linkedSession();
    const run = await runCli(['approve', session.deepLink], env());
    expect(run.code, run.stderr).toBe(0);
    const expected = documentNullifier(DEFAULT_MOCK_DOCUMENT, await scopeOf(system));
    expect(outputOf(run)).toMatchObject({ status: 'submitted', nullifier: expected.toString(), callback: 200 });
    expect(await agentIdOf(session.agent.address)).toBeGreaterThan(0n);
  });

  it('an under-age --birthdate for an 18+ request is refused by the hub and reported', async () => {
    const session = await linkedSession({ minimumAge: 18 });
    const tenYearsAgo = `${new Date().getUTCFullYear() - 10}-06-15`;
    const run = await runCli(
      ['approve', session.deepLink, '--document-number', 'CLI000003', '--birthdate', tenYearsAgo, '--document', 'eu-id'],
      env(),
    );
    expect(run.code).toBe(1);
    expect(outputOf(run)).toMatchObject({ status: 'reverted', reason: 'InvalidOlderThan()', callback: 200 });
    expect(receiver.received(session.token)).toEqual([{ status: 'error', error: 'InvalidOlderThan()' }]);
  });

  it('a deep link for a chain the service does not run locally fails with a clear message and no callback', async () => {
    const { url, token } = receiver.callbackUrl();
    const app = buildSelfApp({
      sessionId: token,
      appName: 'test',
      network: 'mainnet',
      registry: system.deployment.contracts.registry,
      userId: newAccount().address,
      userDefinedData: 'R0',
      disclosures: { minimumAge: 0, ofac: false },
      callbackUrl: url,
    });
    const run = await runCli(['approve', deepLinkFor(app)], env());
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/only serves the service's local chains/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(receiver.received(token)).toEqual([]);
  });
});

describe('identity-app reject', () => {
  it('sends a failure callback', async () => {
    const session = await linkedSession();
    const run = await runCli(['reject', session.deepLink, '--reason', 'not today'], env());
    expect(run.code, run.stderr).toBe(0);
    expect(outputOf(run)).toEqual({ status: 'rejected', reason: 'not today', callback: 200 });
    expect(receiver.received(session.token)).toEqual([{ status: 'error', error: 'not today' }]);
    expect(await agentIdOf(session.agent.address)).toBe(0n);
  });

  it('a callback that fails makes the exit code non-zero', async () => {
    const session = await linkedSession({ callbackExtra: '&fail=1' });
    const run = await runCli(['reject', session.deepLink], env());
    expect(run.code).toBe(1);
    expect(outputOf(run)).toMatchObject({ status: 'rejected', callback: 500 });
    expect(receiver.received(session.token)).toEqual([{ status: 'error', error: 'the user rejected the verification request' }]);
  });
});

describe('identity-app arguments', () => {
  it('--help prints the usage', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("npm run identity-app -- approve '<deepLink>'");
    expect(run.stdout).toContain("npm run identity-app -- reject '<deepLink>'");
  });

  it.concurrent.each([
    ['no command', []],
    ['no deep link', ['approve']],
    ['an unparsable deep link', ['approve', 'not a deep link']],
    ['a deep link without selfApp', ['approve', 'selfapp://verify?scope=self-agent-id']],
    ['a bad date', ['approve', 'selfapp://verify?selfApp=%7B%7D', '--birthdate', '1990-02-30']],
    ['an unknown option', ['approve', 'selfapp://verify?selfApp=%7B%7D', '--passport']],
    ['an unknown document kind', ['approve', 'selfapp://verify?selfApp=%7B%7D', '--document', 'driving-licence']],
    ['an unknown command', ['accept', 'selfapp://verify?selfApp=%7B%7D']],
  ])(
    '%s: exit 2 with a one-line message',
    async (_label, args) => {
      const run = await runCli(args, env());
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^identity-app: .+/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    },
    120_000,
  );
});
