// Runs one page in headless Chromium (Debian's, through playwright-core) and prints the line
// it logs as `RESULT {json}`, with the CPU time Chromium's profiler threads used, when they
// can be read from /proc: `node chromium.js URL`.
const fs = require("fs");
const { chromium } = require("playwright-core");

// CPU ms of threads of the renderer processes whose names look like V8's profiler threads.
function profilerThreadsCpuMs() {
  let ms = 0;
  let found = false;
  const tick = 1000 / 100; // USER_HZ
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cmd = "";
    try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"); } catch { continue; }
    if (!cmd.includes("--type=renderer")) continue;
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tasks) {
      try {
        const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        if (!/ProfEvnt|Sampler|Profiler/i.test(comm)) continue;
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        ms += (Number(fields[11]) + Number(fields[12])) * tick;
        found = true;
      } catch { /* the thread went away */ }
    }
  }
  return found ? ms : null;
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
    await page.goto(url);
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no RESULT in 120 s")), 120000); });
    const r = await Promise.race([result, timeout]);
    clearTimeout(timer);
    r.profiler_threads_cpu_ms = profilerThreadsCpuMs();
    console.log("RESULT " + JSON.stringify(r));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(`chromium.js: ${e.message}`); process.exit(1); });
