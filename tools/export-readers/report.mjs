// Loads a `jsprof report` page (or an `.svg` flame graph export) from its file:// URL and
// prints, as JSON, what the page did (console errors, page errors, every request) and what it
// shows: its title, the session facts, the top-functions table, the flame graph, and the
// flame graph's own search run through its "Search" button (the prompt answered with TERM).
//   node report.mjs REPORT.html|EXPORT.svg TERM [--screenshot PATH]
import path from "node:path";
import { pathToFileURL } from "node:url";
import { WAIT_MS, launch, watch } from "./lib.mjs";

const args = process.argv.slice(2);
let screenshot = null;
const i = args.indexOf("--screenshot");
if (i >= 0) screenshot = args.splice(i, 2)[1];
const [file, term] = args;
const url = pathToFileURL(path.resolve(file)).href;

// The report's flame graph, or the SVG document itself.
const FLAME = "svg:not(svg svg):is(.flame > svg, :root)";

const browser = await launch({ width: 1280, height: 800 });
const result = { url };
try {
  const page = await browser.context.newPage();
  const seen = watch(page);
  Object.assign(result, seen);
  await page.goto(url, { waitUntil: "load" });
  Object.assign(result, await page.evaluate((FLAME) => {
    const text = (e) => (e ? e.textContent.trim() : null);
    const svg = document.querySelector(FLAME);
    return {
      title: document.title,
      heading: text(document.querySelector("h1")),
      facts: Object.fromEntries([...document.querySelectorAll("[data-fact]")].map((e) => [e.dataset.fact, e.textContent.trim()])),
      header: [...document.querySelectorAll("table.top thead th")].map(text),
      rows: [...document.querySelectorAll("table.top tbody tr")].map((tr) => [...tr.cells].map(text)),
      flame: svg && {
        frames: [...svg.querySelectorAll("#frames > g")].map((g) => text(g.querySelector("title"))),
        width: svg.getBoundingClientRect().width,
        height: svg.getBoundingClientRect().height,
      },
    };
  }, FLAME));
  if (screenshot) {
    // Before the search, so the picture shows the report as it opens.
    await page.screenshot({ path: screenshot, fullPage: true });
  }
  if (result.flame && term) {
    // The flame graph's "Search" asks for a regular expression with prompt().
    page.once("dialog", (d) => d.accept(term));
    await page.locator(`${FLAME} #search`).click();
    await page.locator(`${FLAME} #matched:not(.hide)`).waitFor({ timeout: WAIT_MS }).catch(() => {});
    result.search = await page.evaluate((FLAME) => {
      const svg = document.querySelector(FLAME);
      const highlighted = [...svg.querySelectorAll("#frames > g")]
        .filter((g) => (g.querySelector("rect").getAttribute("fill") || "").replace(/\s/g, "") === "rgb(230,0,230)")
        .map((g) => g.querySelector("title").textContent);
      return { matched: svg.querySelector("#matched").textContent.trim(), highlighted, button: svg.querySelector("#search").textContent.trim() };
    }, FLAME);
  }
  await page.close();
} catch (e) {
  result.error = String(e && e.message || e);
} finally {
  await browser.close();
}
delete result.console;
console.log(JSON.stringify(result, null, 1));
