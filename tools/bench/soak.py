"""The soak test of ./mach bench (not in CI): 1000 profilers started and stopped in a loop for
60 s (benches/soak/index.html), with the process's resident size read from /proc at the first
round and at the end. Usage: soak.py --jsprof PATH [--seconds N]"""

import argparse
import os
import subprocess
import sys
import time


def resident_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jsprof", required=True)
    ap.add_argument("--seconds", type=int, default=60)
    a = ap.parse_args()
    page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benches", "soak", "index.html")
    url = "file://" + os.path.abspath(page) + f"?seconds={a.seconds}"
    proc = subprocess.Popen([a.jsprof, url, "--timeout", str(a.seconds + 60)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first, peak, last, rounds, done = None, 0.0, None, 0, ""
    os.set_blocking(proc.stdout.fileno(), False)
    buf = ""
    while proc.poll() is None:
        time.sleep(0.2)
        rss = resident_mib(proc.pid)
        if rss is not None:
            peak = max(peak, rss)
            last = rss
        chunk = proc.stdout.read() or ""
        buf += chunk
        for line in buf.splitlines():
            if line.startswith("ROUND "):
                rounds = int(line.split()[1])
                if rounds == 1 and first is None:
                    first = rss
            if line.startswith("DONE"):
                done = line
    buf += proc.stdout.read() or ""
    done = next((l for l in buf.splitlines() if l.startswith("DONE")), done)
    err = proc.stderr.read()
    if proc.returncode != 0 or not done:
        print(f"soak: jsprof exited {proc.returncode}\n{err}", file=sys.stderr)
        return 1
    print(f"soak ({a.seconds} s): {done[5:]}")
    print(f"  resident after the first round {first:.0f} MiB, at the end {last:.0f} MiB, peak {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
