// The scan page's style and script, inline and constant: the page's Content-Security-Policy allows exactly these
// two by their SHA-256 hashes (no 'unsafe-inline', no inline event handlers, nothing from another origin).
import { createHash } from 'node:crypto';

export const STYLE = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a525c; --line: #c9ced6; --accent: #0b4f8a; --ok: #14632f; --bad: #a3161b; }
* { box-sizing: border-box; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
main { max-width: 44rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.75rem; line-height: 1.2; margin: 0 0 .5rem; }
h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
section, .card { background: #fff; border: 1px solid var(--line); border-radius: .75rem; padding: 1.25rem; margin: 1rem 0; }
.lead { color: var(--muted); margin: 0; }
.scan { text-align: center; }
.scan img { display: block; width: min(35rem, 100%); height: auto; margin: 0 auto 1rem; image-rendering: pixelated; background: #fff; }
.button { display: inline-block; padding: .85rem 1.5rem; border-radius: .5rem; background: var(--accent); color: #fff; font-size: 1.15rem; font-weight: 600; text-decoration: none; }
.button:hover { background: #083b68; }
a:focus-visible { outline: 3px solid #f2a900; outline-offset: 3px; }
a { color: var(--accent); }
.hint { color: var(--muted); font-size: .95rem; margin: .75rem 0 0; }
dl { margin: 0; display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
dd ul { margin: 0; padding-left: 1.1rem; }
.steps { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; margin: 0 0 1rem; }
.steps li { border: 1px solid var(--line); border-radius: 999px; padding: .2rem .8rem; color: var(--muted); }
.steps li.done { border-color: var(--ok); color: var(--ok); }
.steps li[aria-current="step"] { border-color: var(--accent); color: #fff; background: var(--accent); }
#status { border-left: .35rem solid var(--accent); padding-left: .9rem; }
#headline { font-size: 1.2rem; font-weight: 600; margin: 0 0 .5rem; }
#instructions { margin: 0; padding-left: 1.2rem; }
body[data-stage="completed"] #status { border-color: var(--ok); }
body[data-stage="failed"] #status, body[data-stage="expired"] #status, .error #status { border-color: var(--bad); }
body[data-final="false"] #headline::after { content: ""; display: inline-block; width: .6rem; height: .6rem; margin-left: .5rem; border-radius: 50%; background: var(--accent); animation: pulse 1.4s ease-in-out infinite; }
@keyframes pulse { 0%, 100% { opacity: 1; } 50% { opacity: .2; } }
@media (prefers-reduced-motion: reduce) { *, *::after { animation: none !important; transition: none !important; } }
#result:empty { display: none; }
#result ul { margin: .5rem 0 0; padding-left: 1.2rem; }
.small { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
`;

/**
 * Follows the session: the page's events (server-sent, GET <page>/events), or, where a stream cannot be had, its JSON
 * state every few seconds (GET <page> with Accept: application/json). Text goes in with textContent only, and links
 * only to paths of this service.
 */
export const SCRIPT = `
(function () {
  'use strict';
  var body = document.body;
  if (body.getAttribute('data-final') !== 'false') return;
  var page = location.pathname.replace(/\\/+$/, '');
  var source = null;
  var timer = null;
  var byId = function (id) { return document.getElementById(id); };
  var ORDER = ['qr-ready', 'proof-received', 'completed'];

  function list(parent, items, make) {
    while (parent.firstChild) parent.removeChild(parent.firstChild);
    items.forEach(function (item) { parent.appendChild(make(item)); });
  }
  function item(text) { var li = document.createElement('li'); li.textContent = text; return li; }

  function render(state) {
    body.setAttribute('data-stage', state.stage);
    body.setAttribute('data-final', state.final ? 'true' : 'false');
    byId('headline').textContent = state.headline;
    list(byId('instructions'), state.instructions || [], item);
    var scan = byId('scan');
    if (scan && state.stage !== 'qr-ready') scan.hidden = true;
    var reached = ORDER.indexOf(state.stage);
    Array.prototype.forEach.call(document.querySelectorAll('.steps li'), function (li, index) {
      li.classList.toggle('done', reached >= 0 && index < reached || state.stage === 'completed');
      if (index === reached && state.stage !== 'completed') li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
    });
    var result = byId('result');
    var links = (state.links || []).filter(function (link) { return /^\\/[a-z]/.test(link.href); });
    list(result, links.length ? [links] : [], function (all) {
      var ul = document.createElement('ul');
      all.forEach(function (link) {
        var a = document.createElement('a');
        a.href = link.href;
        a.textContent = link.label;
        var li = document.createElement('li');
        li.appendChild(a);
        ul.appendChild(li);
      });
      return ul;
    });
    if (state.final) {
      byId('lead').textContent = 'This session has ended.';
      var expires = byId('expires');
      if (expires) expires.hidden = true;
      document.title = state.headline + ' | ' + document.title.split(' | ').pop();
      stop();
    }
  }

  function stop() {
    if (source) source.close();
    source = null;
    if (timer) clearTimeout(timer);
    timer = null;
  }

  function poll() {
    fetch(page, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' })
      .then(function (res) {
        return res.json().then(function (answer) {
          if (res.ok) {
            render(answer);
            if (!answer.final) timer = setTimeout(poll, 3000);
            return;
          }
          if (res.status >= 500) { timer = setTimeout(poll, 5000); return; }
          render({ stage: res.status === 410 ? 'expired' : 'failed', final: true, headline: answer.error, instructions: [], links: [] });
        });
      })
      .catch(function () { timer = setTimeout(poll, 5000); });
  }

  if (typeof EventSource === 'function') {
    source = new EventSource(page + '/events');
    source.addEventListener('state', function (event) { render(JSON.parse(event.data)); });
    // a stream that could not be had (a refusal, a proxy without streaming) is closed for good: poll instead;
    // a dropped one reconnects by itself
    source.addEventListener('error', function () {
      if (source && source.readyState === EventSource.CLOSED) { source = null; poll(); }
    });
  } else {
    poll();
  }
})();
`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The page's policy: nothing but its own style and script (by hash), the QR code inline, its event stream and state
 * from this origin; no base, no forms, no framing.
 */
export function contentSecurityPolicy(options: { script: boolean }): string {
  return [
    "default-src 'none'",
    `style-src ${sha256(STYLE)}`,
    ...(options.script ? [`script-src ${sha256(SCRIPT)}`, "connect-src 'self'"] : []),
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
