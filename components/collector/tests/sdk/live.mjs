// Real browsers against a running `jsprof-collector collect` (tests/live.rs drives this):
// headless Chromium (/usr/bin/chromium, through playwright-core) loads pages served here
// with `Document-Policy: js-profiling`, which send their traces to the collector.
//
//   node live.mjs COLLECTOR_ORIGIN field|sdks
//
// `field`: examples/field/jsprof-field.js on a shop's pages: a session sampled in (its first
// page navigated away from: beforeunload, keepalive; its second hidden: visibilitychange), a
// session sampled out, a page without the Document-Policy header, one without the API, and
// a trace too large for keepalive, trimmed; each profiled page has a long animation frame
// and a slow click. `sdks`: @datadog/browser-rum (its `proxy` option pointed at the
// collector; RUM with long tasks) and @sentry/browser (its DSN pointed at it; tracing on,
// the profiler in its `trace` lifecycle), three page views each (home, cart, checkout:
// work in a long task, a slow click, the page hidden, the next page), everything they
// send answered by the collector.
//
// Prints one JSON line once the pages have sent what they send, then waits for a line on
// stdin (the test has found the traces in the store) and prints a last JSON line with what
// the browser saw: the requests that reached the collector and their answers (and those
// that failed), page errors, and every console message that names the collector.
// The npm packages are those of package-lock.json here, installed by ./mach test into
// $JSPROF_COLLECTOR_SDK (default ~/.cache/jsprof/collector-sdk).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { datadogPage, sentryPage, serveAndLaunch, serveScripts, work } from './pages.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = process.env.JSPROF_COLLECTOR_SDK ?? path.join(os.homedir(), '.cache', 'jsprof', 'collector-sdk');
const require = createRequire(path.join(sdk, 'package.json'));
const { chromium } = require('playwright-core');
const esbuild = require('esbuild');

const [collector, scenario] = process.argv.slice(2);
if (!collector || !['field', 'sdks'].includes(scenario)) {
  console.error('usage: node live.mjs COLLECTOR_ORIGIN field|sdks');
  process.exit(2);
}
const snippet = fs.readFileSync(path.resolve(here, '..', '..', '..', '..', 'examples', 'field', 'jsprof-field.js'));

function fieldPage(name, rate, before = '') {
  return `<!doctype html><html><head><title>${name}</title>${before}
<script src="/jsprof-field.js" data-endpoint="${collector}/v1/profiles" data-key="field-key"
  data-release="shop@4.2.0" data-sample-rate="${rate}" data-labels='{"page":"${name}"}'></script>
</head><body><button id="slow">slow</button><script>${work}
setTimeout(() => { busy(500); window.workDone = true; }, 50);
document.getElementById('slow').addEventListener('click', () => busy(150));
</script></body></html>`;
}

const sentryJs = scenario === 'sdks'
  ? (await esbuild.build({ entryPoints: [path.join(here, 'sentry-entry.js')], bundle: true, write: false, format: 'iife',
      nodePaths: [path.join(sdk, 'node_modules')] })).outputFiles[0].text
  : '';
const ddBundle = path.join(sdk, 'node_modules', '@datadog', 'browser-rum', 'bundle');

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const html = (body, policy = true) => {
    res.writeHead(200, { 'content-type': 'text/html', ...(policy ? { 'document-policy': 'js-profiling' } : {}) });
    res.end(body);
  };
  const rate = url.searchParams.get('rate') ?? '1';
  if (url.pathname === '/jsprof-field.js') {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(snippet);
  } else if (url.pathname === '/shop.html' || url.pathname === '/checkout.html') {
    html(fieldPage(url.pathname.slice(1, -5), rate));
  } else if (url.pathname === '/nopolicy.html') {
    html(fieldPage('nopolicy', 1), false);
  } else if (url.pathname === '/noapi.html') {
    // A browser without the API.
    html(fieldPage('noapi', 1, '<script>delete window.Profiler;</script>'));
  } else if (url.pathname === '/bye.html') {
    html('<!doctype html><title>bye</title>');
  } else if (url.pathname === '/favicon.ico') {
    res.writeHead(204);
    res.end();
  } else if (/^\/datadog\/\w+\.html$/.test(url.pathname)) {
    html(datadogPage({ proxy: `${collector}/dd-proxy`, version: '5.0.1', env: 'live', views: true }));
  } else if (/^\/sentry\/\w+\.html$/.test(url.pathname)) {
    html(sentryPage({ origin: collector, release: 'shop@5.0.1', environment: 'live', tracing: true }));
  } else {
    serveScripts(url, res, { sentryJs, ddBundle });
  }
});
const { origin, browser } = await serveAndLaunch(server, chromium);

const seen = {};
const pageErrors = [];
// Console messages that name the collector, in their text or as where they come from (a
// failed request's message is located at its URL): a CORS refusal, an answer >= 400.
const console_ = [];
// What a request to the collector carried: a Sentry envelope's item types, a Datadog
// intake's track (`ddforward`'s path).
function carried(r) {
  const url = new URL(r.url());
  const fwd = url.searchParams.get('ddforward');
  if (fwd) return fwd.split('?')[0];
  if (url.pathname.endsWith('/envelope/')) {
    const body = r.postData() || '';
    return body.split('\n').slice(1).map((l) => { try { return JSON.parse(l).type; } catch { return undefined; } })
      .filter((t) => typeof t === 'string').join(',');
  }
  return url.pathname;
}
async function context(name) {
  const ctx = await browser.newContext();
  seen[name] = [];
  // Each answer to its own request (Sentry's envelopes all go to one URL): playwright gives
  // the same Request object to the request, its response and its failure.
  const entries = new Map();
  ctx.on('request', (r) => {
    if (!r.url().startsWith(collector)) return;
    const entry = { url: r.url(), method: r.method(), carried: carried(r) };
    entries.set(r, entry);
    seen[name].push(entry);
  });
  ctx.on('response', (r) => {
    const entry = entries.get(r.request());
    if (entry) entry.status = r.status();
  });
  ctx.on('requestfailed', (r) => {
    const entry = entries.get(r);
    if (entry) entry.failed = r.failure()?.errorText ?? 'failed';
  });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
  page.on('console', (m) => {
    const where = m.location()?.url ?? '';
    if (m.text().includes(collector) || where.startsWith(collector)) {
      console_.push({ context: name, type: m.type(), text: m.text(), url: where });
    }
  });
  return page;
}
// Waits until `name`'s requests answered that carried `what` number `n` (or 60 s pass).
async function answered(name, what, n) {
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (seen[name].filter((e) => e.status !== undefined && e.carried.includes(what)).length >= n) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
const state = (page) => page.evaluate(() => {
  const s = window.jsprofField;
  return s && { status: s.status, session: s.session, sampled: s.sampled, sent: s.sent };
});
async function visit(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.workDone === true, null, { timeout: 60000 });
  return state(page);
}
// A click whose handler is slow (an interaction Event Timing reports), and time for the
// browser to paint after it (the entry comes then).
async function slowClick(page) {
  await page.click('#slow');
  await page.waitForTimeout(300);
}
// Headless pages are never hidden: the page is told it is, as a switch of tabs would.
async function hide(page) {
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    Object.defineProperty(document, 'hidden', { value: true, configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

const result = { scenario };
try {
  if (scenario === 'field') {
    // Sampled out first: whatever it would send is sent before the sampled-in session starts.
    const out = await context('sampledOut');
    result.sampledOut = [await visit(out, `${origin}/shop.html?rate=0`)];
    result.sampledOut.push(await visit(out, `${origin}/checkout.html?rate=0`));
    await hide(out);
    await out.goto(`${origin}/bye.html`);

    const none = await context('noPolicy');
    result.noPolicy = await visit(none, `${origin}/nopolicy.html`);
    result.noApi = await visit(none, `${origin}/noapi.html`);
    await none.goto(`${origin}/bye.html`);

    const inn = await context('sampledIn');
    result.sampledIn = [await visit(inn, `${origin}/shop.html?rate=1`)];
    await slowClick(inn);
    // Navigating away: beforeunload, a keepalive fetch from a document on its way out.
    result.sampledIn.push(await visit(inn, `${origin}/checkout.html?rate=1`));
    await slowClick(inn);
    // Hidden: visibilitychange; the page lives on, so the answer can be waited for.
    await hide(inn);
    await inn.waitForFunction(() => ['sent', 'not sent'].includes(window.jsprofField.status), null, { timeout: 60000 });
    result.sampledIn.push(await state(inn));

    // A trace too large for keepalive (40,000 samples over 4,000 functions whose names gzip
    // cannot shorten), trimmed as at unload, then sent as the snippet would send it.
    result.trimmed = await inn.evaluate(async (endpoint) => {
      const rnd = () => Math.random().toString(36).slice(2);
      const frames = [], stacks = [], samples = [];
      for (let i = 0; i < 4000; i++) {
        frames.push({ name: `f_${rnd()}${rnd()}`, resourceId: 0, line: i + 1, column: 10 });
        stacks.push(i === 0 ? { frameId: 0 } : { frameId: i, parentId: Math.floor(Math.random() * i) });
      }
      for (let i = 0; i < 40000; i++) samples.push({ timestamp: 10 + i * 10, stackId: Math.floor(Math.random() * 4000) });
      const trace = { frames, resources: [`${location.origin}/big.js`], stacks, samples };
      const whole = await window.jsprofField.encode(trace, false);
      const cut = await window.jsprofField.encode(trace, true);
      const r = await fetch(endpoint, { method: 'POST', body: cut.body, keepalive: true });
      return { wholeBytes: whole.body.length, bytes: cut.body.length, kept: cut.kept, status: r.status };
    }, `${collector}/v1/profiles?key=field-key`);
    await inn.goto(`${origin}/bye.html`);
  } else {
    // Three page views a session: the work (a long task), a slow click, the page hidden (the
    // SDKs send what they hold: Datadog its profile, both their vitals), then the next.
    const views = ['home', 'cart', 'checkout'];
    const dd = await context('datadog');
    result.datadog = [];
    for (const [i, v] of views.entries()) {
      await visit(dd, `${origin}/datadog/${v}.html`);
      await slowClick(dd);
      await hide(dd);
      result.datadog.push(await answered('datadog', '/api/v2/profile', i + 1));
    }
    await dd.goto(`${origin}/bye.html`);
    result.datadog.push(await answered('datadog', '/api/v2/rum', 3));
    const sentry = await context('sentry');
    result.sentry = [];
    for (const [i, v] of views.entries()) {
      await visit(sentry, `${origin}/sentry/${v}.html`);
      await slowClick(sentry);
      // The page load ends when the page is idle: its profile chunk and spans go then.
      result.sentry.push(await answered('sentry', 'profile_chunk', i + 1) && await answered('sentry', 'span', i + 1));
      await hide(sentry);
    }
    await sentry.goto(`${origin}/bye.html`);
  }
  console.log(JSON.stringify({ event: 'sent', ...result }));
  // The test looks for the traces in the store, then says so.
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((r) => { rl.once('line', r); rl.once('close', r); });
  // Whatever a page still sends as it goes.
  await new Promise((r) => setTimeout(r, 1000));
  console.log(JSON.stringify({ event: 'done', origin, collector, seen, pageErrors, console: console_ }));
} finally {
  await browser.close();
  server.close();
}
