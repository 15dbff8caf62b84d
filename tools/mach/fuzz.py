"""`./mach fuzz`: coverage-guided fuzzing of jsprof's parsers (fuzz/README.md). libFuzzer
binaries built on stable Rust with LLVM's SanitizerCoverage passes, in a crate of their own
(fuzz/targets) and a target dir of their own, so that the instrumentation never reaches the
main build.
"""

import os
import re
import shutil
import subprocess
import sys

from . import cli, verified
from .common import ROOT, apt_install, log

FUZZ_DIR = os.path.join(ROOT, "fuzz")
FUZZ_CACHE = os.path.expanduser("~/.cache/jsprof")
FUZZ_TARGET_DIR = os.environ.get("JSPROF_FUZZ_TARGET_DIR", os.path.join(FUZZ_CACHE, "fuzz-target"))
FUZZ_RUSTFLAGS = " ".join([
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "--cfg fuzzing",
])  # debug assertions and overflow checks: fuzz/targets/Cargo.toml's profile


def fuzz_targets():
    """The fuzz binaries, from fuzz/targets/fuzz_targets/*.rs."""
    src = os.path.join(FUZZ_DIR, "targets", "fuzz_targets")
    return sorted(f[:-3] for f in os.listdir(src) if f.endswith(".rs"))


def host_triple():
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("host: "))


def fuzz_build(triple):
    if shutil.which("cargo") is None:
        log("cargo is not on PATH: install the Rust toolchain (rustup) first")
        return 1
    if shutil.which("clang-19") is None and apt_install(["clang-19"]):
        return 1
    e = dict(os.environ, CC="clang-19", CXX="clang++-19", RUSTFLAGS=FUZZ_RUSTFLAGS)
    e.pop("CARGO_TARGET_DIR", None)
    # --target keeps RUSTFLAGS off build scripts and proc macros.
    cmd = ["cargo", "build", "--release", "--target", triple,
           "--manifest-path", os.path.join(FUZZ_DIR, "targets", "Cargo.toml"), "--target-dir", FUZZ_TARGET_DIR]
    log(" ".join(cmd) + "   (instrumented)")
    return subprocess.call(cmd, cwd=ROOT, env=e)


def fuzz_stats(log_text):
    """libFuzzer's -print_final_stats=1 lines (stat::NAME: VALUE) and its artifact, if any."""
    stats = dict(re.findall(r"^stat::(\w+):\s*(\d+)", log_text, re.M))
    artifacts = re.findall(r"Test unit written to (\S+)", log_text)
    return stats, (artifacts[-1] if artifacts else None)


def fuzz_run(triple, target, seconds, extra):
    """Runs one target; returns (summary line, whether it crashed)."""
    exe = os.path.join(FUZZ_TARGET_DIR, triple, "release", target)
    work = os.path.join(FUZZ_CACHE, "fuzz-corpus", target)
    artifacts = os.path.join(FUZZ_CACHE, "fuzz-artifacts", target)
    seeds = os.path.join(FUZZ_DIR, "corpus", target)
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    os.makedirs(seeds, exist_ok=True)
    log_path = os.path.join(artifacts, "last-run.log")
    # libFuzzer adds new inputs to the first directory only: the work corpus, seeded from
    # the committed seeds read alongside it.
    # The test pages (HTML, scripts, .headers sidecars) are seeds too, read where they are
    # rather than copied into fuzz/corpus.
    if target in ("html_document", "symbolizer", "headers_sidecar"):
        seeds = [seeds, os.path.join(ROOT, "tests", "pages"), os.path.join(ROOT, "tests", "wpt")]
    else:
        seeds = [seeds]
    cmd = [exe, work, *seeds, f"-max_total_time={seconds}", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/", "-timeout=30", "-rss_limit_mb=2048", *extra]
    log(f"fuzzing {target} for {seconds} s: {' '.join(cmd)}")
    log(f"  full log: {log_path}")
    keep = ("INITED", "pulse", "DONE", "ERROR", "panicked", "==", "Test unit written", "SUMMARY", "Done")
    with open(log_path, "w") as out:
        proc = subprocess.Popen(cmd, cwd=artifacts, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        lines = []
        for line in proc.stdout:
            out.write(line)
            lines.append(line)
            if any(k in line for k in keep):
                sys.stderr.write(f"  {target}: {line}")
        rc = proc.wait()
    stats, artifact = fuzz_stats("".join(lines))
    files = [os.path.join(work, f) for f in os.listdir(work)]
    size = sum(os.path.getsize(f) for f in files)
    execs = stats.get("number_of_executed_units", "?")
    rate = stats.get("average_exec_per_sec", "?")
    crashed = rc != 0 or artifact is not None
    result = f"CRASH: {artifact or f'exit {rc}, see {log_path}'}" if crashed else "no crash"
    summary = (f"{target}: {execs} executions ({rate}/s), corpus {len(files)} inputs ({size} bytes), "
               f"{stats.get('new_units_added', '?')} new; {result}")
    return summary, crashed


def fuzz(target, seconds=60, extra=()):
    """./mach fuzz TARGET|all [--time S] [-- LIBFUZZER_ARGS]"""
    targets = fuzz_targets()
    chosen = targets if target == "all" else [target]
    # The smoke run CI makes (`all`, 10 s or more each, no extra libFuzzer options) is skipped
    # under JSPROF_CI_SKIP_VERIFIED=1 when its inputs are those it last passed on, and recorded
    # when it passes (tools/mach/verified.py).
    smoke = target == "all" and seconds >= 10 and not extra
    if smoke and verified.skip("fuzz-smoke"):
        return 0
    triple = host_triple()
    rc = fuzz_build(triple)
    if rc:
        return rc
    summaries, crashes = [], 0
    for name in chosen:
        summary, crashed = fuzz_run(triple, name, seconds, list(extra))
        summaries.append(summary)
        crashes += crashed
    print("\nfuzzing summary:")
    for s in summaries:
        print(f"  {s}")
    if crashes:
        print("reproduce a crash: BINARY ARTIFACT (binaries in "
              f"{os.path.join(FUZZ_TARGET_DIR, triple, 'release')}); then fuzz/README.md, 'A crash'")
    if not crashes and smoke:
        verified.record("fuzz-smoke")
    return 1 if crashes else 0


def run(ns):
    if ns.list:
        print("\n".join(fuzz_targets()))
        return 0
    return fuzz(ns.target, ns.time, ns.args)


def check(ns):
    """A target is needed (but not with --list), and must be one of fuzz/targets' or `all`."""
    if ns.list:
        return None
    targets = fuzz_targets()
    if ns.target is None:
        return f"a TARGET or all is needed; targets: {', '.join(targets)}"
    if ns.target != "all" and ns.target not in targets:
        return f"no fuzz target {ns.target!r}; targets: {', '.join(targets)}"
    return None


def register(commands):
    p = cli.command(
        commands, "fuzz", "coverage-guided fuzzing of a parser (60 s per target; --list names them)", run,
        passthrough=cli.AFTER_DASHES, check=check,
        usage="./mach fuzz TARGET|all [--time S] [-- LIBFUZZER_ARGS] | ./mach fuzz --list",
        description="Builds the instrumented fuzz binaries (fuzz/targets, target dir $JSPROF_FUZZ_TARGET_DIR, "
                    "default ~/.cache/jsprof/fuzz-target), then fuzzes TARGET (or each target in turn) for S "
                    "seconds with its corpus in ~/.cache/jsprof/fuzz-corpus and fuzz/corpus; exits 1 if one "
                    "crashed. Everything after -- goes to libFuzzer, unchanged. See fuzz/README.md.")
    p.add_argument("target", nargs="?", metavar="TARGET|all", help="a fuzz target (--list names them), or all")
    p.add_argument("--time", metavar="S", type=cli.whole_number(0, "takes a number of seconds"), default=60,
                   help="seconds per target (default 60)")
    p.add_argument("--list", action="store_true", help="print the targets and exit")
