// The response cache in front of express, over real HTTP on listening servers and a real anvil of this file's own (it
// reorganises its chain). Parity: for every cached route, the hit (a second identical request) is what express alone
// answers to the same request, byte for byte and header for header but X-Request-Id and Date; HEAD and 304 too; and
// a hit is logged and counted as express's answer is. Invalidation: a registration, a deregistration, a provider's
// change and a reorganisation each drop the entries they affect, and only those. The followers poll only when told
// to (syncNow), so each change is one poll.
import { connect } from 'node:net';
import pino from 'pino';
import type { Abi, Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainGateway } from '../../src/chain/gateway.js';
import { type DevChain, startDevChain } from '../../src/devnet/devchain.js';
import { type RegisteredAgent, registerLinked } from '../support/agents.js';
import { deployTestSystem, type TestSystem } from '../support/chain.js';
import { deployMutableProvider, registerWithProvider, reorgFrom } from '../support/chain-changes.js';
import { deregisterByProof, type QueryTestApp, queryTestApp } from '../support/queries.js';
import type { TestNetworks } from '../support/registration-flow.js';
import { mined, setMaxAgentsPerHuman } from '../support/registry.js';
import { type CachedServing, comparable, exchange, headerOf, serveWithResponseCache } from '../support/response-cache.js';

const TESTNET = 11142220;

let chain: DevChain;
let system: TestSystem;
let q: QueryTestApp;
let serving: CachedServing;
let agent: RegisteredAgent;
/** The log lines of the app and of the cache, parsed. */
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  chain = await startDevChain({ chainId: TESTNET });
  const [mainnet, testnet] = await Promise.all([deployTestSystem('mainnet'), deployTestSystem('testnet', chain.rpcUrl)]);
  system = testnet;
  await setMaxAgentsPerHuman(system, 0n);
  const networks: TestNetworks = { mainnet, testnet, chains: new ChainGateway({ mainnet: mainnet.gateway, testnet: testnet.gateway }) };
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  q = await queryTestApp(networks, { eventPollIntervalMs: 3_600_000, a2a: true, logger });
  serving = await serveWithResponseCache(q, { logger });
  agent = await registerLinked(system);
  await q.services.queries.syncNow();
}, 60_000);

afterAll(async () => {
  await serving?.close();
  await q?.stop();
  await chain?.stop();
});

/** Response cache hits so far. */
const hits = async (): Promise<number> => (await q.cacheLookups('response')).hit;

/** GETs `path` through the cache until it is held (the first request fills it); the second must be a hit. */
async function held(path: string, headers: Record<string, string> = {}) {
  const fill = await exchange(serving.cached, path, { headers });
  expect(fill.status, path).toBe(200);
  const before = await hits();
  const hit = await exchange(serving.cached, path, { headers });
  expect(await hits(), `${path} answered by the cache`).toBe(before + 1);
  return { fill, hit };
}

/** Whether `path` is answered by the cache now, without filling it. */
const isHeld = (path: string): boolean => serving.cache.has(path);

/** Every cached route, by name: its path (for the test's agent) and the request headers it varies on. */
const ROUTES: Record<string, () => { path: string; headers?: Record<string, string> }> = {
  'agent info': () => ({ path: `/api/agent/info/${TESTNET}/${agent.agentId}` }),
  verify: () => ({ path: `/api/agent/verify/${TESTNET}/${agent.agentId}` }),
  'agent card': () => ({ path: `/api/cards/${TESTNET}/${agent.agentId}` }),
  reputation: () => ({ path: `/api/reputation/${TESTNET}/${agent.agentId}` }),
  'verify-status': () => ({ path: `/api/verify-status/${TESTNET}/${agent.agentId}` }),
  'agents of a human': () => ({ path: `/api/agent/agents/${TESTNET}/${agent.human}` }),
  'agents of a nullifier': () => ({ path: `/api/agent/agents-by-nullifier/${TESTNET}/${agent.nullifier}` }),
  discovery: () => ({ path: '/.well-known/self-agent-id.json' }),
  'ERC-8004 registration file': () => ({ path: '/.well-known/agent-registration.json' }),
  'OpenAPI document': () => ({ path: '/openapi.json' }),
  'A2A card (v0.3)': () => ({ path: '/.well-known/agent-card.json' }),
  'A2A card (v1.0)': () => ({ path: '/.well-known/agent-card.json', headers: { 'A2A-Version': '1.0' } }),
  'A2A card at the endpoint': () => ({ path: '/api/a2a' }),
  'A2A card at the legacy path, v0.3 asked': () => ({ path: '/.well-known/agent.json', headers: { 'A2A-Version': '0.3' } }),
};

describe('a hit is what express answers', () => {
  it.each(Object.keys(ROUTES))('%s: GET, HEAD and 304, byte for byte and header for header', async (name) => {
    const { path, headers = {} } = ROUTES[name]!();
    const direct = await exchange(serving.direct, path, { headers });
    expect(direct.status, name).toBe(200);
    const { fill, hit } = await held(path, headers);
    expect(comparable(fill), name).toEqual(comparable(direct));
    expect(comparable(hit), name).toEqual(comparable(direct));

    const headDirect = await exchange(serving.direct, path, { method: 'HEAD', headers });
    let before = await hits();
    const head = await exchange(serving.cached, path, { method: 'HEAD', headers });
    expect(await hits(), `${name}: HEAD answered by the cache`).toBe(before + 1);
    expect(head.body.length).toBe(0);
    expect(comparable(head), name).toEqual(comparable(headDirect));

    // the client holds the answer: express's 304, then the same from the cache
    const etag = headerOf(hit, 'etag');
    expect(etag, name).toBeDefined();
    const conditional = { ...headers, 'If-None-Match': etag as string };
    const notModified = await exchange(serving.direct, path, { headers: conditional });
    expect(notModified.status, name).toBe(304);
    const first = await exchange(serving.cached, path, { headers: conditional });
    before = await hits();
    const again = await exchange(serving.cached, path, { headers: conditional });
    const headAgain = await exchange(serving.cached, path, { method: 'HEAD', headers: conditional });
    expect(await hits(), `${name}: 304 answered by the cache`).toBe(before + 2);
    for (const answer of [first, again]) expect(comparable(answer), name).toEqual(comparable(notModified));
    expect(comparable(headAgain), name).toEqual(comparable(await exchange(serving.direct, path, { method: 'HEAD', headers: conditional })));

    // another tag: the whole answer, from the cache once express answered that condition
    const other = { ...headers, 'If-None-Match': '"another"' };
    await exchange(serving.cached, path, { headers: other });
    before = await hits();
    expect(comparable(await exchange(serving.cached, path, { headers: other })), name).toEqual(comparable(direct));
    expect(await hits()).toBe(before + 1);
  });

  it('the request id: echoed when sane, else a new one, in the place express puts it', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    await held(path);
    const echoed = await exchange(serving.cached, path, { headers: { 'X-Request-Id': 'client-id.1' } });
    expect(headerOf(echoed, 'x-request-id')).toBe('client-id.1');
    const made = await exchange(serving.cached, path, { headers: { 'X-Request-Id': 'not a sane id' } });
    expect(headerOf(made, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const direct = await exchange(serving.direct, path, { headers: { 'X-Request-Id': 'client-id.1' } });
    expect(echoed.headers.map(([name]) => name)).toEqual(direct.headers.map(([name]) => name));
  });

  it('a hit is logged and counted as express logs and counts its answer', async () => {
    const path = `/api/reputation/${TESTNET}/${agent.agentId}?seen=1`;
    const count = async (method: string, status: string): Promise<number> =>
      (await q.metrics.httpRequests.get()).values.find(
        (v) => v.labels.route === '/api/reputation/:chainId/:agentId' && v.labels.method === method && v.labels.status === status,
      )?.value ?? 0;
    const counted = { get: await count('GET', '200'), head: await count('HEAD', '200'), notModified: await count('GET', '304') };
    lines.length = 0;
    const { hit } = await held(path);
    await exchange(serving.cached, path, { method: 'HEAD' });
    const tag = { 'If-None-Match': headerOf(hit, 'etag') as string };
    await exchange(serving.cached, path, { headers: tag });
    await exchange(serving.cached, path, { headers: tag });
    expect(await count('GET', '200')).toBe(counted.get + 2);
    expect(await count('HEAD', '200')).toBe(counted.head + 1);
    expect(await count('GET', '304')).toBe(counted.notModified + 2);
    const requestLines = lines.filter((line) => line['msg'] === 'request completed');
    expect(requestLines.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'GET', path: `/api/reputation/${TESTNET}/${agent.agentId}`, status: 200 },
      { method: 'GET', path: `/api/reputation/${TESTNET}/${agent.agentId}`, status: 200 },
      { method: 'HEAD', path: `/api/reputation/${TESTNET}/${agent.agentId}`, status: 200 },
      { method: 'GET', path: `/api/reputation/${TESTNET}/${agent.agentId}`, status: 304 },
      { method: 'GET', path: `/api/reputation/${TESTNET}/${agent.agentId}`, status: 304 },
    ]);
    // the same fields, the hit's as express's
    const keys = (line: Record<string, unknown>) => Object.keys(line).sort();
    for (const line of requestLines) expect(keys(line)).toEqual(keys(requestLines[0]!));
    expect(requestLines[1]!['reqId']).toBe(headerOf(hit, 'x-request-id'));
  });
});

describe('what goes to express', () => {
  it('errors and answers of other routes are never held', async () => {
    for (const path of [`/api/agent/info/${TESTNET}/987654321`, `/api/agent/verify/${TESTNET}/abc`, '/api/health', '/docs', '/nowhere']) {
      await exchange(serving.cached, path);
      await exchange(serving.cached, path);
      expect(isHeld(path), path).toBe(false);
    }
    const before = await hits();
    for (let i = 0; i < 2; i++) expect((await exchange(serving.cached, `/api/agent/info/${TESTNET}/987654321`)).status).toBe(404);
    expect(await hits()).toBe(before);
  });

  it('a target is the path and query exactly as sent', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    await held(path);
    for (const other of [`${path}?a=1`, `${path}/`, path.replace('/verify/', '/VERIFY/')]) {
      expect((await exchange(serving.cached, other)).status, other).toBe(200);
      expect(isHeld(other), other).toBe(true);
    }
    expect(isHeld(`${path}?a=2`)).toBe(false);
  });

  it('requests the prepared answer might not fit: a body, a range, other conditions, no Host', async () => {
    const path = `/api/agent/info/${TESTNET}/${agent.agentId}`;
    await held(path);
    const before = await hits();
    const refused: Record<string, string>[] = [{ Range: 'bytes=0-10' }, { 'If-Modified-Since': new Date().toUTCString() }, { 'If-Match': '*' }];
    for (const headers of refused) expect((await exchange(serving.cached, path, { headers })).status).toBeLessThan(500);
    // Node's client sends a GET's body only with a length of its own
    expect((await exchange(serving.cached, path, { body: 'x', headers: { 'Content-Length': '1' } })).status).toBe(200);
    expect(await hits()).toBe(before);
    // no Host: the edge's JSON 400, as express alone answers it
    const bare = (base: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(base);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString();
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    const answer = await bare(serving.cached);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"error":"Missing Host header');
    expect(await hits()).toBe(before);
  });
});

describe('changes on chain drop the entries they affect, and only those', () => {
  it('a registration of the same human: the human, their nullifier and their other agents; not another agent', async () => {
    const first = await registerLinked(system);
    const bystander = await registerLinked(system);
    await q.services.queries.syncNow();
    const paths = {
      verify: `/api/agent/verify/${TESTNET}/${first.agentId}`,
      human: `/api/agent/agents/${TESTNET}/${first.human}`,
      nullifier: `/api/agent/agents-by-nullifier/${TESTNET}/${first.nullifier}`,
      bystander: `/api/agent/verify/${TESTNET}/${bystander.agentId}`,
      discovery: '/.well-known/self-agent-id.json',
    };
    for (const path of Object.values(paths)) await held(path);

    const second = await registerLinked(system, { human: first.human });
    await q.services.queries.syncNow();
    expect([paths.verify, paths.human, paths.nullifier].map(isHeld)).toEqual([false, false, false]);
    expect([paths.bystander, paths.discovery].map(isHeld)).toEqual([true, true]);
    expect(JSON.parse((await held(paths.verify)).hit.body.toString()).agentCountForHuman).toBe(2);
    expect(JSON.parse((await held(paths.human)).hit.body.toString()).agents).toEqual([first.agentId, second.agentId].map(Number));
    expect(JSON.parse((await held(paths.nullifier)).hit.body.toString()).agents).toEqual([first.agentId, second.agentId].map(Number));
  });

  it("a deregistration: the agent's answers and its human's lists", async () => {
    const registered = await registerLinked(system);
    await q.services.queries.syncNow();
    const paths = [
      `/api/agent/verify/${TESTNET}/${registered.agentId}`,
      `/api/agent/info/${TESTNET}/${registered.agentId}`,
      `/api/agent/agents/${TESTNET}/${registered.human}`,
      `/api/agent/agents-by-nullifier/${TESTNET}/${registered.nullifier}`,
    ];
    for (const path of paths) await held(path);
    const bystander = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    await held(bystander);

    await deregisterByProof(system, { human: registered.human, agent: registered.agent.address });
    await q.services.queries.syncNow();
    expect(paths.map(isHeld)).toEqual([false, false, false, false]);
    expect(isHeld(bystander)).toBe(true);
    const verify = await held(paths[0]!);
    expect(JSON.parse(verify.hit.body.toString())).toMatchObject({ isVerified: false, agentCountForHuman: 0 });
    expect((await exchange(serving.cached, paths[1]!)).status).toBe(404);
  });

  describe("a proof provider's own change (no registry event)", () => {
    let provider: Address;
    let providerAbi: Abi;

    beforeAll(async () => {
      ({ address: provider, abi: providerAbi } = await deployMutableProvider(system, 'kyc-provider', 80));
    });

    it("drops the answers of the provider's agents at the next poll", async () => {
      const { agentId } = await registerWithProvider(system, provider, 'proof of the response cache test');
      await q.services.queries.syncNow();
      const paths = [
        `/api/reputation/${TESTNET}/${agentId}`,
        `/api/agent/verify/${TESTNET}/${agentId}`,
        `/api/cards/${TESTNET}/${agentId}`,
        `/api/agent/info/${TESTNET}/${agentId}`,
      ];
      for (const path of paths) await held(path);
      const bystander = `/api/reputation/${TESTNET}/${agent.agentId}`;
      await held(bystander);

      await mined(system, system.operator.writeContract({ address: provider, abi: providerAbi, functionName: 'setProviderName', args: ['renamed'] }));
      await q.services.queries.syncNow();
      expect(paths.map(isHeld)).toEqual([false, false, false, false]);
      expect(isHeld(bystander)).toBe(true);
      expect(JSON.parse((await held(paths[0]!)).hit.body.toString()).providerName).toBe('renamed');
    });
  });

  it("a reorganisation: every entry of that network's chain; not the other network's, not the documents", async () => {
    const registered = await registerLinked(system);
    const { blockNumber } = await system.client.getTransactionReceipt({ hash: registered.txHash });
    await q.services.queries.syncNow();
    const dropped = [
      `/api/agent/verify/${TESTNET}/${registered.agentId}`,
      `/api/agent/verify/${TESTNET}/${agent.agentId}`,
      `/api/agent/agents/${TESTNET}/${registered.human}`,
    ];
    const kept = [`/api/agent/verify/42220/${agent.agentId}`, '/openapi.json', '/.well-known/agent-card.json'];
    for (const path of [...dropped, ...kept]) await held(path);

    await reorgFrom(system, blockNumber);
    await q.services.queries.syncNow();
    expect(dropped.map(isHeld)).toEqual([false, false, false]);
    expect(kept.map(isHeld)).toEqual([true, true, true]);
    expect(JSON.parse((await held(dropped[0]!)).hit.body.toString())).toMatchObject({ isVerified: false });
    expect(JSON.parse((await held(dropped[2]!)).hit.body.toString()).agents).toEqual([]);
  });

  it('once the followers stop, nothing is answered from the cache (changes would go unheard)', async () => {
    const path = `/api/agent/verify/${TESTNET}/${agent.agentId}`;
    await held(path);
    await q.stop();
    const before = await hits();
    expect((await exchange(serving.cached, path)).status).toBe(200);
    expect(await hits()).toBe(before);
    // the documents do not depend on the chain
    await held('/openapi.json');
  });
});
