// The WebdriverIO smoke test of jsprof's WebDriver server (run by run.py): a session over
// classic WebDriver, a profiling page, Execute Script, Force Sample, and the session's end.
// Prints `ok NAME` or `FAIL NAME: why` per check; exits 1 if any failed.
//
// Environment: JSPROF_WEBDRIVER_PORT (the server), JSPROF_PAGES (pages/ over HTTP),
// JSPROF_WEBDRIVER_TOOLS (where run.py installed webdriverio).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const TOOLS = process.env.JSPROF_WEBDRIVER_TOOLS || path.join(os.homedir(), ".cache/jsprof/webdriver-tools");
const port = Number(process.env.JSPROF_WEBDRIVER_PORT);
const pages = process.env.JSPROF_PAGES;

// webdriverio lives under TOOLS/node_modules, not beside this script: import its ESM entry.
const pkgDir = path.join(TOOLS, "node_modules", "webdriverio");
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
const { remote } = await import(pathToFileURL(path.join(pkgDir, pkg.exports["."].import)).href);

let failed = 0;
async function check(name, fn) {
  try {
    const problem = await fn();
    if (problem) {
      failed++;
      console.log(`FAIL ${name}: ${problem}`);
    } else {
      console.log(`ok ${name}`);
    }
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${String(e && e.message || e).split("\n")[0]}`);
  }
}
const differs = (got, want) => (JSON.stringify(got) === JSON.stringify(want) ? null
  : `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);

let browser = null;
await check("new-session", async () => {
  browser = await remote({
    hostname: "127.0.0.1",
    port,
    path: "/",
    // Classic WebDriver only: without this WebdriverIO 9 asks for webSocketUrl (BiDi).
    // hostname and port name a running server: WebdriverIO fetches and starts no driver.
    capabilities: { browserName: "jsprof", "wdio:enforceWebDriverClassic": true },
    logLevel: "warn",
    connectionRetryCount: 0,
  });
  if (browser.capabilities.webSocketUrl) return `a BiDi session: ${browser.capabilities.webSocketUrl}`;
  return differs(browser.capabilities.browserName, "jsprof");
});
if (!browser) process.exit(1);

// Force Sample has no WebdriverIO command: a raw POST, as a command of the browser object.
browser.addCommand("forceSample", async function () {
  const r = await fetch(`http://127.0.0.1:${port}/session/${this.sessionId}/forcesample`, {
    method: "POST",
    headers: { "Content-Type": "application/json; charset=utf-8" },
    body: "{}",
  });
  const answer = await r.json();
  if (r.status !== 200) throw new Error(`forcesample: HTTP ${r.status} ${JSON.stringify(answer)}`);
  return answer.value;
});

await check("navigate", async () => {
  await browser.url(`${pages}/forcesample.html`);
  return differs([await browser.getTitle(), await browser.getUrl()],
    ["jsprof WebDriver: force sample", `${pages}/forcesample.html`]);
});
await check("execute", async () => {
  const got = await browser.execute((a, b) => [a + b, document.title, typeof Profiler], 40, 2);
  return differs(got, [42, "jsprof WebDriver: force sample", "function"]);
});
await check("find-element", async () => {
  const body = await browser.$("body");
  return differs(await body.getTagName(), "body");
});
// 1e9 ms (about 11.6 days): a timed sample comes during a test of W seconds with probability
// about W / 1e6, so the trace holds the forced sample only (as FORCE_ONLY_INTERVAL in
// test_selenium.py).
const FORCE_ONLY_INTERVAL = 1e9;
await check("force-sample", async () => {
  await browser.execute((interval) => startProfiler(interval, 100), FORCE_ONLY_INTERVAL);
  const value = await browser.forceSample();
  if (value !== null) return `forcesample answered ${JSON.stringify(value)}, want null`;
  const trace = await browser.execute(() => profiler.stop());
  return differs(trace.samples.length, 1);
});
await check("delete-session", async () => {
  await browser.deleteSession();
  const r = await fetch(`http://127.0.0.1:${port}/status`);
  const status = await r.json();
  return differs(status.value.ready, true);
});
process.exit(failed ? 1 : 0);
