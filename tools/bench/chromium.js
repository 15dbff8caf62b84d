// Runs one page in headless Chromium (Debian's, through playwright-core) and prints the line
// it logs as `RESULT {json}`, with the CPU time V8's profiler thread used, read from /proc
// while the page runs: `node chromium.js URL`.
const fs = require("fs");
const { chromium } = require("playwright-core");

// V8's profiler thread ("v8:ProfEvntProc": it times the samples, signals the main thread
// and processes the ticks) exists only while a profile runs, so it is polled: the largest
// CPU time (ns, from schedstat) seen per thread, summed, in ms. The signal handler's time on
// the main thread cannot be told apart from the page's and is not included.
const seen = new Map(); // "pid/tid" -> largest CPU ns seen
function readNs(key) {
  try {
    const ns = Number(fs.readFileSync(`/proc/${key.split("/")[0]}/task/${key.split("/")[1]}/schedstat`, "utf8").split(" ")[0]);
    seen.set(key, Math.max(seen.get(key) || 0, ns));
  } catch { /* the thread went away */ }
}
// Cheap: rereads the threads already found; looks for new ones (a walk of /proc) only
// every tenth call, or until one is found.
let polls = 0;
function pollProfilerThreads() {
  for (const key of seen.keys()) readNs(key);
  if (seen.size > 0 && polls++ % 10 !== 0) return;
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cmd = "";
    try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"); } catch { continue; }
    if (!cmd.includes("--type=renderer")) continue;
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tasks) {
      try {
        if (fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() === "v8:ProfEvntProc") readNs(`${pid}/${tid}`);
      } catch { /* the thread went away */ }
    }
  }
}
function profilerThreadsCpuMs() {
  if (seen.size === 0) return null;
  return [...seen.values()].reduce((a, b) => a + b, 0) / 1e6;
}

(async () => {
  const url = process.argv[2];
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    const result = new Promise((resolve) => {
      page.on("console", (m) => {
        const text = m.text();
        if (text.startsWith("RESULT ")) resolve(JSON.parse(text.slice(7)));
      });
    });
    const poll = setInterval(pollProfilerThreads, 50);
    await page.goto(url);
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no RESULT in 120 s")), 120000); });
    const r = await Promise.race([result, timeout]);
    clearTimeout(timer);
    clearInterval(poll);
    r.profiler_threads_cpu_ms = profilerThreadsCpuMs();
    console.log("RESULT " + JSON.stringify(r));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(`chromium.js: ${e.message}`); process.exit(1); });
