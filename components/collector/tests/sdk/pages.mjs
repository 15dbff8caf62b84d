// The pages make-fixtures.mjs and live.mjs serve the real SDKs on, with the work their
// profilers sample, and the SDKs' scripts.
import fs from 'node:fs';
import path from 'node:path';

// Work the profilers sample: two named functions, busy for `ms`.
export const work = `
function layoutPass(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i); return x; }
function paintPass(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sin(i); return x; }
function busy(ms) { const end = performance.now() + ms; let x = 0; while (performance.now() < end) { x += layoutPass(2e4) + paintPass(2e4); } return x; }
`;

// @datadog/browser-rum from its CDN bundle (/dd/), its `proxy` option set to `proxy`. With
// `views`, one page view of several: a slow button (the view's INP) and the upload left to
// the page's leaving.
export const datadogPage = ({ proxy, version, env, views = false }) => `<!doctype html><title>datadog</title>
<script src="/dd/datadog-rum.js"></script>
<script>${work}
DD_RUM.init({ applicationId: 'a1b2c3d4-0000-4000-8000-000000000001', clientToken: 'pub0123456789abcdef0123456789abcd',
  site: 'datadoghq.com', service: 'shop', env: '${env}', version: '${version}', proxy: '${proxy}',
  sessionSampleRate: 100, profilingSampleRate: 100, compressIntakeRequests: true, trackLongTasks: true });
// The profiler loads lazily; it keeps a profile shorter than 5 s only if it saw a long task.
${views
    ? `setTimeout(() => { busy(400); setTimeout(() => { busy(400); window.workDone = true; }, 200); }, 1500);
addEventListener('DOMContentLoaded', () => document.getElementById('slow').addEventListener('click', () => busy(200)));`
    : `setTimeout(() => { busy(400); setTimeout(() => { busy(400); window.dispatchEvent(new Event('beforeunload')); }, 200); }, 1500);`}
</script>${views ? '<button id="slow">slow</button>' : ''}`;

// @sentry/browser (sentry-entry.js bundled, /sentry.js), its DSN's host `origin`. With
// `tracing`, a page view of an app with tracing on: work during the page load (which the
// profiler covers), and a button whose click is slow (an INP candidate).
export const sentryPage = ({ origin, release, environment, tracing = false }) => `<!doctype html><title>sentry</title>
<script src="/sentry.js"></script>
<script>${work}
startSentry('${origin.replace('//', '//0123456789abcdef0123456789abcdef@')}/42', '${release}', '${environment}', ${tracing});
${tracing
    ? `setTimeout(() => { busy(400); window.workDone = true; }, 100);
addEventListener('DOMContentLoaded', () => document.getElementById('slow').addEventListener('click', () => busy(200)));`
    : 'setTimeout(() => { busy(600); stopSentry(); }, 300);'}
</script>${tracing ? '<button id="slow">slow</button>' : ''}`;

// Answers /sentry.js and /dd/* (from `ddBundle`), and 404 to any other path.
export function serveScripts(url, res, { sentryJs, ddBundle }) {
  if (url.pathname === '/sentry.js') {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(sentryJs);
    return;
  }
  const file = path.join(ddBundle, path.normalize(url.pathname.slice(4)));
  if (url.pathname.startsWith('/dd/') && file.startsWith(ddBundle) && fs.existsSync(file)) {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(fs.readFileSync(file));
    return;
  }
  res.writeHead(404);
  res.end();
}

// `server` listening on a free port of 127.0.0.1, and headless Chromium (/usr/bin/chromium
// or $CHROMIUM): its origin and the browser.
export async function serveAndLaunch(server, chromium) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  return { origin, browser };
}
