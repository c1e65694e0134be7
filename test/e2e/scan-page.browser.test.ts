// The scan page in a real browser, against the service as users start it (`node dist/main.js`): a registration is
// opened over HTTP, its scanPageUrl opened in headless Chromium, the QR code is shown and the button carries the
// session's deep link; the mock identity app (its CLI, from the deep link alone) plays the phone, and the page turns
// to completed by itself, naming the agent and linking its info. Without EventSource it gets there by polling. A ref
// that is no watch token shows a page saying so. Screenshots are kept under test/artifacts/.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SelfApp, selfAppFromDeepLink } from '../../src/core/deep-link.js';
import { chromiumPath, launchChromium, NO_CHROMIUM } from '../support/browser.js';
import { startServiceProcess, tsxBin as tsx } from '../support/service-process.js';

const run = promisify(execFile);
const CHROMIUM = chromiumPath();
const ARTIFACTS = join(process.cwd(), 'test/artifacts');
const TESTNET = 11142220;

if (!CHROMIUM) console.warn(NO_CHROMIUM);

/** Two deep links of the same session: the same request, each with a callback token of its own. */
function expectSameSession(link: string, sessionLink: string): void {
  const withoutToken = (app: SelfApp) => ({ ...app, deeplinkCallback: app.deeplinkCallback.replace(/token=[^&]+/, '') });
  expect(withoutToken(selfAppFromDeepLink(link))).toEqual(withoutToken(selfAppFromDeepLink(sessionLink)));
  expect(link.split('?')[0]).toBe(sessionLink.split('?')[0]);
}

interface Session {
  sessionToken: string;
  deepLink: string;
  scanPageUrl: string;
}

describe.skipIf(!CHROMIUM)(`scan page in a browser${CHROMIUM ? '' : ` (skipped: ${NO_CHROMIUM})`}`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'scan-page-'));
  let base: string;
  let stopService: () => Promise<void>;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    [{ base, stop: stopService }, browser] = await Promise.all([startServiceProcess(dataDir), launchChromium(CHROMIUM as string)]);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stopService?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function openRegistration(document: string): Promise<Session> {
    const res = await fetch(`${base}/api/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        mode: 'linked',
        network: 'testnet',
        humanAddress: `0x${document.repeat(40).slice(0, 40)}`,
        disclosures: { minimumAge: 18, nationality: true },
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Session;
  }

  /** The human approves on the phone: the identity app's CLI from the deep link alone, with a passport of its own. */
  async function approveOnPhone(deepLink: string, documentNumber: string): Promise<void> {
    const { stdout } = await run(tsx, ['src/identity-app/cli.ts', 'approve', deepLink, '--document-number', documentNumber], {
      env: { ...process.env, DATA_DIR: dataDir },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) as string)).toMatchObject({ status: 'submitted', callback: 200 });
  }

  /** A page that records what the browser refused (CSP) or failed on. */
  async function newPage(options: { withoutEventSource?: boolean } = {}): Promise<{ page: Page; problems: string[]; requests: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1024, height: 1100 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (req) => requests.push(new URL(req.url()).pathname));
    if (options.withoutEventSource) await page.addInitScript('delete window.EventSource;');
    return { page, problems, requests };
  }

  async function expectCompleted(page: Page): Promise<number> {
    await page.locator('body[data-stage="completed"]').waitFor({ timeout: 45_000 });
    const headline = await page.locator('#headline').textContent();
    const agentId = Number(/agent ID (\d+)/.exec(headline ?? '')?.[1]);
    expect(agentId, headline ?? '').toBeGreaterThan(0);
    expect(await page.locator('#scan').isHidden()).toBe(true);
    const info = page.locator('#result a').first();
    expect(await info.getAttribute('href')).toBe(`/api/agent/info/${TESTNET}/${agentId}`);
    expect(await info.textContent()).toBe(`Agent ${agentId}: its record (info endpoint)`);
    expect(await page.title()).toMatch(/^Your agent is registered/);
    expect(await page.locator('#lead').textContent()).toBe('This session has ended.');
    return agentId;
  }

  it('shows the QR code and the deep link, and turns to completed by itself when the phone approves', async () => {
    const session = await openRegistration('1');
    const { page, problems, requests } = await newPage();
    const response = await page.goto(session.scanPageUrl);
    expect(response?.status()).toBe(200);
    expect(await response?.headerValue('content-security-policy')).toMatch(/^default-src 'none'/);

    // the QR image decoded and shown; the button carries this session's deep link
    const qr = page.locator('#qr');
    await qr.waitFor();
    expect(
      await qr.evaluate((img) => {
        const image = img as unknown as { complete: boolean; naturalWidth: number };
        return image.complete ? image.naturalWidth : 0;
      }),
    ).toBeGreaterThan(0);
    expect(await qr.getAttribute('alt')).toMatch(/^QR code for the identity app/);
    const button = page.getByRole('link', { name: 'Open in the identity app' });
    const deepLink = (await button.getAttribute('href')) as string;
    expectSameSession(deepLink, session.deepLink);
    await button.focus();
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('deep-link');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.title()).toBe('Register your agent | Agent Identity Registry');
    expect(await page.getByRole('status').textContent()).toContain('Waiting for you to scan the QR code');
    expect(await page.locator('dl').textContent()).toContain('That you are at least 18 years old');
    await page.screenshot({ path: join(ARTIFACTS, 'scan-page-qr-ready.png'), fullPage: true });

    // the phone opens the button's link: the page's own deep link is the one that works
    await approveOnPhone(deepLink, 'SCANPAGE1');
    const agentId = await expectCompleted(page);
    await page.screenshot({ path: join(ARTIFACTS, 'scan-page-completed.png'), fullPage: true });

    // it followed the session's event stream, and the browser refused nothing on the page (its CSP allows all it does)
    expect(requests.some((path) => path.endsWith('/events'))).toBe(true);
    expect(problems).toEqual([]);

    // the link leads to the agent's info
    const info = await fetch(`${base}/api/agent/info/${TESTNET}/${agentId}`);
    expect(((await info.json()) as { agentId: number }).agentId).toBe(agentId);
    await page.close();
  }, 120_000);

  it('gets there by polling its state where there is no EventSource', async () => {
    const session = await openRegistration('2');
    const { page, problems, requests } = await newPage({ withoutEventSource: true });
    await page.goto(session.scanPageUrl);
    await page.locator('#qr').waitFor();
    await approveOnPhone(session.deepLink, 'SCANPAGE2');
    await expectCompleted(page);
    expect(requests.some((path) => path.endsWith('/events'))).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('says clearly that a link that is no watch token cannot be opened, and never takes the session token', async () => {
    const session = await openRegistration('3');
    const { page } = await newPage();
    for (const ref of ['not-a-token', session.sessionToken]) {
      const response = await page.goto(`${base}/register/${encodeURIComponent(ref)}`);
      expect(response?.status()).toBe(401);
      expect(await page.locator('h1').textContent()).toBe('This link cannot be opened');
      expect(await page.getByRole('alert').textContent()).toMatch(ref === 'not-a-token' ? /Invalid session token/ : /never the session token/);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'scan-page-refused.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
