// The scan page over real HTTP and real chains: GET /register/{watch token} as a page for browsers and as JSON for
// programs, its refusals in both forms (the session token among them), its own headers (CSP by hash, no-store,
// no Referer), and its live events following a session to completed, failed or expired.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { registrationSessionSchema } from '../../src/http/schemas/registration.js';
import { scanPageStateSchema } from '../../src/http/schemas/scan-page.js';
import { deregistrationSessionSchema, identifySessionSchema } from '../../src/http/schemas/sessions.js';
import { newAccount } from '../support/agents.js';
import { testApp } from '../support/app.js';
import { eventually } from '../support/queries.js';
import {
  approveDeepLink,
  callbackTarget,
  callbackTokenOf,
  deployTestNetworks,
  newDocument,
  type TestNetworks,
} from '../support/registration-flow.js';
import { type Body, expectConforms, manualClock, registerAgent, THIRTY_MINUTES, tampered } from '../support/session-flows.js';

const TESTNET = 11142220;
const PUBLIC_URL = 'http://127.0.0.1:3000';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** The watch token a scan page address holds. */
const refOf = (scanPageUrl: string): string => decodeURIComponent(new URL(scanPageUrl).pathname.split('/').pop() as string);
const pathOf = (scanPageUrl: string): string => new URL(scanPageUrl).pathname;

/** The server-sent events of a stream, read until it ends or `until` says enough. */
async function readEvents(
  url: string,
  until: (events: Body[]) => boolean,
  onFirst?: () => Promise<unknown>,
): Promise<{ status: number; headers: Headers; events: Body[]; ended: boolean }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
  const events: Body[] = [];
  if (res.status !== 200 || !res.body) return { status: res.status, headers: res.headers, events: [(await res.json()) as Body], ended: true };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  let first = true;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n');
      if (lines.includes('event: state')) {
        const data = lines.find((line) => line.startsWith('data: '));
        events.push(JSON.parse((data as string).slice('data: '.length)) as Body);
        if (first && onFirst) {
          first = false;
          await onFirst();
        }
      }
      end = buffer.indexOf('\n\n');
    }
    if (until(events)) {
      controller.abort();
      break;
    }
  }
  return { status: res.status, headers: res.headers, events, ended };
}

const unescapeHtml = (text: string): string =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Two deep links of the same session: everything equal but the callback token (each link gets its own). */
function expectSameSession(link: string, sessionLink: string): void {
  const withoutToken = (app: ReturnType<typeof selfAppFromDeepLink>) => ({
    ...app,
    deeplinkCallback: app.deeplinkCallback.replace(/token=[^&]+/, ''),
  });
  expect(withoutToken(selfAppFromDeepLink(link))).toEqual(withoutToken(selfAppFromDeepLink(sessionLink)));
  expect(link.split('?')[0]).toBe(sessionLink.split('?')[0]);
}

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const between = (html: string, open: string, close: string): string => {
  const start = html.indexOf(open);
  expect(start, `${open} in the page`).toBeGreaterThanOrEqual(0);
  return html.slice(start + open.length, html.indexOf(close, start));
};

describe('scan page', () => {
  let net: TestNetworks;
  let app: Express;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    net = await deployTestNetworks();
    ({ app } = testApp(net.chains, { publicUrl: PUBLIC_URL, sessionWatch: { pollIntervalMs: 100 } }));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function openRegistration(body: Body = {}): Promise<Body> {
    const res = await request(app)
      .post('/api/agent/register')
      .send({ mode: 'linked', network: 'testnet', humanAddress: newAccount().address, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectConforms(registrationSessionSchema, res.body);
    return res.body as Body;
  }

  it('is offered by the register answer: an address on the public URL holding the same watch token as scanUrl, never the session token', async () => {
    const session = await openRegistration();
    const page = new URL(session['scanPageUrl'] as string);
    expect(page.origin).toBe(PUBLIC_URL);
    expect(page.pathname).toMatch(/^\/register\/[^/]+$/);
    expect(refOf(session['scanPageUrl'] as string)).toBe(new URL(session['scanUrl'] as string).searchParams.get('token'));
    expect(session['scanPageUrl']).not.toContain(session['sessionToken'] as string);
  });

  it('serves the page to a browser: QR code, deep link button, mode, network and disclosures in words, with its own CSP and private headers', async () => {
    const session = await openRegistration({ disclosures: { minimumAge: 18, ofac: true, nationality: true } });
    const res = await request(app)
      .get(pathOf(session['scanPageUrl'] as string))
      .set('Accept', BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const html = res.text;
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toContain('<title>Register your agent | Agent Identity Registry</title>');
    expect(html).toMatch(
      /<img id="qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*" width="560" height="560" alt="QR code for the identity app[^"]+">/,
    );
    // the button carries this session's deep link: the same request, with a callback token of its own
    const href = /<a id="deep-link" class="button" href="([^"]+)">Open in the identity app<\/a>/.exec(html)?.[1];
    expect(href).toBeDefined();
    expectSameSession(unescapeHtml(href as string), session['deepLink'] as string);
    expect(html).toContain('Linked agent: a generated key, the NFT owned by your wallet (linked)');
    expect(html).toContain('Celo Sepolia (testnet, chain 11142220)');
    for (const words of ['That you are at least 18 years old', 'That you are not on the OFAC sanctions lists', 'Your nationality'])
      expect(html).toContain(`<li>${words}</li>`);
    expect(html).not.toContain('<li>Your name</li>');
    expect(html).toMatch(/<div id="status" role="status" aria-live="polite"/);
    expect(html).toContain('data-stage="qr-ready" data-final="false"');
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers

    // the policy allows exactly the page's own inline style and script, by hash, and nothing of another origin
    const csp = String(res.headers['content-security-policy']);
    const directives = Object.fromEntries(
      csp.split(';').map((part) => {
        const [name, ...values] = part.trim().split(/\s+/);
        return [name, values.join(' ')];
      }),
    );
    expect(directives).toEqual({
      'default-src': "'none'",
      'style-src': sha256(between(html, '<style>', '</style>')),
      'script-src': sha256(between(html, '<script>', '</script>')),
      'connect-src': "'self'",
      'img-src': 'data:',
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    expect(csp).not.toContain('unsafe');
  });

  it('keeps the watch token out of the request log: the line names the path template', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const { app: logged } = testApp(net.chains, { logger });
    const opened = await request(logged).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
    const ref = refOf(opened.body.scanPageUrl as string);
    expect((await request(logged).get(pathOf(opened.body.scanPageUrl as string))).status).toBe(200);
    expect((await request(logged).get(`/register/${encodeURIComponent(ref)}x/events`)).status).toBe(401);
    const paths = lines.map((line) => JSON.parse(line) as { path?: string }).flatMap((line) => (line.path ? [line.path] : []));
    expect(paths).toEqual(expect.arrayContaining(['/register/{sessionRef}', '/register/{sessionRef}/events']));
    expect(lines.join('\n')).not.toContain(ref.slice(0, 40));
  });

  it('answers its state as JSON to programs, as the document describes it', async () => {
    const session = await openRegistration();
    for (const accept of [undefined, 'application/json', '*/*']) {
      const req = request(app).get(pathOf(session['scanPageUrl'] as string));
      const res = accept ? await req.set('Accept', accept) : await req;
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expectConforms(scanPageStateSchema, res.body);
      expect(res.body).toMatchObject({ kind: 'register', stage: 'qr-ready', final: false, network: 'testnet', links: [] });
    }
  });

  it('refuses the session token, a callback token, an altered or a made-up ref: JSON by default, a page with the same status and message for browsers', async () => {
    const session = await openRegistration();
    const sessionToken = session['sessionToken'] as string;
    const refs: [string, RegExp][] = [
      [sessionToken, /watch token of the scan link \(scanPageUrl\), never the session token/],
      [callbackTokenOf(session['deepLink'] as string), /^Invalid session token$/],
      [tampered(refOf(session['scanPageUrl'] as string)), /^Invalid session token$/],
      ['<script>alert(1)</script>', /^Invalid session token$/],
    ];
    for (const [ref, message] of refs) {
      const path = `/register/${encodeURIComponent(ref)}`;
      const json = await request(app).get(path);
      expect(json.status, ref).toBe(401);
      expect(json.headers['content-type']).toMatch(/^application\/json/);
      expect(json.body.error).toMatch(message);
      expect(json.headers['referrer-policy']).toBe('no-referrer');

      const html = await request(app).get(path).set('Accept', BROWSER_ACCEPT);
      expect(html.status, ref).toBe(401);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.headers['cache-control']).toBe('no-store');
      expect(html.headers['referrer-policy']).toBe('no-referrer');
      expect(html.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; img-src data:;/);
      expect(html.headers['content-security-policy']).not.toContain('script-src');
      expect(html.text).toContain('<h1>This link cannot be opened</h1>');
      expect(html.text).toContain(`<p id="headline">${json.body.error as string}</p>`);
      expect(html.text).not.toContain('<script>');
      expect(html.text).not.toContain(sessionToken);

      const events = await request(app).get(`${path}/events`).set('Accept', 'text/event-stream');
      expect(events.status).toBe(401);
      expect(events.body.error).toMatch(message);
    }
  });

  it('says an expired session expired: 410 as JSON and as a page', async () => {
    const clock = manualClock();
    const { app: clocked } = testApp(net.chains, { clock: clock.now });
    const res = await request(clocked).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
    const path = pathOf(res.body.scanPageUrl as string);
    clock.advance(THIRTY_MINUTES + 1);
    const json = await request(clocked).get(path);
    expect(json.status).toBe(410);
    expect(json.body).toEqual({ error: 'Session expired' });
    const html = await request(clocked).get(path).set('Accept', BROWSER_ACCEPT);
    expect(html.status).toBe(410);
    expect(html.text).toContain('<h1>This session expired</h1>');
    expect(html.text).toContain('Session expired');
    expect((await request(clocked).get(`${path}/events`)).status).toBe(410);
  });

  it('streams the session live: the current state at once, the new stage, then completed with the agent and its info link, and ends', async () => {
    const document = newDocument();
    const session = await openRegistration();
    const url = `${origin}${pathOf(session['scanPageUrl'] as string)}/events`;
    const stream = await readEvents(
      url,
      (events) => events.some((event) => event['final'] === true),
      () => approveDeepLink(app, net, session['deepLink'] as string, { document }),
    );
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    expect(stream.headers.get('referrer-policy')).toBe('no-referrer');
    for (const event of stream.events) expectConforms(scanPageStateSchema, event);
    expect(stream.events[0]).toMatchObject({ kind: 'register', stage: 'qr-ready', final: false });
    const last = stream.events.at(-1) as Body;
    const agentId = last['agentId'] as number;
    expect(agentId).toBeGreaterThan(0);
    expect(last).toMatchObject({
      stage: 'completed',
      final: true,
      headline: `Your agent is registered: agent ID ${agentId}.`,
      links: [
        { href: `/api/agent/info/${TESTNET}/${agentId}`, label: `Agent ${agentId}: its record (info endpoint)` },
        { href: `/api/cards/${TESTNET}/${agentId}`, label: `Agent ${agentId}: its agent card` },
      ],
    });
    // the link is real: the agent's info
    expect((await request(app).get(`/api/agent/info/${TESTNET}/${agentId}`)).body).toMatchObject({ agentId, isVerified: true });

    // a completed session's stream is its final state and the end; its page has no QR code and no script
    const again = await readEvents(url, () => false);
    expect(again.ended).toBe(true);
    expect(again.events).toEqual([expect.objectContaining({ stage: 'completed', final: true, agentId })]);
    const page = await request(app)
      .get(pathOf(session['scanPageUrl'] as string))
      .set('Accept', BROWSER_ACCEPT);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('id="qr"');
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain(`<a href="/api/agent/info/${TESTNET}/${agentId}">`);
    expect(page.headers['content-security-policy']).not.toContain('script-src');
    const opened = await request(app).get(pathOf(session['scanPageUrl'] as string));
    expect(opened.body).toMatchObject({ stage: 'completed', agentStatus: 'registered' });
    expect(opened.body.headline).toMatch(
      new RegExp(`^Your agent is registered: agent ID ${agentId}\\. Its proof of human is valid until \\d{4}-\\d{2}-\\d{2}\\.$`),
    );

    // the page follows the agent after its session: once deregistered, it says so and links nowhere
    const deregistration = await request(app)
      .post('/api/agent/deregister')
      .set('X-Forwarded-For', '203.0.113.71')
      .send({ network: 'testnet', agentAddress: session['agentAddress'] });
    expect(deregistration.status, JSON.stringify(deregistration.body)).toBe(200);
    expect((await approveDeepLink(app, net, deregistration.body.deepLink as string, { document })).proof.status).toBe('submitted');
    // the page reads the agent through the query cache, which hears of the deregistration at the follower's next poll
    const { value: later } = await eventually(
      () => request(app).get(pathOf(session['scanPageUrl'] as string)),
      (res) => res.body.agentStatus === 'deregistered',
      10_000,
    );
    expectConforms(scanPageStateSchema, later.body);
    expect(later.body).toMatchObject({
      stage: 'completed',
      agentStatus: 'deregistered',
      headline: `Agent ${agentId} was registered by this session, and has since been removed (deregistered).`,
      links: [],
    });
    const laterPage = await request(app)
      .get(pathOf(session['scanPageUrl'] as string))
      .set('Accept', BROWSER_ACCEPT);
    expect(laterPage.text).toContain('has since been removed (deregistered)');
    expect(laterPage.text).not.toContain('/api/agent/info/');
  });

  it('frees its watch slot when the browser leaves the page', async () => {
    const watched = testApp(net.chains, { sessionWatch: { pollIntervalMs: 50 } });
    const own = createServer(watched.app);
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const res = await request(watched.app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
      const url = `http://127.0.0.1:${(own.address() as AddressInfo).port}${pathOf(res.body.scanPageUrl as string)}/events`;
      const stream = await readEvents(url, (events) => events.length === 1);
      expect(stream.events[0]).toMatchObject({ stage: 'qr-ready', final: false });
      // the reader left after the first event: the service stops following the session for it
      for (let i = 0; i < 100 && watched.services.watcher.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(watched.services.watcher.size).toBe(0);
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  it('streams a failure with the reason the identity app gave', async () => {
    const session = await openRegistration();
    const url = `${origin}${pathOf(session['scanPageUrl'] as string)}/events`;
    const stream = await readEvents(
      url,
      (events) => events.some((event) => event['final'] === true),
      () =>
        request(app)
          .post(callbackTarget(session['deepLink'] as string))
          .send({ status: 'error', error: 'The human declined <the request>' }),
    );
    expect(stream.events.at(-1)).toMatchObject({
      stage: 'failed',
      final: true,
      headline: 'Registration failed: The human declined <the request>',
      error: 'The human declined <the request>',
    });
    const page = await request(app)
      .get(pathOf(session['scanPageUrl'] as string))
      .set('Accept', BROWSER_ACCEPT);
    expect(page.text).toContain('Registration failed: The human declined &lt;the request&gt;');
    expect(page.text).not.toContain('<the request>');
  });

  it("explains a chain's refusal in words, keeping the contract's own beside them", async () => {
    const opened = await request(app)
      .post('/api/agent/register')
      .set('X-Forwarded-For', '203.0.113.72')
      .send({ mode: 'wallet-free', network: 'testnet' });
    const session = opened.body as Body;
    await request(app)
      .post(callbackTarget(session['deepLink'] as string))
      .send({ status: 'error', error: 'MockDocumentsNotAccepted()' });
    const state = await request(app).get(pathOf(session['scanPageUrl'] as string));
    expect(state.body).toMatchObject({
      stage: 'failed',
      headline: 'Registration failed: this network accepts only real passports and ID cards, and the identity app proved with a mock document',
      error: 'MockDocumentsNotAccepted()',
    });
    expect(state.body.instructions).toContain("The chain's reason: MockDocumentsNotAccepted()");
  });

  it('streams expiry when the 30 minutes run out while the page watches', async () => {
    const clock = manualClock();
    const clocked = testApp(net.chains, { clock: clock.now, sessionWatch: { pollIntervalMs: 50 } });
    const own = createServer(clocked.app);
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const res = await request(clocked.app).post('/api/agent/register').send({ mode: 'wallet-free', network: 'testnet' });
      const url = `http://127.0.0.1:${(own.address() as AddressInfo).port}${pathOf(res.body.scanPageUrl as string)}/events`;
      const stream = await readEvents(
        url,
        (events) => events.some((event) => event['final'] === true),
        async () => clock.advance(THIRTY_MINUTES + 1),
      );
      expect(stream.events.at(-1)).toMatchObject({
        stage: 'expired',
        final: true,
        headline: 'This session expired before it finished. Open a new registration session to try again.',
        error: 'Session expired',
      });
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  it('fits the other kinds of session: their answers offer the page, and it names what they do', async () => {
    const agent = await registerAgent(app, net, 'linked');
    const identify = await request(app).post('/api/agent/identify').send({ network: 'testnet' });
    expectConforms(identifySessionSchema, identify.body);
    const deregister = await request(app).post('/api/agent/deregister').send({ network: 'testnet', agentAddress: agent.agentAddress });
    expectConforms(deregistrationSessionSchema, deregister.body);
    const refresh = await request(app).post('/api/agent/refresh').send({ network: 'testnet', agentId: agent.agentId });
    expect(refresh.body.scanPageUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/register\//);

    const page = async (body: Body) =>
      (
        await request(app)
          .get(pathOf(body['scanPageUrl'] as string))
          .set('Accept', BROWSER_ACCEPT)
      ).text;
    const identifyPage = await page(identify.body as Body);
    expect(identifyPage).toContain('<h1>Find your agents</h1>');
    expect(identifyPage).toContain('No personal details are requested.');
    expect(identifyPage).not.toContain('<dt>Mode</dt>');
    const deregisterPage = await page(deregister.body as Body);
    expect(deregisterPage).toContain('<h1>Remove your agent</h1>');
    expect(deregisterPage).toContain(`<dt>Agent</dt><dd>Agent ID ${agent.agentId}</dd>`);
    expect(await page(refresh.body as Body)).toContain('<h1>Refresh your agent&#39;s proof</h1>');

    // the identify session completes with the human's agents, each linked to its info
    const url = `${origin}${pathOf(identify.body.scanPageUrl as string)}/events`;
    const stream = await readEvents(
      url,
      (events) => events.some((event) => event['final'] === true),
      () => approveDeepLink(app, net, identify.body.deepLink as string, { document: agent.document }),
    );
    expect(stream.events.at(-1)).toMatchObject({
      kind: 'identify',
      stage: 'completed',
      headline: 'You are identified: you have one agent on this network.',
      agentIds: [agent.agentId],
      links: [{ href: `/api/agent/info/${TESTNET}/${agent.agentId}` }],
    });
  });
});
