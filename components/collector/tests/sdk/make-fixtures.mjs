// Records what the real browser SDKs upload, for the collector's decoder tests and fuzz
// seeds: @datadog/browser-rum 7.16.2 (its CDN bundle, `proxy` pointed here) and
// @sentry/browser 11.12.0 (bundled with esbuild, DSN pointed here), each on a page served
// with `Document-Policy: js-profiling` in headless Chromium (/usr/bin/chromium, driven by
// playwright-core). Each upload is written as it arrived: the body byte for byte, and
// `.request.json` with its method, URL and headers.
//
//   cd components/collector/tests/sdk && npm ci && node make-fixtures.mjs ../fixtures
import http from 'node:http';
import fs from 'node:fs';
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
};

const captured = {};
let resolveDone;
const done = new Promise((r) => (resolveDone = r));
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const fwd = url.searchParams.get('ddforward') ?? '';
      const name = fwd.startsWith('/api/v2/profile') ? 'datadog-browser-rum-7.16.2'
        : url.pathname === '/api/42/envelope/' && body.includes('"profile_chunk"') ? 'sentry-browser-11.12.0'
        : null;
      if (name && !captured[name]) {
        captured[name] = true;
        fs.writeFileSync(path.join(out, `${name}.body`), body);
        fs.writeFileSync(path.join(out, `${name}.request.json`), JSON.stringify({ method: req.method, url: req.url, headers: req.headers }, null, 2) + '\n');
        console.log(`recorded ${name}: ${body.length} bytes`);
        if (Object.keys(captured).length === 2) resolveDone();
      }
      res.writeHead(202, { 'access-control-allow-origin': '*' });
      res.end();
    });
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
const { origin, browser } = await serveAndLaunch(server, chromium);
try {
  for (const p of Object.keys(pages)) {
    const page = await browser.newPage();
    page.on('console', (m) => console.log(`${p}: ${m.text()}`));
    await page.goto(origin + p);
  }
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; recorded: ${Object.keys(captured)}`)), 60000));
  await Promise.race([done, timeout]);
} finally {
  await browser.close();
  server.close();
}
