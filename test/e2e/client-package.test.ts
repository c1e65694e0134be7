// The published package as a user installs it: `npm pack` of packages/client (npm run pack:client), installed into a
// fresh project with npm, which fetches its dependencies from the registry (or npm's cache). There the SDK is
// imported in plain Node and asked about a started service, and `npx agent-identity-registry` verifies an agent.
// Slow: an npm install of the SDK's dependencies (tens of seconds on a warm cache, minutes on a cold one), hence its
// own time limits; it runs with the rest of the suite, in CI too.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const run = promisify(execFile);
const INSTALL_MS = 10 * 60_000;

describe('the published package (npm pack, then npm install in a fresh project)', { timeout: INSTALL_MS }, () => {
  const project = mkdtempSync(join(tmpdir(), 'fresh-project-'));
  let networks: TestNetworks;
  let q: QueryTestApp;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const { stdout } = await run(process.execPath, ['scripts/pack-client.mjs', '--pack', project], { maxBuffer: 16 * 1024 * 1024 });
    const tarball = stdout.trim().split('\n').at(-1) as string;
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'fresh-project', private: true, type: 'module' })}\n`);
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], {
      cwd: project,
      timeout: INSTALL_MS,
      maxBuffer: 16 * 1024 * 1024,
    });

    networks = await deployTestNetworks();
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    q = await queryTestApp(networks, { publicUrl: base });
    server.on('request', q.app);
  }, INSTALL_MS);

  afterAll(async () => {
    await q?.stop();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    rmSync(project, { recursive: true, force: true });
  });

  it('holds the SDK and the CLI, not the service, and only the SDK’s dependencies', () => {
    const installed = join(project, 'node_modules', 'agent-identity-registry');
    expect(existsSync(join(installed, 'dist', 'client', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'main.js'))).toBe(false);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    // (express is not among them: @modelcontextprotocol/sdk, the client of the mcp command's bridge, depends on it)
    for (const serviceOnly of ['better-sqlite3', 'ioredis', 'pino', '@foundry-rs/anvil-linux-amd64']) {
      expect(existsSync(join(project, 'node_modules', serviceOnly)), serviceOnly).toBe(false);
    }
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(['agent-identity-registry']);
  });

  it('the SDK imported there reads the service, and npx agent-identity-registry verifies an agent', async () => {
    const agent = await registerLinked(networks.testnet);
    const script = `
      import { RegistryClient } from 'agent-identity-registry/client';
      const client = new RegistryClient(${JSON.stringify(base)});
      const discovery = await client.discovery();
      const proof = await client.verifyAgent(11142220, ${agent.agentId});
      console.log(JSON.stringify({ registry: discovery.chains.testnet.registry, isVerified: proof.isVerified }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ registry: networks.testnet.deployment.contracts.registry, isVerified: true });

    const cli = await run('npx', ['--no', 'agent-identity-registry', 'verify', '11142220', String(agent.agentId), '--url', base], { cwd: project });
    expect(cli.stdout).toMatch(new RegExp(`Agent ${agent.agentId} on testnet \\(chain 11142220\\) is human-backed`));
  });
});
