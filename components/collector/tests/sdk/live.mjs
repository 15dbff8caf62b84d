// Real browsers against a running `jsprof-collector collect` (tests/live.rs drives this):
// headless Chromium (/usr/bin/chromium, through playwright-core) loads pages served here
// with `Document-Policy: js-profiling`, which send their traces to the collector.
//
//   node live.mjs COLLECTOR_ORIGIN field|sdks
//
// `field`: examples/field/jsprof-field.js on a shop's pages: a session sampled in (its first
// page navigated away from: beforeunload, keepalive; its second hidden: visibilitychange), a
// session sampled out, a page without the Document-Policy header, one without the API, and
// a trace too large for keepalive, trimmed. `sdks`: @datadog/browser-rum (its `proxy`
// option pointed at the collector) and @sentry/browser (its DSN pointed at it), as
// make-fixtures.mjs runs them.
//
// Prints one JSON line once the pages have sent what they send, then waits for a line on
// stdin (the test has found the traces in the store) and prints a last JSON line with what
// the browser saw: the requests that reached the collector and their answers, page errors.
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
</head><body><script>${work}
setTimeout(() => { busy(500); window.workDone = true; }, 50);
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
  } else if (url.pathname === '/datadog.html') {
    html(datadogPage({ proxy: `${collector}/dd-proxy`, version: '5.0.1', env: 'live' }));
  } else if (url.pathname === '/sentry.html') {
    html(sentryPage({ origin: collector, release: 'shop@5.0.1', environment: 'live' }));
  } else {
    serveScripts(url, res, { sentryJs, ddBundle });
  }
});
const { origin, browser } = await serveAndLaunch(server, chromium);

const seen = {};
const pageErrors = [];
async function context(name) {
  const ctx = await browser.newContext();
  seen[name] = [];
  ctx.on('request', (r) => { if (r.url().startsWith(collector)) seen[name].push({ url: r.url(), method: r.method() }); });
  ctx.on('response', (r) => {
    if (!r.url().startsWith(collector)) return;
    const entry = seen[name].find((e) => e.url === r.url() && e.status === undefined);
    if (entry) entry.status = r.status();
  });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
  return page;
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
    // Navigating away: beforeunload, a keepalive fetch from a document on its way out.
    result.sampledIn.push(await visit(inn, `${origin}/checkout.html?rate=1`));
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
    const dd = await context('datadog');
    await dd.goto(`${origin}/datadog.html`);
    const sentry = await context('sentry');
    await sentry.goto(`${origin}/sentry.html`);
  }
  console.log(JSON.stringify({ event: 'sent', ...result }));
  // The test looks for the traces in the store, then says so.
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((r) => { rl.once('line', r); rl.once('close', r); });
  console.log(JSON.stringify({ event: 'done', origin, seen, pageErrors }));
} finally {
  await browser.close();
  server.close();
}
