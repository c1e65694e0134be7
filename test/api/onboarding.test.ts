// What an agent reads first, over a real chain with a registered agent: /llms.txt and /llms-full.txt (made from the
// route table: every link answers 200, and a new route appears without anything written by hand), the API index,
// and the discovery document, every URL of which answers.
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTENTS } from '../../src/a2a/intents.js';
import { REGISTRATION_MODES } from '../../src/core/registration-modes.js';
import type { Route } from '../../src/http/route.js';
import { type RegisteredAgent, registerWalletFree } from '../support/agents.js';
import { type QueryTestApp, queryTestApp } from '../support/queries.js';
import { deployTestNetworks, type TestNetworks } from '../support/registration-flow.js';

const PUBLIC_URL = 'https://registry.example';
const TESTNET = 11142220;

/** Markdown links [text](url) of a text. */
const linksOf = (text: string): string[] => [...text.matchAll(/\]\((https?:\/\/[^)\s]+)\)/g)].map((m) => m[1] as string);
const pathOf = (url: string): string => url.slice(PUBLIC_URL.length);

/** Every string of a JSON value that is a URL of this service. */
function serviceUrls(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string' && value.startsWith(PUBLIC_URL)) found.add(value);
  else if (Array.isArray(value)) for (const item of value) serviceUrls(item, found);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) serviceUrls(item, found);
  return found;
}

describe('onboarding texts and discovery', () => {
  let networks: TestNetworks;
  let q: QueryTestApp;
  let app: Express;
  let agent: RegisteredAgent;

  beforeAll(async () => {
    networks = await deployTestNetworks();
    agent = await registerWalletFree(networks.testnet);
    q = await queryTestApp(networks, { publicUrl: PUBLIC_URL, a2a: true });
    app = q.app;
  });
  afterAll(async () => {
    await q?.stop();
  });

  it('GET /llms.txt: the llmstxt.org shape, the modes, registration with curl, signing, A2A intents, errors', async () => {
    const res = await request(app).get('/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const text = res.text;
    const [title, blank, quote] = text.split('\n');
    expect(title).toBe('# Agent Identity Registry');
    expect(blank).toBe('');
    expect(quote).toMatch(/^> Registers AI agents/);
    for (const mode of REGISTRATION_MODES) expect(text).toContain(`- \`${mode}\` (`);
    expect(text).toContain(`curl -s -X POST ${PUBLIC_URL}/api/agent/register`);
    expect(text).toContain(`${PUBLIC_URL}/api/agent/register/status?token=<sessionToken>`);
    for (const scheme of ['x-svc-agent', 'erc8128', 'web-bot-auth']) expect(text).toContain(`- \`${scheme}\``);
    for (const intent of INTENTS) expect(text).toContain(`- \`${intent}\`: `);
    expect(text).toContain('"messageId"');
    expect(text).toContain('{"error": "<what to fix>"}');
    expect(text).toContain('at most 200kb');
    expect(text).toContain('## Optional');
  });

  it('the curl commands of llms.txt work as written: a registration opened and followed, an A2A message answered', async () => {
    const text = (await request(app).get('/llms.txt')).text;
    const curls = [...text.matchAll(/^curl -s (?:-X (\w+) )?'?(https?:\/\/[^\s']+)'?((?: -H '[^']+')*)(?: -d '([^']+)')?$/gm)];
    expect(curls.length).toBe(4);
    const run = (command: RegExpMatchArray, replace: Record<string, string> = {}) => {
      const [, method = 'GET', url = '', headers = '', data] = command;
      const fill = (value: string) => Object.entries(replace).reduce((text, [from, to]) => text.replaceAll(from, to), value);
      let call = method === 'POST' ? request(app).post(pathOf(fill(url))) : request(app).get(pathOf(fill(url)));
      for (const [, name = '', value = ''] of headers.matchAll(/-H '([^:]+): ([^']+)'/g)) call = call.set(name, fill(value));
      return data === undefined ? call : call.send(fill(data));
    };
    const [open, status, exported, a2a] = curls as [RegExpMatchArray, RegExpMatchArray, RegExpMatchArray, RegExpMatchArray];
    const opened = await run(open);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ sessionToken: expect.any(String), deepLink: expect.any(String), scanPageUrl: expect.any(String) });
    const followed = await run(status, { '<sessionToken>': opened.body.sessionToken });
    expect(followed.status).toBe(200);
    expect(followed.body.stage).toBe('qr-ready');
    // the key is handed out once the registration has completed; before, the answer says so
    const early = await run(exported, { '<sessionToken>': opened.body.sessionToken });
    expect(early.status).toBe(409);
    const answered = await run(a2a, { '<any unique id>': 'llms-txt-example' });
    expect(answered.status).toBe(200);
    expect(answered.body.error).toBeUndefined();
    expect(answered.body.result).toBeDefined();
  });

  it('every link of llms.txt and llms-full.txt answers 200', async () => {
    for (const path of ['/llms.txt', '/llms-full.txt']) {
      const text = (await request(app).get(path)).text;
      const links = linksOf(text);
      expect(links.length, path).toBeGreaterThan(5);
      for (const link of new Set(links)) {
        expect(link.startsWith(PUBLIC_URL), link).toBe(true);
        expect((await request(app).get(pathOf(link))).status, link).toBe(200);
      }
    }
  });

  it('GET /llms-full.txt: llms.txt, then every operation of the OpenAPI document and its schemas', async () => {
    const short = await request(app).get('/llms.txt');
    const full = await request(app).get('/llms-full.txt');
    const openapi = await request(app).get('/openapi.json');
    expect(full.status).toBe(200);
    expect(full.text.startsWith(short.text.trimEnd())).toBe(true);
    const paths = openapi.body.paths as Record<string, Record<string, unknown>>;
    for (const [path, methods] of Object.entries(paths)) {
      for (const method of Object.keys(methods)) expect(full.text).toContain(`### ${method.toUpperCase()} ${PUBLIC_URL}${path}\n`);
    }
    for (const schema of Object.keys(openapi.body.components.schemas)) expect(full.text).toContain(`### ${schema}\n`);
  });

  it('a route added to the table appears in llms.txt, the API index and discovery, with nothing written by hand', async () => {
    const extra: Route = {
      method: 'get',
      path: '/api/agent/brand-new',
      summary: 'A brand-new read',
      tags: ['Public queries'],
      responses: { 200: { description: 'Yes' } },
      handler: (_req, res) => {
        res.json({ ok: true });
      },
    };
    const other = await queryTestApp(networks, { publicUrl: PUBLIC_URL, tuning: { extraRoutes: [extra] }, start: false });
    try {
      const llms = await request(other.app).get('/llms.txt');
      expect(llms.text).toContain(`- [A brand-new read](${PUBLIC_URL}/api/agent/brand-new)`);
      expect((await request(app).get('/llms.txt')).text).not.toContain('brand-new');
      const index = await request(other.app).get('/api/agent');
      const queries = (index.body.groups as { name: string; operations: { url: string }[] }[]).find((g) => g.name === 'Public queries');
      expect(queries?.operations.map((op) => op.url)).toContain(`${PUBLIC_URL}/api/agent/brand-new`);
      const discovery = await request(other.app).get('/.well-known/self-agent-id.json');
      expect(JSON.stringify(discovery.body.endpoints.groups)).toContain('/api/agent/brand-new');
    } finally {
      await other.stop();
    }
  });

  it('discovery lists every group of endpoints and the signing schemes', async () => {
    const { body } = await request(app).get('/.well-known/self-agent-id.json');
    expect(body.endpoints).toMatchObject({
      openapi: `${PUBLIC_URL}/openapi.json`,
      docs: `${PUBLIC_URL}/docs`,
      llmsTxt: `${PUBLIC_URL}/llms.txt`,
      llmsFullTxt: `${PUBLIC_URL}/llms-full.txt`,
      a2a: { card: `${PUBLIC_URL}/.well-known/agent-card.json`, endpoint: `${PUBLIC_URL}/api/a2a` },
    });
    const groups = (body.endpoints.groups as { name: string; operations: { method: string; url: string }[] }[]).map((g) => g.name);
    expect(groups).toEqual(
      expect.arrayContaining(['Registration', 'Public queries', 'Discovery', 'Credentials', 'A2A', 'Demo', 'Account abstraction', 'Service']),
    );
    const demo = body.endpoints.groups.find((g: { name: string }) => g.name === 'Demo');
    expect(demo.operations.map((op: { url: string }) => op.url)).toContain(`${PUBLIC_URL}/api/demo/verify`);
    expect(body.signingSchemes.map((s: { id: string }) => s.id)).toEqual(['x-svc-agent', 'erc8128', 'web-bot-auth']);
  });

  it('every URL in discovery answers: its documents 200, its operations neither 404, 405 nor 5xx', async () => {
    const { body } = await request(app).get('/.well-known/self-agent-id.json');
    const methods = new Map<string, string>();
    for (const group of body.endpoints.groups as { operations: { method: string; url: string }[] }[]) {
      for (const op of group.operations) methods.set(`${op.url} ${op.method}`, op.method);
    }
    const values: Record<string, string> = {
      chainId: String(TESTNET),
      agentId: String(agent.agentId),
      address: agent.agent.address,
      nullifier: String(agent.nullifier),
      listId: '0',
      file: 'init.js',
    };
    const fill = (url: string) => url.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '1');
    const urls = new Set([...serviceUrls(body), ...[...methods.keys()].map((key) => key.split(' ')[0] as string)]);
    // the MCP endpoint speaks MCP (a session opened by POST initialize), mounted where the service runs: mcp*.test.ts
    urls.delete(body.mcp.endpoint);
    expect(urls.size).toBeGreaterThan(40);
    for (const url of urls) {
      const posts = methods.has(`${url} POST`);
      const gets = methods.has(`${url} GET`) || !posts;
      const path = pathOf(fill(url));
      if (gets) {
        const res = await request(app).get(path);
        // a template filled with a value that names nothing (status list 0) is a 404 of its route, not of the path
        expect(res.body.error ?? '', url).not.toMatch(/^No endpoint/);
        expect(res.status, url).not.toBe(405);
        expect(res.status, url).toBeLessThan(500);
        // a document discovery points to, not an operation that needs parameters or a token
        if (!methods.has(`${url} GET`)) expect(res.status, url).toBe(200);
      }
      if (posts) {
        const res = await request(app).post(path).send({});
        expect(res.status, url).toBeGreaterThanOrEqual(200);
        expect([404, 405], url).not.toContain(res.status);
        // this app runs no demo agent and no relayer: those say which setting they lack
        if (res.status === 503) expect(res.body.error, url).toMatch(/\bset [A-Z_]+/);
        else expect(res.status, url).toBeLessThan(500);
      }
    }
  });
});
