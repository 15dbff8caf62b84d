#!/usr/bin/env python3
"""Runs a page N times in jsprof and sends each run's trace to a collector, as the field
snippet (examples/field/jsprof-field.js) sends a user's: the envelope of `POST
/v1/profiles` (trace, pageUrl, release, userAgent, session, timeOrigin, labels), gzipped.

    tools/field-runs.py --runs 1000 --release 1.0 --collector http://127.0.0.1:8080 PAGE

The page's own Profilers make the traces (`jsprof --trace-out`): the page must be served
with `Document-Policy: js-profiling` (a file page: its `.headers` sidecar) and call
`profiler.stop()`. `--batch` pages run at once in one jsprof, each in a content of its own.
Each run is a session of its own; its timeOrigin is the wall clock when its jsprof
started. Exits non-zero if a run fails or the collector refuses a trace.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def post(url, body):
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=10, help="pages a jsprof runs at once")
    ap.add_argument("--release", default=None)
    ap.add_argument("--collector", default="http://127.0.0.1:8080")
    ap.add_argument("--key", default=None, help="the project's ingest key")
    ap.add_argument("--label", action="append", default=[], help="NAME=VALUE, stored with each trace")
    ap.add_argument("--jsprof", default=os.path.join(
        os.environ.get("JSPROF_TARGET_DIR", os.path.expanduser("~/.cache/jsprof/target")), "release", "jsprof"))
    a = ap.parse_args()
    if not os.path.exists(a.jsprof):
        sys.exit(f"field-runs: {a.jsprof} not found (./mach build builds it)")
    labels = dict(kv.split("=", 1) for kv in a.label)
    url = a.collector.rstrip("/") + "/v1/profiles" + (f"?key={a.key}" if a.key else "")
    page_url = a.page if "://" in a.page else "file://" + os.path.abspath(a.page)
    sent = samples = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "traces.json")
        run = 0
        while run < a.runs:
            n = min(a.batch, a.runs - run)
            origin = time.time() * 1000
            p = subprocess.run([a.jsprof, *[a.page] * n, "--trace-out", out],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.exit(f"field-runs: jsprof exited {p.returncode}: {p.stderr.strip()}")
            with open(out) as f:
                traces = json.load(f)
            if len(traces) != n:
                sys.exit(f"field-runs: {n} pages gave {len(traces)} traces (does the page stop its Profiler?)")
            for i, trace in enumerate(traces):
                envelope = {"trace": trace, "pageUrl": page_url, "userAgent": "jsprof (tools/field-runs.py)",
                            "session": f"run-{run + i + 1}", "timeOrigin": origin, "labels": labels}
                if a.release:
                    envelope["release"] = a.release
                status, answer = post(url, gzip.compress(json.dumps(envelope).encode()))
                if status != 202:
                    sys.exit(f"field-runs: the collector answered {status}: {answer.strip()}")
                sent += 1
                samples += len(trace["samples"])
            run += n
    print(f"field-runs: {a.runs} runs of {a.page}, {sent} traces ({samples} samples) sent to {url} "
          f"in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
