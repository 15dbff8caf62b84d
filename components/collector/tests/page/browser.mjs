// Headless Chromium (Debian's /usr/bin/chromium, through playwright-core) on the page at /
// of `jsprof collect`, for page.mjs and investigate.mjs: `withPage(url, use)` opens a page
// that records the page's errors and every request that leaves `url`'s origin, runs
// `use(page)`, and prints `{...what use returned, errors, outside}` as JSON. playwright-core
// comes from JSPROF_PAGE_TOOLS (./mach test npm-installs it into
// ~/.cache/jsprof/collector-page-tools).
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const TOOLS = process.env.JSPROF_PAGE_TOOLS || path.join(os.homedir(), ".cache/jsprof/collector-page-tools");
const need = createRequire(path.join(TOOLS, "package.json"));
const { chromium } = need("playwright-core");
// Every wait is on a state, bounded generously for a loaded machine.
const WAIT_MS = 120000;

export async function withPage(url, use) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "jsprof-collector-page-"));
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
    const read = await use(page);
    console.log(JSON.stringify({ ...read, errors, outside }));
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}
