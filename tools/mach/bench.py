"""`./mach bench`: the criterion benchmarks (the profiler core, the profiler service, the export
merge, the collector's ingest and `top`), the page benchmark (benches/cpu without and with
profiling) and the soak test (tools/bench/soak.py); `./mach bench --peer chromium` the same
page in jsprof and in headless Chromium side by side (tools/bench/peer.py).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

from . import cli
from .common import COLLECTOR_MANIFEST, ROOT, apt_install, bootstrap_build, build_shell, cargo, log, release_exe, target_dir
from .servo_tree import servo_build, servo_exe

BENCH_TOOLS = os.environ.get("JSPROF_BENCH_TOOLS", os.path.expanduser("~/.cache/jsprof/bench-tools"))
PLAYWRIGHT = "playwright-core@1.65.1"
PEERS = ("chromium",)


def page_bench(runs=5):
    """Runs benches/cpu alternately without and with profiling; prints medians."""
    exe = release_exe("jsprof")
    page = os.path.join(ROOT, "benches", "cpu", "index.html")
    out = os.path.join(target_dir(), "bench-trace.json")
    configs = [
        ("profiled from outside, 20 ms base, 10 ms requested", page, ["--profile-out", out, "--profile-interval", "10"]),
        ("profiled from outside, 1 ms base, 1 ms requested", page,
         ["--pref", "profiler.base_interval_ms=1", "--profile-out", out, "--profile-interval", "1"]),
        # The page's own Profiler (sampleInterval 1, maxBufferSize 1000) over twice the work:
        # stop() and its promise for a full 1000-sample buffer.
        ("the page's own Profiler, 1 ms base, 1000-sample buffer", "file://" + page + "#self",
         ["--pref", "profiler.base_interval_ms=1"]),
    ]

    def workload(target, extra):
        r = subprocess.run([exe, *extra, target], capture_output=True, text=True, check=True)
        ms = float(r.stdout.split()[-1])
        stats = [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]
        return ms, (stats[0] if stats else None)

    print(f"\npage benchmark: {os.path.relpath(page, ROOT)}, {runs} alternating runs per configuration")
    for name, target, flags in configs:
        plain, profiled, stats = [], [], []
        for _ in range(runs):
            plain.append(workload(target.replace("#self", "#plain"), [])[0])
            ms, st = workload(target, ["--profile-stats", *flags])
            profiled.append(ms)
            stats.append(st)
        med = statistics.median

        def stat(key, scale=1.0):
            vals = [s[key] for s in stats if s.get(key) is not None]
            return med(vals) * scale if vals else float("nan")

        print(f"  {name}:")
        if "#self" in target:
            print(f"    samples {stat('samples'):.0f}; page stop() + promise task main-thread time {stat('page_stop_ms'):.3f} ms")
        else:
            slowdown = med(profiled) / med(plain) - 1
            print(f"    workload median {med(plain):.1f} ms without, {med(profiled):.1f} ms with: slowdown {slowdown * 100:+.2f}%")
            print(f"    samples {stat('samples'):.0f}; stop() main-thread time {stat('stop_ms'):.3f} ms")
        print(f"    time inside sampling {stat('sampling_fraction', 100):.3f}% of the run "
              f"(signals for {stat('walks_signalled'):.0f} walks; {stat('gc_ticks_walked_at_end'):.0f} ticks inside collections, walked at their end)")

        def sampler(key, scale=1.0):
            vals = [s["sampler"][key] for s in stats if s.get("sampler") and s["sampler"].get(key) is not None]
            return med(vals) * scale if vals else float("nan")

        print(f"    ticks {sampler('ticks'):.0f}: lateness p50 {sampler('lateness_p50_us'):.0f} us, "
              f"p99 {sampler('lateness_p99_us'):.0f} us, max {sampler('lateness_max_us'):.0f} us; "
              f"missed blocks {sampler('missed_blocks'):.0f}, idle {sampler('idle'):.0f}")
        print(f"    evenness: every tenth of a block within {sampler('evenness_worst_tenth_pts'):.1f} points of 10%, "
              f"{sampler('taken_after_block_pct'):.1f}% taken after their block; "
              f"sampler thread CPU {sampler('thread_cpu_ms'):.1f} ms")
        print(f"    cost of a walk: {stat('walk_us_depth5'):.1f} us at 5 frames, {stat('walk_us_depth20'):.1f} us at 20 frames "
              f"(plus {stat('signal_us'):.1f} us of kernel time for each that needed a signal)")
        print(f"    trace JSON {stat('json_bytes_per_sample'):.1f} bytes per sample")
    return 0


def hoarders_bench(runs=5):
    """tests/pages/hostile/hoarders.html at a 1 ms base: 100,000 profilers at 1 ms that are never
    stopped, then the page's own profiler at 20 ms for 1 s. Prints the median of that last
    profiler's stop() (page time from the call to its promise's trace) and its samples with a
    stack (issue 40's targets: stop() at most 5 ms, about 50 samples)."""
    exe = release_exe("jsprof")
    page = os.path.join(ROOT, "tests", "pages", "hostile", "hoarders.html")
    results = []
    for _ in range(runs):
        r = subprocess.run([exe, page, "--timeout", "120", "--pref", "profiler.base_interval_ms=1"],
                           capture_output=True, text=True)
        lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
        if r.returncode != 0 or not lines:
            log(f"hoarders page failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
            return 1
        results.append(json.loads(lines[-1]))
    med = statistics.median
    stops = sorted(x["stopMs"] for x in results)
    stacks = sorted(x["withStack"] for x in results)
    print(f"\nhoarders: {os.path.relpath(page, ROOT)}, 1 ms base, {runs} runs")
    print(f"  the measuring profiler beside {results[0]['hoarders']} forgotten ones: stop() median {med(stops):.2f} ms "
          f"(all {', '.join(f'{v:g}' for v in stops)}); samples with a stack median {med(stacks):.0f} of 50 "
          f"(all {', '.join(str(v) for v in stacks)})")
    return 0


def workers_bench(runs=3):
    """tests/pages/workers/spinning.html at a 1 ms base: 8 workers, each profiling itself at 1 ms
    while it spins for 200 ms (threads outnumbering this machine's cores). Prints the samples
    each got (~200 intervals each) and where the others went (--profile-stats)."""
    exe = release_exe("jsprof")
    page = os.path.join(ROOT, "tests", "pages", "workers", "spinning.html")
    per_worker, stats = [], []
    for _ in range(runs):
        r = subprocess.run([exe, page, "--timeout", "60", "--pref", "profiler.base_interval_ms=1", "--profile-stats"],
                           capture_output=True, text=True)
        lines = [json.loads(l) for l in (r.stdout + r.stderr).splitlines() if l.startswith("{")]
        result = [l for l in lines if "results" in l]
        if r.returncode != 0 or not result:
            log(f"workers page failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
            return 1
        per_worker += [w["samples"] for w in result[0]["results"]]
        stats += [l["sampler"] for l in lines if l.get("sampler")]
    med = statistics.median
    print(f"\nworkers: {os.path.relpath(page, ROOT)}, 8 workers spinning 200 ms at 1 ms, {os.cpu_count()} cores, {runs} runs")
    print(f"  samples per worker: median {med(per_worker):.0f}, min {min(per_worker)}, max {max(per_worker)} of ~200 intervals")
    print(f"  sampler: missed blocks median {med([s['missed_blocks'] for s in stats]):.0f} a run, tick lateness p99 "
          f"{med([s['lateness_p99_us'] for s in stats]):.0f} us; walks waited for their threads "
          f"{med([s['walk_wait_ms'] for s in stats]):.0f} ms a run, abandoned {sum(s['walks_abandoned'] for s in stats)}")
    return 0


def soak():
    """The soak test (not in CI): 1000 profilers started and stopped in a loop for 60 s,
    with the resident size after the first round and at the end (tools/bench/soak.py)."""
    return subprocess.call([sys.executable, os.path.join(ROOT, "tools", "bench", "soak.py"),
                            "--jsprof", release_exe("jsprof")])


def bootstrap_peer():
    """Debian's chromium, node and playwright-core (under BENCH_TOOLS), only for --peer."""
    missing = [pkg for pkg, exe in (("chromium", "chromium"), ("nodejs", "node"), ("npm", "npm"))
               if shutil.which(exe) is None]
    if missing and apt_install(missing):
        return 1
    if not os.path.exists(os.path.join(BENCH_TOOLS, "node_modules", "playwright-core")):
        log(f"installing {PLAYWRIGHT} into {BENCH_TOOLS}")
        if subprocess.call(["npm", "install", "--silent", "--prefix", BENCH_TOOLS, PLAYWRIGHT]) != 0:
            return 1
    return 0


def peer(args, engine="jsprof"):
    """./mach bench --peer chromium [--engine servo] [--quick]: the side-by-side table
    (tools/bench/peer.py, given `args`): jsprof's shell, or jsprof-servo (built by ./mach servo
    build), beside Chromium."""
    if engine == "servo":
        build, exe = servo_build, servo_exe
    else:
        build, exe = build_shell, lambda: release_exe("jsprof")
    rc = bootstrap_build() or bootstrap_peer() or build()
    if rc:
        return rc
    peer_env = dict(os.environ, JSPROF_BENCH_NODE_PATH=os.path.join(BENCH_TOOLS, "node_modules"))
    return subprocess.call([sys.executable, os.path.join(ROOT, "tools", "bench", "peer.py"),
                            "--jsprof", exe(), "--engine", engine, *args], env=peer_env)


def bench(args=()):
    """./mach bench: criterion benchmarks (`args` to those of the profiler core and the profiler
    service), then the page benchmark, then the soak test."""
    rc = (bootstrap_build() or cargo("bench", "-p", "jsprof-profiler", *args) or cargo("bench", "-p", "jsprof-scope", *args)
          or cargo("bench", "-p", "jsprof-export", "--bench", "merge"))
    # The collector's ingest (traces/s, p99 acknowledgement) and `top` over 10M samples.
    rc = rc or cargo("bench", *COLLECTOR_MANIFEST)
    return rc or build_shell() or page_bench() or hoarders_bench() or workers_bench() or soak()


def peer_type(value):
    if value not in PEERS:
        raise argparse.ArgumentTypeError(f"{value!r}: usage: ./mach bench --peer chromium [--engine jsprof|servo] [--quick]")
    return value


def register(commands):
    p = cli.command(
        commands, "bench", "criterion, the page benchmark, the soak test; --peer chromium: side by side",
        lambda ns: peer(ns.args, ns.engine) if ns.peer else bench(ns.args), passthrough=cli.KNOWN,
        check=lambda ns: "--engine goes with --peer chromium" if ns.engine != "jsprof" and not ns.peer else None,
        usage="./mach bench [cargo bench args] | ./mach bench --peer chromium [--engine jsprof|servo] [--quick]",
        description="Criterion benchmarks of the profiler core and the profiler service (the arguments given "
                    "go to these two `cargo bench`es, unchanged), the export merge benchmark (10,000 traces "
                    "into one flame graph), the collector's ingest and `top`, then the page benchmark "
                    "(benches/cpu, 5 alternating runs without and with profiling), the hoarders page (the "
                    "stop() of a profiler beside 100,000 forgotten ones, 5 runs), the spinning workers page "
                    "(8 workers profiling themselves at 1 ms, 3 runs) and the soak test (1000 "
                    "profilers started and stopped for 60 s, tools/bench/soak.py).\n\n"
                    "With --peer chromium: the same page in jsprof and headless Chromium, side by side "
                    "(tools/bench/peer.py, given the other arguments: --quick, 2 pairs per row); installs "
                    "chromium and playwright-core (into $JSPROF_BENCH_TOOLS) only then. With --engine servo "
                    "as well: in jsprof-servo (Servo 0.7.0 with jsprof's patches, built by ./mach servo "
                    "build) instead of jsprof, with issue 38's targets checked at the end.")
    p.add_argument("--peer", metavar="chromium", type=peer_type,
                   help="run the side-by-side comparison with this browser instead")
    p.add_argument("--engine", choices=("jsprof", "servo"), default="jsprof",
                   help="with --peer: the engine beside the browser, jsprof's shell or jsprof-servo")
