// Deregistration, identify and refresh as a new user runs them: `npm start`, the sessions over HTTP, and
// the human played by the identity-app CLI (approve / reject) from each deep link alone.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, tsxBin as tsx } from '../support/service-process.js';

const run = promisify(execFile);

type Json = Record<string, unknown>;

describe('deregistration, identify and refresh walkthrough (CLI from the deep link)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'session-flows-'));
  const documentNumber = 'WALK0001';
  let base: string;
  let stopService: () => Promise<void>;

  beforeAll(async () => {
    ({ base, stop: stopService } = await startServiceProcess(dataDir));
  }, 60_000);

  afterAll(async () => {
    await stopService();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const post = async (path: string, body: Json): Promise<Json> => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as Json;
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json;
  };
  const get = async (path: string, token: string): Promise<Json> =>
    (await (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Json;

  async function cli(...args: string[]): Promise<Json> {
    const { stdout } = await run(tsx, ['src/identity-app/cli.ts', ...args], { env: { ...process.env, DATA_DIR: dataDir } });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Json;
  }
  const approve = (deepLink: string) => cli('approve', deepLink, '--document-number', documentNumber);

  it('registers an Ed25519 agent, identifies its human, refreshes its proof, then removes it', async () => {
    const registration = await post('/api/agent/register', { mode: 'ed25519', network: 'testnet', disclosures: { minimumAge: 18 } });
    expect(await approve(registration['deepLink'] as string)).toMatchObject({ status: 'submitted', callback: 200 });
    const registered = await get('/api/agent/register/status', registration['sessionToken'] as string);
    expect(registered['stage']).toBe('completed');
    const agentId = registered['agentId'] as number;

    const identify = await post('/api/agent/identify', { network: 'testnet' });
    const identified = await approve(identify['deepLink'] as string);
    expect(identified).toMatchObject({ status: 'submitted', callback: 200 });
    expect(await get('/api/agent/identify/status', identify['sessionToken'] as string)).toMatchObject({
      stage: 'completed',
      nullifier: identified['nullifier'],
      agentCount: 1,
      agentIds: [agentId],
    });

    const refresh = await post('/api/agent/refresh', { network: 'testnet', agentId, disclosures: { minimumAge: 18 } });
    expect(await approve(refresh['deepLink'] as string)).toMatchObject({ status: 'submitted', callback: 200 });
    const refreshed = await get('/api/agent/refresh/status', refresh['sessionToken'] as string);
    expect(refreshed).toMatchObject({ stage: 'completed', agentId, isProofFresh: true, credentials: { olderThan: 18 } });
    expect(refreshed['proofExpiresAt']).toBeGreaterThan(Date.now() / 1000);

    // The human declines the first removal, approves the second.
    const declined = await post('/api/agent/deregister', {
      network: 'testnet',
      agentAddress: registration['agentAddress'],
      disclosures: { minimumAge: 18 },
    });
    expect(await cli('reject', declined['deepLink'] as string)).toMatchObject({ status: 'rejected', callback: 200 });
    expect(await get('/api/agent/deregister/status', declined['sessionToken'] as string)).toMatchObject({ stage: 'failed' });

    const removal = await post('/api/agent/deregister', {
      network: 'testnet',
      agentAddress: registration['agentAddress'],
      disclosures: { minimumAge: 18 },
    });
    expect(await approve(removal['deepLink'] as string)).toMatchObject({ status: 'submitted', callback: 200 });
    expect(await get('/api/agent/deregister/status', removal['sessionToken'] as string)).toMatchObject({ stage: 'completed', agentId });
    expect((await fetch(`${base}/api/agent/info/11142220/${agentId}`)).status).toBe(404);
  }, 120_000);
});
