// Drives headless Chromium on the page at / of `jsprof collect`, for tests/investigate.rs:
//
//   node investigate.mjs URL
//
// loads URL and waits until the page and its diff flame graph show their data; reads the
// label suggestions, the samples by view, the traces and the diff (the last two releases);
// compares them the other way round and back; groups by browser; applies the group
// "Firefox" as a filter (its button) and reads the top table, the traces, the groups and
// the diff's answer again; clears the filter and opens the trace that has events, and
// reads its stack chart. Prints what it read as JSON, with the page's errors and requests
// elsewhere (browser.mjs).
import { withPage } from "./browser.mjs";

const [url] = process.argv.slice(2);

await withPage(url, async (page) => {
  const groups = () => page.$$eval("#groups tbody tr", (rows) => rows.map((r) => ({
    value: r.getAttribute("data-value"),
    shown: r.querySelector(".value").textContent,
    traces: Number(r.querySelector(".traces").textContent),
    samples: Number(r.querySelector(".samples").textContent),
    top: r.querySelector(".fn").textContent,
  })));
  const traces = () => page.$$eval("#traces tbody tr", (rows) => rows.map((r) => ({
    id: r.getAttribute("data-id"),
    release: r.querySelector(".release").textContent,
    view: r.querySelector(".view").textContent,
    environment: r.querySelector(".environment").textContent,
    browser: r.querySelector(".browser").textContent,
    samples: Number(r.querySelector(".samples").textContent),
    events: Number(r.querySelector(".events").textContent),
  })));
  const top = () => page.$$eval("#top tbody tr", (rows) => rows.map((r) => ({
    function: r.getAttribute("data-function"),
    samples: Number(r.querySelector(".samples").textContent),
  })));
  const diff = async () => ({
    nodes: await page.$$eval("#diff g.node", (gs) => gs.map((g) => {
      const r = g.querySelector("rect");
      return {
        function: g.getAttribute("data-function"),
        base: Number(g.getAttribute("data-base")),
        head: Number(g.getAttribute("data-head")),
        significant: g.getAttribute("data-significant") === "true",
        fill: r.getAttribute("fill"),
        x: Number(r.getAttribute("x")),
        y: Number(r.getAttribute("y")),
        width: Number(r.getAttribute("width")),
        title: g.querySelector("title").textContent,
      };
    })),
    legend: await page.$eval("#diff-legend", (l) => ({ hidden: l.hidden, text: l.textContent })),
    status: await page.textContent("#diff-status"),
  });
  const suggestions = () => page.$$eval("datalist", (ls) => Object.fromEntries(ls.map((l) =>
    [l.id, [...l.querySelectorAll("option")].map((o) => o.value)])));
  const releases = () => page.$$eval('#diff-form select[name="base"] option', (os) => os.map((o) => o.value));
  async function compare(base, head) {
    await page.selectOption('#diff-form select[name="base"]', base);
    await page.selectOption('#diff-form select[name="head"]', head);
    await page.click('#diff-form button[type="submit"]');
    await page.waitForSelector(`#diff-section[data-state="ready"][data-base="${base}"][data-head="${head}"]`);
    return diff();
  }

  await page.goto(url);
  await page.waitForSelector('body[data-state="ready"]');
  await page.waitForSelector('#diff-section[data-state="ready"]');
  const first = {
    suggestions: await suggestions(),
    releases: await releases(),
    groups: await groups(),
    by: await page.getAttribute("#groups-section", "data-by"),
    traces: await traces(),
    diff: await diff(),
    diff_chosen: [await page.inputValue('#diff-form select[name="base"]'), await page.inputValue('#diff-form select[name="head"]')],
  };
  const swapped = await compare("2.0", "1.0");
  const diffed = await compare("1.0", "2.0");

  await page.selectOption("#group-by", "browser");
  await page.waitForSelector('#groups-section[data-state="ready"][data-by="browser"]');
  const byBrowser = await groups();
  await page.click('#groups tbody tr[data-value="Firefox"] button');
  await page.waitForSelector('body[data-state="ready"][data-query="browser=Firefox"]');
  await page.waitForSelector('#groups-section[data-state="ready"][data-query="browser=Firefox"]');
  await page.waitForSelector('#diff-section[data-state="empty"][data-query="browser=Firefox"]');
  const firefox = {
    location: page.url(),
    top: await top(),
    traces: await traces(),
    groups: await groups(),
    diff: await diff(),
  };

  await page.fill('#filters input[name="browser"]', "");
  await page.click('#filters button[type="submit"]');
  await page.waitForSelector('body[data-state="ready"][data-query=""]');
  await page.click('#traces tbody tr:not([data-events="0"]) button');
  await page.waitForSelector('#trace-section[data-state="ready"]');
  const opened = await page.$eval("#trace-section", (section) => {
    const svg = section.querySelector("svg");
    const num = (e, a) => Number(e.getAttribute(a));
    return {
      id: section.getAttribute("data-id"),
      title: section.querySelector("h2").textContent,
      status: section.querySelector("#trace-status").textContent,
      from: num(svg, "data-from"),
      to: num(svg, "data-to"),
      left: num(svg, "data-left"),
      width: num(svg, "data-width"),
      ticks: [...svg.querySelectorAll("line.tick")].map((l) => ({ t: num(l, "data-t"), x: num(l, "x1"), empty: l.classList.contains("empty") })),
      boxes: [...svg.querySelectorAll("g.box")].map((g) => ({
        function: g.getAttribute("data-function"),
        depth: num(g, "data-depth"),
        start: num(g, "data-start"),
        end: num(g, "data-end"),
        samples: num(g, "data-samples"),
        x: num(g.querySelector("rect"), "x"),
        width: num(g.querySelector("rect"), "width"),
      })),
      marks: [...svg.querySelectorAll("g.mark")].map((g) => ({
        kind: g.getAttribute("data-kind"),
        start_ms: num(g, "data-start"),
        duration_ms: num(g, "data-duration"),
        class: g.querySelector("rect").getAttribute("class"),
        x: num(g.querySelector("rect"), "x"),
        width: num(g.querySelector("rect"), "width"),
      })),
    };
  });
  return { first, swapped, diffed, by_browser: byBrowser, firefox, opened };
});
