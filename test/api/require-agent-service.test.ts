// requireAgent({ service }) and verifyAgentRequest with only a registry service's URL: the chain's RPC (the service's
// own local chain) and the registry's address come from the service's discovery document, read once and kept; a
// service that does not answer is a 503 naming it, and is asked again at the next request rather than remembered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent, signingFetch, verifyAgentRequest } from '../../src/client/index.js';
import { registerLinked } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';
import { freePort } from '../support/service-process.js';

const DISCOVERY = '/.well-known/self-agent-id.json';

/** The registry service on `port`, counting the reads of its discovery document. */
async function startRegistryService(
  networks: TestNetworks,
  port: number,
): Promise<{ q: QueryTestApp; server: Server; discoveryReads: () => number }> {
  const q = await queryTestApp(networks, { publicUrl: `http://127.0.0.1:${port}` });
  let reads = 0;
  const server = createServer((req, res) => {
    if (req.url === DISCOVERY) reads++;
    q.app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { q, server, discoveryReads: () => reads };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('requireAgent({ service })', () => {
  let networks: TestNetworks;
  let registryPort: number;
  let registry: Awaited<ReturnType<typeof startRegistryService>> | undefined;
  let shop: Server;
  let shopUrl: string;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    registryPort = await freePort();
    const app = express();
    // nothing but the service's URL and the network
    app.post(
      '/orders',
      express.text({ type: '*/*' }),
      requireAgent({ service: `http://127.0.0.1:${registryPort}`, network: 'testnet' }),
      (req, res) => {
        res.json({ agentId: String(req.agent?.agentId) });
      },
    );
    shop = createServer(app);
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/orders`;
  });

  afterAll(async () => {
    await close(shop);
    if (registry) {
      await registry.q.stop();
      await close(registry.server);
    }
  });

  it('answers 503 naming the service while it does not answer, then learns the registry from it once it does, and keeps it', async () => {
    const agent = await registerLinked(networks.testnet);
    const order = () => signingFetch({ type: 'secp256k1', account: agent.agent })(shopUrl, { method: 'POST', body: '{"item":"tea"}' });

    const down = await order();
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: string }).error).toMatch(
      new RegExp(`could not learn the registry from http://127\\.0\\.0\\.1:${registryPort}.*ECONNREFUSED`),
    );

    registry = await startRegistryService(networks, registryPort);
    const first = await order();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ agentId: String(agent.agentId) });
    const second = await order();
    expect(second.status).toBe(200);
    expect(registry.discoveryReads()).toBe(1);
  });

  it("verifyAgentRequest({ service }) refuses an agent the service's registry does not hold, and a network the service names no registry for", async () => {
    registry ??= await startRegistryService(networks, registryPort);
    const base = `http://127.0.0.1:${registryPort}`;
    const onTestnet = { service: base, network: 'testnet' } as const;
    const agent = await registerLinked(networks.testnet);
    const sign = async (url: string) => {
      const headers = new Headers();
      const signed = signingFetch({ type: 'secp256k1', account: agent.agent }, async (_input, init) => {
        for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
        return new Response(null);
      });
      await signed(url, { method: 'POST', body: '{}' });
      return new Request(url, { method: 'POST', headers, body: '{}' });
    };
    expect((await verifyAgentRequest(await sign('http://shop.example/a'), onTestnet)).ok).toBe(true);
    // the same agent is unknown to the mainnet registry the service names
    const mainnet = await verifyAgentRequest(await sign('http://shop.example/b'), { service: base, network: 'mainnet' });
    expect(mainnet.ok).toBe(false);
    if (!mainnet.ok) expect(mainnet.response.status).toBe(403);
    // a URL that is not a registry service: discovery is not JSON
    const elsewhere = await verifyAgentRequest(await sign('http://shop.example/c'), {
      service: shopUrl.replace(/\/orders$/, ''),
      network: 'testnet',
    });
    expect(elsewhere.ok).toBe(false);
    if (!elsewhere.ok) {
      expect(elsewhere.response.status).toBe(503);
      expect(((await elsewhere.response.json()) as { error: string }).error).toMatch(/could not learn the registry/);
    }
  });
});
