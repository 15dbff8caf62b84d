// Drives headless Chromium (Debian's /usr/bin/chromium, through playwright-core) on the
// page at / of `jsprof collect`, for tests/regressions.rs:
//
//   node regressions.mjs URL
//
// loads URL, waits until the Regressions section shows its findings and its pair's two
// flame graphs, and prints {"pair", "status", "rows", "base", "head", "errors", "outside"}
// as JSON: the pair shown, the section's note, the table's rows, and the titles of each
// flame graph's frames. playwright-core comes from JSPROF_PAGE_TOOLS.
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const TOOLS = process.env.JSPROF_PAGE_TOOLS || path.join(os.homedir(), ".cache/jsprof/collector-page-tools");
const need = createRequire(path.join(TOOLS, "package.json"));
const { chromium } = need("playwright-core");
const [url] = process.argv.slice(2);
// Every wait is on a state, bounded generously for a loaded machine.
const WAIT_MS = 120000;

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "jsprof-collector-regressions-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
context.setDefaultTimeout(WAIT_MS);
const errors = [];
const outside = [];
try {
  const page = await context.newPage();
  page.on("pageerror", (e) => errors.push(String(e && e.message || e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("request", (r) => { if (!r.url().startsWith(new URL(url).origin)) outside.push(r.url()); });
  await page.goto(url);
  await page.waitForSelector('#regressions[data-state="ready"]');
  const pair = await page.getAttribute("#regressions", "data-pair");
  const status = await page.textContent("#regressions-status");
  const rows = await page.$$eval("#regressions-table tbody tr", (rs) => rs.map((r) => ({
    function: r.getAttribute("data-function"),
    measure: r.getAttribute("data-measure"),
    pair: r.getAttribute("data-pair"),
    cells: Array.from(r.cells).map((c) => c.textContent),
  })));
  async function titles(id) {
    const src = await page.getAttribute(`#${id}`, "src");
    const frame = page.frames().find((f) => f.url().endsWith(src));
    return { src, titles: frame ? await frame.$$eval("g > title", (ts) => ts.map((t) => t.textContent)) : null };
  }
  const base = await titles("flame-base");
  const head = await titles("flame-head");
  console.log(JSON.stringify({ pair, status, rows, base, head, errors, outside }));
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
