// Drives headless Chromium (Debian's /usr/bin/chromium, through playwright-core) on the
// page at / of `jsprof collect`, for tests/page.rs:
//
//   node page.mjs URL RELEASE DURING
//
// loads URL, waits until the page shows its data, reads the top table, the flame graph's
// frames, the timeline's bars and its marks (long tasks, frames, interactions), then types
// RELEASE in the filter, applies it and reads them again; then clears the release, picks
// DURING and reads them a third time. Prints {"before", "after", "during", "errors"} as
// JSON, with the page's errors and requests elsewhere (browser.mjs).
import { withPage } from "./browser.mjs";

const [url, release, during] = process.argv.slice(2);

await withPage(url, async (page) => {
  async function read() {
    const top = await page.$$eval("#top tbody tr", (rows) => rows.map((r) => ({
      function: r.getAttribute("data-function"),
      samples: Number(r.querySelector(".samples").textContent),
    })));
    const frame = page.frames().find((f) => f.url().includes("/api/flame"));
    const flame = frame ? await frame.$$eval("g > title", (ts) => ts.map((t) => t.textContent)) : null;
    const timeline = await page.$$eval("#timeline g.bar", (gs) => gs.map((g) => ({
      with_stack: Number(g.getAttribute("data-with-stack")),
      empty: Number(g.getAttribute("data-empty")),
    })));
    const marks = await page.$$eval("#timeline g.mark", (gs) => gs.map((g) => {
      const r = g.querySelector("rect");
      return {
        kind: g.getAttribute("data-kind"),
        start_ms: Number(g.getAttribute("data-start")),
        duration_ms: Number(g.getAttribute("data-duration")),
        class: r.getAttribute("class"),
        x: Number(r.getAttribute("x")),
        width: Number(r.getAttribute("width")),
        title: g.querySelector("title").textContent,
      };
    }));
    // The plot's extent along x (its axis) and the bars', for where the marks fall.
    const axis = await page.$eval("#timeline line.axis", (l) => [Number(l.getAttribute("x1")), Number(l.getAttribute("x2"))]);
    const bars = await page.$$eval("#timeline g.bar rect", (rs) => rs.map((r) => [Number(r.getAttribute("x")), Number(r.getAttribute("width"))]));
    const status = await page.textContent("#status");
    return { top, flame, timeline, marks, axis, bars, status };
  }

  await page.goto(url);
  await page.waitForSelector('body[data-state="ready"]');
  const before = await read();
  await page.fill('#filters input[name="release"]', release);
  await page.click('#filters button[type="submit"]');
  await page.waitForSelector(`body[data-state="ready"][data-query="release=${encodeURIComponent(release)}"]`);
  const after = await read();
  const location = page.url();
  await page.fill('#filters input[name="release"]', "");
  await page.selectOption('#filters select[name="during"]', during);
  await page.click('#filters button[type="submit"]');
  await page.waitForSelector(`body[data-state="ready"][data-query="during=${encodeURIComponent(during)}"]`);
  const scoped = await read();
  return { before, after, during: scoped, location };
});
