// Shared by the readers' scripts: packages from the export-tools directory run.py installs
// (JSPROF_EXPORT_TOOLS), and Debian's Chromium started the way this machine needs it.
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const TOOLS = process.env.JSPROF_EXPORT_TOOLS || path.join(os.homedir(), ".cache/jsprof/export-tools");

// The packages live under TOOLS/node_modules, not beside these scripts.
export const need = createRequire(path.join(TOOLS, "package.json"));

// The longest any wait for the page may take (ms).
export const WAIT_MS = 120000;

// Headless Chromium in a fresh, empty profile directory (removed by close()). Without the
// background-networking flags Chromium keeps dialing out of this machine's closed network.
export async function launch({ width = 1280, height = 800 } = {}) {
  const { chromium } = need("playwright-core");
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "jsprof-export-readers-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width, height },
    deviceScaleFactor: 1,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  // Every wait is on a state (a locator, a load), bounded generously: a loaded machine is
  // slow, and a wait that runs out is a failure, not a retry.
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(WAIT_MS);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

// Records what a page did that a check may hold against it.
export function watch(page) {
  const seen = { pageErrors: [], consoleErrors: [], dialogs: [], requests: [], failedRequests: [], console: [] };
  page.on("pageerror", (e) => seen.pageErrors.push(String(e && e.message || e)));
  page.on("console", (m) => {
    seen.console.push(`${m.type()}: ${m.text()}`);
    if (m.type() === "error") seen.consoleErrors.push(m.text());
  });
  page.on("request", (r) => seen.requests.push(r.url()));
  page.on("requestfailed", (r) => seen.failedRequests.push(`${r.url()} (${r.failure() && r.failure().errorText})`));
  return seen;
}
