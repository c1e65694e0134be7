// The scan page as HTML, rendered on the server from the session's state; and the same page's look for a refusal.
// Every value that reaches the markup goes through escapeHtml, whatever its source.
import QRCode from 'qrcode';
import type { RequestedDisclosures } from '../../core/disclosures.js';
import type { WatchedSession } from '../../sessions/scan-page.js';
import type { ScanPageState } from '../schemas/scan-page.js';
import { SCRIPT, STYLE } from './assets.js';
import { disclosureWords, KIND_WORDS, modeWords, networkWords } from './state.js';

const SERVICE = 'Agent Identity Registry';

export const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The lead once the session is over (the script writes the same when it sees the end). */
const ENDED = 'This session has ended.';

const STEP_NAMES = ['Scan the QR code', 'Proof received'];

/** CSS pixels of the QR code on a wide screen (a phone's camera reads a long deep link's code from a laptop at this size). */
const QR_SIZE = 560;

/**
 * The QR code of a deep link as an SVG data: URI: sharp at any size, where a 400-pixel PNG of a 1,000-character link
 * gave modules of 3.4 blurred pixels. Low error correction keeps the modules fewer and larger: a screen is not a
 * scratched sticker.
 */
export async function qrImage(deepLink: string): Promise<string> {
  const svg = await QRCode.toString(deepLink, { type: 'svg', errorCorrectionLevel: 'L', margin: 4, width: QR_SIZE });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

function layout(title: string, body: string, attributes: string, script: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} | ${SERVICE}</title>
<style>${STYLE}</style>
</head>
<body ${attributes}>
<main>
${body}
</main>
${script ? `<script>${SCRIPT}</script>` : ''}
</body>
</html>
`;
}

const list = (items: string[]): string => items.map((item) => `<li>${escapeHtml(item)}</li>`).join('');

function details(session: WatchedSession): string {
  const { status } = session;
  const rows: [string, string][] = [['Network', escapeHtml(networkWords(session.network))]];
  if ('mode' in status) rows.push(['Mode', escapeHtml(modeWords(status.mode))]);
  if ('agentId' in status && typeof status.agentId === 'number' && session.kind !== 'register') rows.push(['Agent', `Agent ID ${status.agentId}`]);
  if ('agentAddress' in status) rows.push(['Agent address', `<code>${escapeHtml(status.agentAddress)}</code>`]);
  rows.push(['You are asked to share', disclosures(session.disclosures)]);
  return rows.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('\n');
}

function disclosures(d: RequestedDisclosures): string {
  const words = disclosureWords(d);
  const proof = 'That you are a real person with a valid passport or ID card, without revealing who';
  return `<ul>${list([proof, ...words])}</ul>${words.length === 0 ? '<p class="small">No personal details are requested.</p>' : ''}`;
}

function links(state: ScanPageState): string {
  if (state.links.length === 0) return '';
  return `<ul>${state.links.map((link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></li>`).join('')}</ul>`;
}

function steps(state: ScanPageState, done: string): string {
  const names = [...STEP_NAMES, done];
  const order = ['qr-ready', 'proof-received', 'completed'];
  const reached = order.indexOf(state.stage);
  return names
    .map((name, index) => {
      const finished = state.stage === 'completed' || (reached >= 0 && index < reached);
      const current = index === reached && state.stage !== 'completed';
      return `<li${finished ? ' class="done"' : ''}${current ? ' aria-current="step"' : ''}>${escapeHtml(name)}</li>`;
    })
    .join('');
}

/**
 * The page of a session in `state` (as it is now); while the session is open (`live`) its script follows it from
 * there. `qrImage` is the QR code's image as a data: URI.
 */
export function scanPageHtml(session: WatchedSession, state: ScanPageState, qrImage?: string): { html: string; live: boolean } {
  const words = KIND_WORDS[session.kind];
  const scan =
    session.qr && qrImage
      ? `<section id="scan" class="scan" aria-labelledby="scan-heading">
<h2 id="scan-heading">Scan with your phone</h2>
<img id="qr" src="${escapeHtml(qrImage)}" width="${QR_SIZE}" height="${QR_SIZE}" alt="QR code for the identity app: scan it with your phone's camera or the identity app">
<p><a id="deep-link" class="button" href="${escapeHtml(session.qr.deepLink)}">Open in the identity app</a></p>
<p class="hint">Opened this page on your phone? Use the button instead of scanning.</p>
</section>`
      : '';
  const title = state.final ? state.headline : words.title;
  const body = `<header>
<h1>${escapeHtml(words.title)}</h1>
<p id="lead" class="lead">${escapeHtml(state.final ? ENDED : 'Scan the QR code with the identity app on your phone. This page follows the session and updates by itself.')}</p>
</header>
${scan}
<section aria-labelledby="progress-heading">
<h2 id="progress-heading">Progress</h2>
<ol class="steps" aria-label="Steps">${steps(state, words.done)}</ol>
<div id="status" role="status" aria-live="polite" aria-atomic="true">
<p id="headline">${escapeHtml(state.headline)}</p>
<ul id="instructions">${list(state.instructions)}</ul>
</div>
<div id="result">${links(state)}</div>
${state.expiresAt && !state.final ? `<p id="expires" class="small">The session expires at <time datetime="${escapeHtml(state.expiresAt)}">${escapeHtml(state.expiresAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>.</p>` : ''}
</section>
<section aria-labelledby="details-heading">
<h2 id="details-heading">What this session asks</h2>
<dl>
${details(session)}
</dl>
</section>`;
  const attributes = `data-kind="${escapeHtml(session.kind)}" data-stage="${escapeHtml(state.stage)}" data-final="${state.final ? 'true' : 'false'}"`;
  return { html: layout(title, body, attributes, !state.final), live: !state.final };
}

/** A refusal as a page: the same message and status as the JSON answer, for a human who opened the link. */
export function errorPageHtml(status: number, message: string): string {
  const heading =
    status === 410
      ? 'This session expired'
      : status === 401 || status === 400
        ? 'This link cannot be opened'
        : 'This page is not available right now';
  const advice =
    status === 410
      ? 'Sessions last 30 minutes. Ask for a new session (a new link) and scan its QR code.'
      : status === 401 || status === 400
        ? 'Check that you opened the whole link of the scan page (scanPageUrl). A session token is never accepted here.'
        : 'Try again in a little while.';
  const body = `<h1>${escapeHtml(heading)}</h1>
<div id="status" class="card" role="alert">
<p id="headline">${escapeHtml(message)}</p>
<p>${escapeHtml(advice)}</p>
</div>`;
  return layout(heading, body, `class="error" data-stage="error" data-final="true" data-status="${status}"`, false);
}
