#!/usr/bin/env python3
"""Checks jsprof's exports with readers nobody here wrote (tools/export-readers/README.md).

    python3 tools/export-readers/run.py --jsprof PATH_TO_JSPROF [--screenshot PNG] [--out DIR]

Bootstraps its tools (npm packages pinned by package-lock.json here, installed into
$JSPROF_EXPORT_TOOLS or ~/.cache/jsprof/export-tools; Debian's Chromium), makes real traces
with jsprof (examples/primes, and pages/idle.html here), converts them with `jsprof convert`,
writes `jsprof report`s, and checks what speedscope (in Chromium), pprof-format and Chromium
itself read from them. Prints `ok NAME`, `FAIL NAME: detail` or `skip NAME: why` per check
and a closing `N passed, N failed, N skipped` line; exits 1 if a check failed, 2 if the
tools could not be had.
"""

import argparse
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
from judge import (SPEEDSCOPE, Expect, check_page, check_pprof, check_speedscope,  # noqa: E402
                   display_name, read_traces)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from toolboot import Unavailable, apt_install, log, npm_ci  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.abspath(os.environ.get("JSPROF_EXPORT_TOOLS") or os.path.expanduser("~/.cache/jsprof/export-tools"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PACKAGES = ("speedscope", "pprof-format", "playwright-core")
SPEEDSCOPE_APP = os.path.join("node_modules", "speedscope", "dist", "release")


# --- bootstrap ---------------------------------------------------------------------------

def bootstrap():
    """Node, npm, the pinned npm packages and Chromium; returns the versions found."""
    if not os.path.exists(CHROMIUM):
        if CHROMIUM != "/usr/bin/chromium":
            raise Unavailable(f"CHROMIUM={CHROMIUM} does not exist")
        apt_install(["chromium"])
        if not os.path.exists(CHROMIUM):
            raise Unavailable("apt-get install chromium did not leave /usr/bin/chromium")
    versions = npm_ci(HERE, TOOLS, PACKAGES)
    out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    versions["chromium"] = out.split(" built")[0].replace("Chromium ", "") or "?"
    return versions


# --- running it -------------------------------------------------------------------------

def run(cmd, what, timeout=900, **kw):
    """Runs `cmd`, raising if it fails. The timeout only ends a hang: the readers' own waits
    (lib.mjs's WAIT_MS) are on states, and a loaded machine may make them slow."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()[-2000:]}")
    return r


READ_LOG = []  # with --out: every reader's output, saved as readers.json


def node(script, *args):
    """Runs one of the readers' scripts here; returns the JSON it prints."""
    env = dict(os.environ, JSPROF_EXPORT_TOOLS=TOOLS, CHROMIUM=CHROMIUM)
    r = run(["node", os.path.join(HERE, script), *args], f"node {script}", env=env)
    read = json.loads(r.stdout)
    READ_LOG.append({"script": script, "args": list(args), "read": read})
    return read


class Handler(http.server.SimpleHTTPRequestHandler):
    """/speedscope/...: speedscope's built app; /exports/...: the run's files."""

    roots = {}
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm"}

    def translate_path(self, path):
        path = path.split("?", 1)[0].split("#", 1)[0]
        top, _, rest = path.lstrip("/").partition("/")
        root = self.roots.get(top)
        if root is None:
            return os.path.join(os.devnull, "missing")
        return os.path.join(root, *[p for p in rest.split("/") if p not in ("", ".", "..")])

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(roots):
    handler = type("RootsHandler", (Handler,), {"roots": roots})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)  # a free port, never 8000-8444
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Checks:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def check(self, name, fn):
        try:
            problems = fn()
        except Exception as e:  # a reader that crashed is a failed check, not a crashed run
            problems = [f"{type(e).__name__}: {e}"]
        if problems:
            self.failed += 1
            log(f"FAIL {name}: " + "; ".join(problems))
        else:
            self.passed += 1
            log(f"ok {name}")

    def skip(self, name, why):
        self.skipped += 1
        log(f"skip {name}: {why}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jsprof", help="the jsprof binary (required unless --bootstrap-only)")
    ap.add_argument("--bootstrap-only", action="store_true",
                    help="install Chromium and the readers' npm packages if missing, then exit (./mach bootstrap)")
    ap.add_argument("--screenshot", help="save a 1280-wide full-page PNG of examples/primes' report here")
    ap.add_argument("--out", help="keep the traces, exports, reports and speedscope screenshots in this directory")
    args = ap.parse_args()
    start = time.monotonic()
    if args.bootstrap_only:
        try:
            versions = bootstrap()
        except Unavailable as e:
            log(f"export-readers: {e}")
            return 2
        log("export-readers: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        return 0
    if not args.jsprof:
        ap.error("--jsprof is required")
    jsprof = os.path.abspath(args.jsprof)
    if not os.access(jsprof, os.X_OK):
        log(f"export-readers: {jsprof} is not an executable jsprof")
        return 2
    try:
        versions = bootstrap()
    except Unavailable as e:
        log(f"export-readers: cannot run the checks: {e}")
        return 2
    log("export-readers: " + ", ".join(f"{k} {v}" for k, v in versions.items()))

    if args.out:
        os.makedirs(args.out, exist_ok=True)
        work = os.path.abspath(args.out)
    else:
        work = tempfile.mkdtemp(prefix="jsprof-export-readers-")
    try:
        return check_all(jsprof, work, args, start)
    finally:
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)


FORMATS = [("cpuprofile", ".cpuprofile"), ("speedscope", ".speedscope.json"), ("trace-event", ".trace.json"),
           ("pprof", ".pb.gz"), ("folded", ".folded"), ("svg", ".svg"), ("firefox", ".firefox.json")]


def check_all(jsprof, work, args, start):
    checks = Checks()
    j = functools.partial(os.path.join, work)
    try:
        expects = produce(jsprof, j)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
        checks.check("jsprof-produces-the-exports", lambda: [str(e)])
        log(f"export-readers: {checks.passed} passed, {checks.failed} failed, {checks.skipped} skipped")
        return 1
    read_all(checks, expects, j, args, work)
    if args.out:
        with open(j("readers.json"), "w", encoding="utf-8") as f:
            json.dump(READ_LOG, f, indent=1)
    elapsed = time.monotonic() - start
    log(f"export-readers: took {elapsed:.1f} s, artifacts {'in ' + work if args.out else 'removed'}")
    log(f"export-readers: {checks.passed} passed, {checks.failed} failed, {checks.skipped} skipped")
    return 1 if checks.failed else 0


def produce(jsprof, j):
    """Real traces, every export of them and the reports; returns what each input holds."""
    # The page's own Profiler (--trace-out) and jsprof's outside one (--profile-out).
    run([jsprof, os.path.join(ROOT, "examples", "primes", "index.html"),
         "--trace-out", j("primes.json"), "--profile-out", j("primes-profile.json")], "jsprof examples/primes")
    run([jsprof, os.path.join(HERE, "pages", "idle.html"), "--trace-out", j("idle.json")], "jsprof pages/idle.html")

    # Each trace file alone, and both of examples/primes merged.
    inputs = {"primes": [j("primes.json")], "idle": [j("idle.json")],
              "merged": [j("primes.json"), j("primes-profile.json")]}
    expects = {}
    for name, files in inputs.items():
        traces = [t for f in files for t in read_traces(f)]
        title = os.path.basename(files[0]) if len(files) == 1 else f"{len(traces)} traces"
        expects[name] = Expect(traces, title)
        for fmt, ext in FORMATS:
            run([jsprof, "convert", *files, "-o", j(name + ext), "--format", fmt], f"jsprof convert {name}{ext}")
    if expects["idle"].pseudo["(idle)"] == 0:
        log("note: pages/idle.html's trace has no sample without a stack this time; (idle) goes unchecked")
    run([jsprof, "report", j("primes.json"), "-o", j("primes.html")], "jsprof report primes")
    run([jsprof, "report", j("idle.json"), "-o", j("idle.html")], "jsprof report idle")
    return expects


def search_term(expect):
    """The flame graph search for the leading function: its frames' titles start `NAME (`."""
    top = expect.top()
    return "^" + re.escape(display_name(top)) + " " if top is not None else ""


def read_all(checks, expects, j, args, work):
    """Every reader on its exports, each judged as one named check."""
    # speedscope, its built app and the exports from one local server.
    speedscope_runs = [(name, kind, name + ext) for name in ("primes", "idle")
                       for kind, ext in FORMATS if kind in SPEEDSCOPE]
    speedscope_runs += [("merged", "cpuprofile", "merged.cpuprofile"), ("merged", "folded", "merged.folded")]
    shots = j("speedscope-shots")
    if args.out:
        os.makedirs(shots, exist_ok=True)
    with serve({"speedscope": os.path.join(TOOLS, SPEEDSCOPE_APP), "exports": work}) as base:
        urls = [f"{base}/exports/{file}" for _, _, file in speedscope_runs]
        try:
            seen = node("speedscope.mjs", f"{base}/speedscope/index.html", *urls, *(["--shots", shots] if args.out else []))
        except Exception as e:
            seen = [{"error": str(e)}] * len(urls)
    for (name, kind, file), s in zip(speedscope_runs, seen):
        what = " (Trace Event)" if kind == "trace-event" else ""
        checks.check(f"speedscope-in-chromium {file}{what}",
                     functools.partial(check_speedscope, kind, expects[name], j(file), s))

    for name in ("primes", "idle", "merged"):
        checks.check(f"pprof-format {name}.pb.gz",
                     lambda name=name: check_pprof(expects[name], node("pprof.mjs", j(name + ".pb.gz"))))

    screenshot = os.path.abspath(args.screenshot) if args.screenshot else None
    for name, shot in (("primes", screenshot), ("idle", None)):
        def report(name=name, shot=shot):
            read = node("report.mjs", j(name + ".html"), search_term(expects[name]),
                        *(["--screenshot", shot] if shot else []))
            return check_page(expects[name], read, True, shot)
        checks.check(f"report-in-chromium {name}.html", report)
    checks.check("svg-in-chromium primes.svg", lambda: check_page(
        expects["primes"], node("report.mjs", j("primes.svg"), search_term(expects["primes"])), False))

    checks.skip("firefox-format", "no offline reader of the Firefox Profiler's processed format "
                "(speedscope answers 'Unrecognized format'); the crate's tests cover it")


if __name__ == "__main__":
    sys.exit(main())
