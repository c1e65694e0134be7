// The agent-identity-registry command against a started service (`node dist/main.js` on its local chains), the human
// played by the mock identity app's CLI from the deep link the command printed:
// - in a pseudo-terminal: register shows the QR code (the very code of the deep link, redrawn here and compared) and a
//   stage line rewritten in place, writes the key file 0600 and prints the agent id; verify says human-backed (exit 0);
//   sign prints a curl command that the service accepts;
// - for scripts (--json): a registration that times out (exit 4) is picked up by export, whose key file is 0600; the
//   key is handed out once; deregister burns the agent and verify then exits 1;
// - exit codes of a bad argument (2), an unreachable service (3), a key file that exists (2).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import QRCode from 'qrcode';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasScript, runCli, startCli, startCliInTerminal } from '../support/cli-process.js';
import { freePort, startServiceProcess, tsxBin } from '../support/service-process.js';

const run = promisify(execFile);
const TESTNET = 11142220;
const DEEP_LINK = /selfapp:\/\/verify\?[^\s'"]+/;

if (!hasScript) console.warn('test/e2e/cli.test.ts: the pseudo-terminal test is skipped: util-linux `script` is missing (apt-get install bsdutils)');

describe('agent-identity-registry (the CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-e2e-'));
  const dataDir = join(dir, 'data');
  let base: string;
  let stopService: () => Promise<void>;

  beforeAll(async () => {
    ({ base, stop: stopService } = await startServiceProcess(dataDir));
  }, 60_000);

  afterAll(async () => {
    await stopService();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A person of their own (the registry allows one agent per person). */
  const newPerson = (): string => `CLI${randomBytes(6).toString('hex').toUpperCase()}`;

  /** The human approves the deep link in the mock identity app, as the README says. */
  async function approve(deepLink: string, documentNumber: string): Promise<void> {
    const { stdout } = await run(tsxBin, ['src/identity-app/cli.ts', 'approve', deepLink, '--document-number', documentNumber], {
      env: { ...process.env, DATA_DIR: dataDir },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) as string)).toMatchObject({ status: 'submitted', callback: 200 });
  }

  const jsonLines = (stdout: string): Record<string, unknown>[] =>
    stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it.skipIf(!hasScript)(
    'register in a terminal: the QR code of the deep link, a live stage line, a 0600 key file, the agent id; then verify and sign',
    async () => {
      const keyFile = join(dir, 'linked.json');
      const human = '0x1111111111111111111111111111111111111111';
      const cli = startCliInTerminal([
        'register',
        '--mode',
        'linked',
        '--network',
        'testnet',
        '--human',
        human,
        '--key-file',
        keyFile,
        '--url',
        base,
      ]);
      const deepLink = (await cli.waitFor(DEEP_LINK))[0];
      await cli.waitFor(/waiting for the human to scan the QR code/);
      await approve(deepLink, newPerson());
      expect(await cli.exited, cli.output).toBe(0);

      const screen = cli.output.replace(/\r\n/g, '\n');
      // the code on screen is the deep link's: drawn again here with the same renderer, it is the same block of characters
      const qr = await QRCode.toString(deepLink, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
      expect(screen).toContain(qr);
      expect(qr).toMatch(/[▀▄█]/);
      expect(screen).toMatch(/Or open the scan page, which shows it larger and follows the session: http:\/\/127\.0\.0\.1:\d+\/register\/\S+/);
      // the stage line is rewritten in place (cursor to column 1, clear the line), never one line per poll
      const ESC = '\u001b';
      expect(screen).toMatch(new RegExp(`${ESC}\\[1G${ESC}\\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the human to scan the QR code \\(\\d+:\\d\\d\\)`));
      expect(screen).toContain('✔ registered');
      const agentId = Number(/Agent (\d+) registered on testnet \(chain 11142220\): (0x[0-9a-fA-F]{40})/.exec(screen)?.[1]);
      expect(agentId).toBeGreaterThan(0);

      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = JSON.parse(readFileSync(keyFile, 'utf8')) as { privateKey: `0x${string}`; agentAddress: string; agentId: number; service: string };
      expect(key).toMatchObject({ agentId, keyType: 'secp256k1', network: 'testnet', chainId: TESTNET, service: base });
      expect(privateKeyToAccount(key.privateKey).address).toBe(key.agentAddress);

      const verified = await runCli(['verify', String(TESTNET), String(agentId), '--url', base]);
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(new RegExp(`Agent ${agentId} on testnet \\(chain 11142220\\) is human-backed`));

      // sign: the headers as JSON, sent here; and the curl command, run as printed
      const url = `${base}/api/demo/verify?network=testnet`;
      const signed = await runCli(['sign', url, '--body', '{"hello":"cli"}', '--key-file', keyFile, '--json']);
      expect(signed.code, signed.stderr).toBe(0);
      const request = JSON.parse(signed.stdout) as { method: string; headers: Record<string, string>; body: string };
      expect(request.method).toBe('POST');
      const accepted = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
      expect(accepted.status).toBe(200);
      expect(await accepted.json()).toMatchObject({ valid: true, agentId: String(agentId) });

      const curl = await runCli(['sign', url, '--body', `{"it's":"curl"}`, '--key-file', keyFile, '--scheme', 'rfc9421']);
      expect(curl.code, curl.stderr).toBe(0);
      expect(curl.stdout).toMatch(/^curl -X POST /);
      const { stdout } = await run('sh', ['-c', curl.stdout.replace(/^curl /, 'curl -s ')]);
      expect(JSON.parse(stdout)).toMatchObject({ valid: true, agentId: String(agentId) });
    },
    90_000,
  );

  it.skipIf(!hasScript)('Ctrl-C while waiting ends with 130 and says how to pick the session up', async () => {
    const cli = startCliInTerminal(['register', '--network', 'testnet', '--key-file', join(dir, 'interrupted.json'), '--url', base]);
    await cli.waitFor(/waiting for the human to scan the QR code/);
    cli.type('\u0003');
    expect(await cli.exited).toBe(130);
    expect(cli.output).toMatch(
      /interrupted: the registration session goes on until it expires; pick it up with: agent-identity-registry export --url \S+ --token \S+/,
    );
    expect(existsSync(join(dir, 'interrupted.json'))).toBe(false);
  });

  it('for scripts: a registration that times out (exit 4) is picked up by export (0600), handed out once; deregister, then verify exits 1', async () => {
    const keyFile = join(dir, 'ed25519.json');
    const person = newPerson();
    const timedOut = await runCli([
      'register',
      '--json',
      '--mode',
      'ed25519',
      '--network',
      '11142220',
      '--timeout',
      '1',
      '--key-file',
      keyFile,
      '--url',
      base,
    ]);
    expect(timedOut.code, timedOut.stdout + timedOut.stderr).toBe(4);
    const events = jsonLines(timedOut.stdout);
    expect(events[0]).toMatchObject({ event: 'session', deepLink: expect.stringMatching(DEEP_LINK), sessionToken: expect.any(String) });
    expect(events).toContainEqual({ event: 'stage', stage: 'qr-ready' });
    expect(events.at(-1)).toMatchObject({
      exitCode: 4,
      error: expect.stringMatching(/still qr-ready after 1 s.*agent-identity-registry export .*--token /),
    });
    expect(existsSync(keyFile)).toBe(false);

    const token = /--token '?([^'\s]+)'?/.exec(events.at(-1)?.['error'] as string)?.[1] as string;
    const waiting = await runCli(['status', '--json', '--token', token, '--url', base]);
    expect(waiting.code).toBe(0);
    expect(JSON.parse(waiting.stdout)).toMatchObject({ stage: 'qr-ready', mode: 'ed25519', network: 'testnet' });
    await approve(events[0]?.['deepLink'] as string, person);
    const exported = await runCli(['export', '--json', '--token', token, '--key-file', keyFile, '--url', base]);
    expect(exported.code, exported.stdout + exported.stderr).toBe(0);
    const done = jsonLines(exported.stdout).at(-1);
    expect(done).toMatchObject({ event: 'exported', keyType: 'ed25519', network: 'testnet', keyFile });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const again = await runCli(['export', '--json', '--token', token, '--key-file', join(dir, 'again.json'), '--url', base]);
    expect(again.code).toBe(1);
    expect(jsonLines(again.stdout).at(-1)).toMatchObject({ exitCode: 1, error: expect.any(String) });
    expect(existsSync(join(dir, 'again.json'))).toBe(false);

    const status = await runCli(['status', '--json', '--key-file', keyFile]);
    expect(status.code, status.stdout).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ agentId: done?.['agentId'], humanBacked: true, isVerified: true });

    const deregister = startCli(['deregister', '--json', '--key-file', keyFile]);
    const opened = JSON.parse((await deregister.waitFor(/^\{"event":"session".*\}$/m))[0]) as { deepLink: string };
    await approve(opened.deepLink, person);
    expect(await deregister.exited, deregister.output).toBe(0);
    expect(jsonLines(deregister.output).at(-1)).toMatchObject({ event: 'deregistered', agentId: done?.['agentId'] });

    const gone = await runCli(['verify', '--json', 'testnet', String(done?.['agentId']), '--url', base]);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout)).toMatchObject({ humanBacked: false, isVerified: false });
  }, 90_000);

  it('without a terminal, the stage is one line per change, and a time-out says how to pick the session up (exit 4)', async () => {
    const keyFile = join(dir, 'piped.json');
    const piped = await runCli(['register', '--network', 'testnet', '--timeout', '2', '--key-file', keyFile, '--url', base]);
    expect(piped.code).toBe(4);
    expect(piped.stdout.match(/^waiting for the human to scan the QR code$/gm)).toHaveLength(1);
    expect(piped.stdout).not.toContain('\u001b[2K');
    expect(piped.stdout).toMatch(/^timed out \(qr-ready\)$/m);
    expect(piped.stderr).toMatch(
      /the registration is still qr-ready after 2 s; it goes on until it expires .*: pick it up with: agent-identity-registry export --url /,
    );
    expect(existsSync(keyFile)).toBe(false);
  });

  it('exit codes: 2 for a bad argument or a key file that exists (nothing sent), 3 when nothing answers at --url', async () => {
    const bad = await runCli(['register', '--mode', 'bogus', '--url', base]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be one of linked, wallet-free, ed25519, ed25519-linked, privy, smartwallet.*\(see --help\)/);
    const badJson = await runCli(['register', '--mode', 'linked', '--json', '--url', base]);
    expect(badJson.code).toBe(2);
    expect(JSON.parse(badJson.stdout)).toEqual({ error: expect.stringMatching(/--mode linked needs --human/), exitCode: 2 });
    expect((await runCli(['frobnicate'])).code).toBe(2);
    expect((await runCli(['verify', '44787', '1', '--url', base])).code).toBe(2);

    const taken = join(dir, 'taken.json');
    writeFileSync(taken, 'keep me');
    const exists = await runCli(['register', '--network', 'testnet', '--key-file', taken, '--url', base]);
    expect(exists.code).toBe(2);
    expect(exists.stderr).toMatch(/taken\.json exists: pass --key-file with another path, or --force/);
    expect(readFileSync(taken, 'utf8')).toBe('keep me');

    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await runCli(['verify', String(TESTNET), '1', '--url', nowhere, '--json']);
    expect(unreachable.code).toBe(3);
    expect(JSON.parse(unreachable.stdout)).toEqual({ error: `No answer from ${nowhere}: ECONNREFUSED`, exitCode: 3 });
    const register = await runCli(['register', '--network', 'testnet', '--key-file', join(dir, 'never.json'), '--url', nowhere]);
    expect(register.code).toBe(3);

    const help = await runCli(['register', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/default wallet-free[\s\S]*default mainnet[\s\S]*Exit codes:/);
  }, 60_000);
});
