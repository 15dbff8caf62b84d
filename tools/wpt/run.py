#!/usr/bin/env python3
"""jsprof's web-platform-tests runner (`./mach test-wpt`, `./mach update-wpt`).

Serves a WPT tree with wptserve (serve.py) on web-platform.test & co, ports 8000/8001 and
8443/8444, over TLS with a test CA generated on first use; runs each test in a fresh
`jsprof` process with those hosts mapped to 127.0.0.1 and the CA trusted; reads the result
line testharnessreport.js prints; compares with the expectations in wpt-metadata/ (Servo's
.ini format); prints a summary and fails on any unexpected result, unexpected passes
included. Tests are named as upstream's manifest names them (manifest.py): every scope of a
.any.js test and every variant (`/x.any.html?a`) is a test of its own; those in a scope or
protocol jsprof lacks (shared and service workers, ShadowRealm, jsshell, module workers,
HTTP/2) are reported as SKIP without running, listed in the summary, never unexpected."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import manifest  # noqa: E402
import metadata  # noqa: E402
from serve import BROWSER_HOST, PORTS, Servers, all_hosts  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
MARKER = "JSPROF-WPT-RESULT "
TIMEOUT_NORMAL, TIMEOUT_LONG = 10, 60


def discover(tree, paths, include_tentative):
    """Test URLs (`/dir/x.html`, `/dir/y.window.html`, `/dir/z.any.worker.html?v`) under
    `paths` of `tree`, sorted: every variant and every scope, those jsprof skips included."""
    found = []
    roots = [os.path.join(tree, p) for p in paths] if paths else [tree]
    for start in roots:
        if os.path.isfile(start):
            candidates = [start]
        elif os.path.isdir(start):
            candidates = []
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = [d for d in dirnames if d not in manifest.SKIP_DIRS]
                candidates += [os.path.join(dirpath, f) for f in filenames]
        else:
            raise SystemExit(f"test-wpt: {start}: no such test or directory")
        for path in candidates:
            rel = "/" + os.path.relpath(path, tree).replace(os.sep, "/")
            if manifest.is_tentative(rel) and not include_tentative:
                continue
            found += manifest.tests_of(tree, rel)
    return sorted(set(found))


def timeout_of(tree, test):
    return TIMEOUT_LONG if manifest.is_long(tree, test) else TIMEOUT_NORMAL


def url_of(test):
    host = ("www." if manifest.www_of(test) else "") + BROWSER_HOST
    if manifest.https_of(test):
        return f"https://{host}:{PORTS['https'][0]}{test}"
    return f"http://{host}:{PORTS['http'][0]}{test}"


def skipped(test, reason):
    """The result of a test jsprof does not run (wptreport's SKIP)."""
    return {"test": test, "status": "SKIP", "message": reason, "subtests": []}


def run_one(exe, ca, hosts, tree, test, prefs=None):
    """One test in a fresh jsprof (with `prefs`, from `__dir__.ini`): its wptreport-shaped
    result."""
    harness_timeout = timeout_of(tree, test)
    limit = harness_timeout + 10
    cmd = [exe, "--certificate-path", ca, "--timeout", str(limit)]
    for name, value in sorted((prefs or {}).items()):
        cmd += ["--pref", f"{name}={value}"]
    for h in hosts:
        cmd += ["--host-override", h]
    cmd.append(url_of(test))
    # The page keeps running after it reports (the harness's own timeout timer, say): like a
    # browser navigating away, the runner ends the process once the result line is out.
    timed_out = threading.Event()
    with tempfile.TemporaryFile(mode="w+") as errfile:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True)

        def kill():
            timed_out.set()
            p.kill()

        killer = threading.Timer(limit + 20, kill)
        killer.start()
        result = None
        try:
            for line in p.stdout:
                if line.startswith(MARKER):
                    result = json.loads(line[len(MARKER):])
                    p.kill()
                    break
            code = p.wait()
        finally:
            killer.cancel()
            p.stdout.close()
        errfile.seek(0)
        err = errfile.read()
    if result is not None:
        return {"test": test, "status": result["status"], "message": result["message"],
                "subtests": result["subtests"]}
    if timed_out.is_set():
        code = None
    if code is None or "stopped at --timeout" in err:
        status, message = "TIMEOUT", f"no result within {limit} s"
    elif code != 0:
        status, message = "CRASH", f"exit {code}: " + " | ".join(err.strip().splitlines()[-3:])
    else:
        status, message = "ERROR", "the page finished without reporting: " + " | ".join(err.strip().splitlines()[-3:])
    return {"test": test, "status": status, "message": message, "subtests": []}


def compare(result, expected):
    """Marks `expected` on the result and its subtests where they differ; returns whether
    anything was unexpected."""
    if result["status"] == "SKIP":
        return False
    unexpected = False
    if result["status"] != expected.status:
        result["expected"] = expected.status
        unexpected = True
    for s in result["subtests"]:
        want = expected.subtests.get(s["name"], ("PASS", []))[0]
        if s["status"] != want:
            s["expected"] = want
            unexpected = True
    return unexpected


class Progress:
    def __init__(self, total):
        self.total, self.done = total, 0
        self.tty = sys.stderr.isatty()

    def show(self, test, status=None):
        if self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            bar = "#" * filled + "-" * (width - filled)
            sys.stderr.write(f"\r[{bar}] {self.done}/{self.total} {test[-60:]:<60}")
            if self.done == self.total and status is not None:
                sys.stderr.write("\n")
        elif status is not None:
            sys.stderr.write(f"[{self.done}/{self.total}] {status:<8} {test}\n")
        sys.stderr.flush()


def summary(results, unexpected):
    counts = {}
    sub_counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        for s in r["subtests"]:
            sub_counts[s["status"]] = sub_counts.get(s["status"], 0) + 1
    lines = [f"\nRan {len(results)} tests ({sum(sub_counts.values())} subtests).",
             f"  {'status':<20}{'tests':>6}{'subtests':>10}"]
    for st in ["OK", "PASS", "FAIL", "ERROR", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED", "CRASH", "SKIP"]:
        if st in counts or st in sub_counts:
            lines.append(f"  {st:<20}{counts.get(st, ''):>6}{sub_counts.get(st, ''):>10}")
    skips = [r for r in results if r["status"] == "SKIP"]
    if skips:
        lines.append(f"\n{len(skips)} test(s) skipped (not run, never unexpected):")
        lines += [f"  {r['test']}: {r['message']}" for r in skips]
    if unexpected:
        lines.append(f"\n{len(unexpected)} test(s) with unexpected results:")
        for r in unexpected:
            if "expected" in r:
                lines.append(f"  {r['test']}: {r['status']} (expected {r['expected']}) {r['message'] or ''}".rstrip())
            else:
                lines.append(f"  {r['test']}:")
            for s in r["subtests"]:
                if "expected" in s:
                    lines.append(f"    [{s['name']}] {s['status']} (expected {s['expected']}) {s['message'] or ''}".rstrip())
    else:
        lines.append("\nAll results as expected.")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(prog="mach test-wpt")
    ap.add_argument("paths", nargs="*", help="tests or folders, relative to the tree")
    ap.add_argument("--wpt-root", default=os.path.join(ROOT, "tests", "wpt"))
    # Tentative tests run like any other, with expectations; --exclude-tentative leaves them out.
    ap.add_argument("--exclude-tentative", dest="include_tentative", action="store_false")
    ap.add_argument("--include-tentative", dest="include_tentative", action="store_true",
                    help="(the default; kept for old command lines)")
    ap.add_argument("--log-json", metavar="FILE")
    ap.add_argument("--metadata", metavar="DIR", help="expectations (default wpt-metadata/, or wpt-metadata/upstream with --wpt-root)")
    ap.add_argument("--jsprof", required=True, help="the jsprof binary")
    ap.add_argument("--update", metavar="LOG", help="rewrite expectations from a --log-json file instead of running")
    ap.add_argument("--serve", action="store_true", help="only serve the tree (and print how to run a test by hand)")
    args = ap.parse_args(argv)
    tree = os.path.abspath(args.wpt_root)
    default_tree = os.path.abspath(os.path.join(ROOT, "tests", "wpt"))
    meta_root = args.metadata or os.path.join(ROOT, "wpt-metadata", *([] if tree == default_tree else ["upstream"]))

    if args.update:
        with open(args.update, encoding="utf-8") as f:
            results = json.load(f)["results"]
        written, removed = metadata.update(meta_root, results)
        for p in written:
            print(f"wrote {os.path.relpath(p, ROOT)}")
        for p in removed:
            print(f"removed {os.path.relpath(p, ROOT)}")
        return 0

    if args.serve:
        with Servers(tree, os.path.join(os.environ["JSPROF_WPT_TOOLS"], "certs")) as servers:
            flags = " ".join(f"--host-override {h}" for h in all_hosts())
            print(f"serving {tree}\nrun a test with:\n  {args.jsprof} --certificate-path {servers.ca_path} {flags} URL", flush=True)
            while True:
                time.sleep(3600)

    tests = discover(tree, args.paths, args.include_tentative)
    if not tests:
        print("test-wpt: no tests found", file=sys.stderr)
        return 1
    cert_dir = os.path.join(os.environ["JSPROF_WPT_TOOLS"], "certs")
    results, unexpected = [], []
    progress = Progress(len(tests))
    started = time.monotonic()
    with Servers(tree, cert_dir) as servers:
        for test in tests:
            progress.show(test)
            reason = manifest.skip_reason(test)
            r = skipped(test, reason) if reason else run_one(
                args.jsprof, servers.ca_path, all_hosts(), tree, test, metadata.prefs_for(meta_root, test))
            if compare(r, metadata.load(meta_root, test)):
                unexpected.append(r)
            results.append(r)
            progress.done += 1
            progress.show(test, r["status"])
    if args.log_json:
        with open(args.log_json, "w", encoding="utf-8") as f:
            json.dump({"results": results}, f, indent=1)
    print(summary(results, unexpected))
    print(f"({time.monotonic() - started:.1f} s)")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
