// The README's walkthrough as a new user runs it: `npm start`, a registration over HTTP, the human played
// by the identity-app CLI from the deep link alone, then status and export.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, tsxBin as tsx } from '../support/service-process.js';

const run = promisify(execFile);

describe('README walkthrough', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
  let base: string;
  let stopService: () => Promise<void>;

  beforeAll(async () => {
    ({ base, stop: stopService } = await startServiceProcess(dataDir));
  }, 60_000);

  afterAll(async () => {
    await stopService();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('takes a linked registration from POST /api/agent/register to an exported key', async () => {
    const human = '0x1111111111111111111111111111111111111111';
    const opened = await fetch(`${base}/api/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'linked', network: 'testnet', humanAddress: human, disclosures: { minimumAge: 18, nationality: true } }),
    });
    expect(opened.status).toBe(200);
    const session = (await opened.json()) as { sessionToken: string; deepLink: string; agentAddress: string; stage: string };
    expect(session.stage).toBe('qr-ready');

    const { stdout } = await run(tsx, ['src/identity-app/cli.ts', 'approve', session.deepLink], { env: { ...process.env, DATA_DIR: dataDir } });
    const approval = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { status: string; txHash: string; callback: number };
    expect(approval).toMatchObject({ status: 'submitted', callback: 200 });

    const status = (await (await fetch(`${base}/api/agent/register/status?token=${session.sessionToken}`)).json()) as {
      stage: string;
      agentId: number;
      txHash: string;
      credentials: { nationality: string; olderThan: number };
    };
    expect(status).toMatchObject({ stage: 'completed', txHash: approval.txHash, credentials: { nationality: 'GBR', olderThan: 18 } });
    expect(status.agentId).toBeGreaterThan(0);

    const exported = (await (await fetch(`${base}/api/agent/register/export?token=${session.sessionToken}`)).json()) as {
      privateKey: `0x${string}`;
      agentAddress: string;
      agentId: number;
    };
    expect(exported.agentId).toBe(status.agentId);
    expect(privateKeyToAccount(exported.privateKey).address).toBe(session.agentAddress);
  }, 60_000);
});
