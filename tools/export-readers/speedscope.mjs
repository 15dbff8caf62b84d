// Opens each export in speedscope's own built app (its npm package) as a person would: the
// app's page with `#profileURL=<export>`, then the Sandwich tab, and prints, as JSON, what the
// page shows: the importer it chose (its console line), the title in its toolbar, the rows of
// the sandwich table (one per function), and any error.
//   node speedscope.mjs APP_URL EXPORT_URL... [--shots DIR]
import path from "node:path";
import { WAIT_MS, launch, watch } from "./lib.mjs";

const args = process.argv.slice(2);
let shots = null;
const i = args.indexOf("--shots");
if (i >= 0) shots = args.splice(i, 2)[1];
const [app, ...exports] = args;

// The sandwich table lists every function only while it fits the viewport (rows are
// virtualized), so the window is tall; `scrolls` tells when it did not fit.
const browser = await launch({ width: 1280, height: 2400 });
const results = [];
try {
  for (const url of exports) {
    const page = await browser.context.newPage();
    const seen = watch(page);
    page.on("dialog", (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    const result = { url, ...seen };
    try {
      await page.goto(`${app}#profileURL=${encodeURIComponent(url)}`);
      // The tabs appear once a profile is imported; an import that fails alerts (even before
      // goto returns) or shows "Something went wrong" instead.
      const sandwich = page.locator("div", { hasText: /^\S*\s*Sandwich$/ });
      const failed = page.getByText("Something went wrong");
      for (let waited = 0; ; waited += 100) {
        if (await sandwich.count() > 0) break;
        if (seen.dialogs.length > 0) throw new Error(`speedscope alerted: ${seen.dialogs.join(" / ")}`);
        if (await failed.count() > 0) throw new Error("speedscope says: Something went wrong");
        if (waited >= WAIT_MS) throw new Error(`no profile shown after ${WAIT_MS / 1000} s`);
        await page.waitForTimeout(100);
      }
      await sandwich.last().click();
      await page.locator("table tr td").first().waitFor({ timeout: WAIT_MS });
      Object.assign(result, await page.evaluate(() => {
        const tab = [...document.querySelectorAll("div")].find((d) => /Sandwich$/.test(d.textContent) && d.children.length === 1);
        const toolbar = tab.parentElement.parentElement;
        const title = [...toolbar.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim();
        const rows = [...document.querySelectorAll("table tr")].filter((tr) => tr.cells.length === 3 && tr.cells[0].tagName === "TD")
          .map((tr) => ({
            total: tr.cells[0].textContent.trim(),
            self: tr.cells[1].textContent.trim(),
            name: tr.cells[2].textContent.trim(),
            file: tr.cells[2].getAttribute("title"),
          }));
        const table = document.querySelector("table tr td").closest("table");
        const scroller = table.parentElement.parentElement.parentElement;
        return { title, documentTitle: document.title, rows, scrolls: scroller.scrollHeight > scroller.clientHeight + 1 };
      }));
    } catch (e) {
      result.error = String(e && e.message || e);
    }
    result.importer = (seen.console.find((l) => l.includes("Importing ")) || "").replace(/^log: /, "");
    if (shots) await page.screenshot({ path: path.join(shots, `${path.basename(new URL(url).pathname)}.png`) }).catch(() => {});
    delete result.console;
    results.push(result);
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(results, null, 1));
