// Records what the real browser SDKs upload, for the collector's decoder tests and fuzz
// seeds: @datadog/browser-rum 7.16.2 (its CDN bundle, `proxy` pointed here) and
// @sentry/browser 11.12.0 (bundled with esbuild, DSN pointed here), each on a page served
// with `Document-Policy: js-profiling` in headless Chromium (/usr/bin/chromium, driven by
// playwright-core). Each upload is written as it arrived: the body byte for byte, and
// `.request.json` with its method, URL and headers. Besides the profiles: Sentry's session
// envelope and its first span envelope with tracing on (sentry-tracing.html), Datadog's
// first RUM batch holding a view and its profiling quota check.
//
//   cd components/collector/tests/sdk && npm ci && node make-fixtures.mjs ../fixtures
import http from 'node:http';
import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { datadogPage, sentryPage, serveAndLaunch, serveScripts } from './pages.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(here, '..', 'fixtures'));
fs.mkdirSync(out, { recursive: true });
const ddBundle = path.join(here, 'node_modules', '@datadog', 'browser-rum', 'bundle');
const sentryJs = (
  await esbuild.build({ entryPoints: [path.join(here, 'sentry-entry.js')], bundle: true, write: false, format: 'iife', minify: false })
).outputFiles[0].text;

const pages = {
  '/datadog.html': (origin) => datadogPage({ proxy: `${origin}/dd-proxy`, version: '3.1.4', env: 'fixtures' }),
  '/sentry.html': (origin) => sentryPage({ origin, release: 'shop@3.1.4', environment: 'fixtures' }),
  '/sentry-tracing.html': (origin) => sentryPage({ origin, release: 'shop@3.1.4', environment: 'fixtures', tracing: true }),
};
const WANTED = [
  'datadog-browser-rum-7.16.2',
  'datadog-browser-rum-7.16.2-rum',
  'datadog-browser-rum-7.16.2-view',
  'datadog-browser-rum-7.16.2-quota',
  'sentry-browser-11.12.0',
  'sentry-browser-11.12.0-session',
  'sentry-browser-11.12.0-spans',
];
// Which fixture a request is, if it is one.
function fixtureOf(req, url, body) {
  const fwd = url.searchParams.get('ddforward') ?? '';
  if (req.method === 'GET') return fwd.startsWith('/api/v2/profiling/quota') ? 'datadog-browser-rum-7.16.2-quota' : null;
  if (fwd.startsWith('/api/v2/profile')) return 'datadog-browser-rum-7.16.2';
  if (fwd.startsWith('/api/v2/rum')) {
    // The first deflated batch, and the first that holds a view (the SDK sends those as
    // text when the page is leaving).
    const deflated = fwd.includes('dd-evp-encoding=deflate');
    const text = deflated ? zlib.inflateSync(body).toString() : body.toString();
    if (deflated && !captured['datadog-browser-rum-7.16.2-rum']) return 'datadog-browser-rum-7.16.2-rum';
    return text.includes('"type":"view"') ? 'datadog-browser-rum-7.16.2-view' : null;
  }
  if (url.pathname !== '/api/42/envelope/') return null;
  const items = body.toString().split('\n').slice(1).map((l) => { try { return JSON.parse(l).type; } catch { return undefined; } });
  if (items.includes('profile_chunk')) {
    // The manual profiler's chunk (sentry.html), not the tracing page's.
    return req.headers.referer?.endsWith('/sentry-tracing.html') ? null : 'sentry-browser-11.12.0';
  }
  if (items.includes('session')) return 'sentry-browser-11.12.0-session';
  if (items.includes('span') && body.includes('"sentry.profiler_id"')) return 'sentry-browser-11.12.0-spans';
  return null;
}

const captured = {};
let resolveDone;
const done = new Promise((r) => (resolveDone = r));
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const name = fixtureOf(req, url, body);
    if (name && !captured[name]) {
      captured[name] = true;
      fs.writeFileSync(path.join(out, `${name}.body`), body);
      fs.writeFileSync(path.join(out, `${name}.request.json`), JSON.stringify({ method: req.method, url: req.url, headers: req.headers }, null, 2) + '\n');
      console.log(`recorded ${name}: ${body.length} bytes`);
      if (WANTED.every((w) => captured[w])) resolveDone();
    }
    if (req.method === 'POST') {
      res.writeHead(202, { 'access-control-allow-origin': '*' });
      res.end();
      return;
    }
    if (url.searchParams.get('ddforwardSubdomain') === 'quota') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":{"id":"fixtures","type":"profiling-quota","attributes":{"admitted":true,"reason":"quota_ok"}}}');
      return;
    }
    const origin = `http://${req.headers.host}`;
    if (pages[url.pathname]) {
      res.writeHead(200, { 'content-type': 'text/html', 'document-policy': 'js-profiling' });
      res.end(pages[url.pathname](origin));
    } else {
      serveScripts(url, res, { sentryJs, ddBundle });
    }
  });
});
const { origin, browser } = await serveAndLaunch(server, chromium);
try {
  for (const p of Object.keys(pages)) {
    const page = await browser.newPage();
    page.on('console', (m) => console.log(`${p}: ${m.text()}`));
    await page.goto(origin + p);
  }
  // Datadog's views go when its page goes: the pages leave once the rest is recorded.
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline && !WANTED.every((w) => captured[w] || w.endsWith('-view'))) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const page of browser.contexts().flatMap((c) => c.pages())) await page.goto('about:blank');
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; recorded: ${Object.keys(captured)}`)), 90000));
  await Promise.race([done, timeout]);
} finally {
  await browser.close();
  server.close();
}
