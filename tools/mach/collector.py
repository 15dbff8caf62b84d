"""The collector (components/collector, field profiles): its build beside jsprof, the npm
packages of its browser tests, and `./mach ballista up|down|status`, a local Ballista cluster
of jsprof-collector processes for `jsprof query|top --ballista`.
"""

import json
import os
import signal
import subprocess
import time

from . import cli
from .common import COLLECTOR_ARGS, COLLECTOR_MANIFEST, ROOT, bootstrap_build, cargo, log, release_exe

COLLECTOR_BIN_ARGS = ["--release", "--bin", "jsprof-collector", *COLLECTOR_MANIFEST]
# `jsprof SUB …` subcommands that jsprof-collector serves (components/shell/src/collector.rs).
COLLECTOR_SUBCOMMANDS = ("collect", "query", "top", "flame", "diff")
# Measured on this 2-core machine kind with SpiderMonkey already built (README, "Two commands").
COLLECTOR_FIRST_BUILD = "~45 min"

# The npm packages of the collector's live tests (components/collector/tests/live.rs: the
# field snippet and the real Datadog and Sentry SDKs in headless Chromium), `npm ci`'d from
# tests/sdk's lock file.
COLLECTOR_SDK = os.environ.get("JSPROF_COLLECTOR_SDK", os.path.expanduser("~/.cache/jsprof/collector-sdk"))
COLLECTOR_PAGE_TOOLS = os.environ.get("JSPROF_PAGE_TOOLS", os.path.expanduser("~/.cache/jsprof/collector-page-tools"))

BALLISTA_DIR = os.environ.get("JSPROF_BALLISTA_DIR", os.path.expanduser("~/.cache/jsprof/ballista"))

# The S3-compatible server of the collector's object-store tests (components/collector/
# tests/s3.rs, decision 0060): crates.io's s3s-fs, an S3 server over a directory, built by
# `cargo install` into a root of its own. 0.14.1: the last release whose rust-version (1.92)
# this toolchain meets (0.15 to 0.17 need 1.96).
S3_TOOLS = os.environ.get("JSPROF_S3_TOOLS", os.path.expanduser("~/.cache/jsprof/s3-tools"))
S3S_FS_VERSION = "0.14.1"


def collector_build():
    """jsprof-collector beside jsprof, saying so in one line the first time (DataFusion)."""
    if not os.path.exists(release_exe("jsprof-collector")):
        log(f"building the collector (DataFusion, first time only, {COLLECTOR_FIRST_BUILD})")
    return cargo("build", *COLLECTOR_BIN_ARGS)


def ensure_collector_npm():
    """The npm packages of the collector's browser tests, each folder's pinned by its
    package-lock.json: the real SDKs, esbuild and playwright-core for the live tests
    (tests/live.rs, tests/sdk), playwright-core for the page test (tests/page.rs)."""
    from .common import toolboot
    boot = toolboot()
    for folder, cache, variable, packages in (
            ("sdk", COLLECTOR_SDK, "JSPROF_COLLECTOR_SDK",
             ["@datadog/browser-rum", "@sentry/browser", "esbuild", "playwright-core"]),
            ("page", COLLECTOR_PAGE_TOOLS, "JSPROF_PAGE_TOOLS", ["playwright-core"])):
        try:
            boot.npm_ci(os.path.join(ROOT, "components", "collector", "tests", folder), cache, packages)
        except boot.Unavailable as e:
            log(f"./mach test: the collector's browser tests (tests/{folder}): {e}")
            return 1
        os.environ[variable] = cache
    return 0


def ensure_s3s_fs():
    """s3s-fs for the collector's S3 tests, installed once (`cargo install --locked`, its own
    build dir, not the workspace's target dir), and named to them in JSPROF_S3S_FS."""
    exe = os.path.join(S3_TOOLS, "bin", "s3s-fs")
    if not os.path.exists(exe):
        log(f"installing s3s-fs {S3S_FS_VERSION} into {S3_TOOLS} (the collector's S3 tests, first time only)")
        e = dict(os.environ)
        e.pop("CARGO_TARGET_DIR", None)
        rc = subprocess.call(["cargo", "install", "s3s-fs", "--version", S3S_FS_VERSION, "--features", "binary",
                              "--locked", "--root", S3_TOOLS], env=e)
        if rc or not os.path.exists(exe):
            log("./mach test: the collector's S3 tests need s3s-fs: cargo install s3s-fs failed")
            return 1
    os.environ["JSPROF_S3S_FS"] = exe
    return 0


def ballista_state():
    """The running cluster's state ({"url", "processes": [{"name", "pid"}]}), or None."""
    try:
        with open(os.path.join(BALLISTA_DIR, "cluster.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ballista_alive(pid):
    """Whether `pid` is still one of our cluster's processes (not a reused pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return any(a.endswith(b"jsprof-collector") for a in argv[:1]) and any(a.startswith(b"ballista-") for a in argv)


def ballista_status_cmd(url, executors):
    exe = release_exe("jsprof-collector")
    return [exe, "ballista-status", "--scheduler", url, "--wait-executors", str(executors), "--timeout", "120"]


def ballista_status():
    state = ballista_state()
    if not state:
        log(f"no cluster ({BALLISTA_DIR}/cluster.json)")
        return 1
    for p in state["processes"]:
        print(f"{p['name']}: pid {p['pid']} {'running' if ballista_alive(p['pid']) else 'gone'}")
    return subprocess.call(ballista_status_cmd(state["url"], 0)[:4])


def ballista_down():
    state = ballista_state()
    if not state:
        log("no cluster to stop")
        return 0
    procs = [p["pid"] for p in state["processes"] if ballista_alive(p["pid"])]
    for pid in procs:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while any(ballista_alive(pid) for pid in procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in procs:
        if ballista_alive(pid):
            os.kill(pid, signal.SIGKILL)
    os.remove(os.path.join(BALLISTA_DIR, "cluster.json"))
    log(f"stopped {len(procs)} process(es)")
    return 0


def ballista_up(executors=2, port=50050):
    state = ballista_state()
    if state and any(ballista_alive(p["pid"]) for p in state["processes"]):
        log(f"a cluster is up at {state['url']} (./mach ballista down first)")
        return 1
    rc = bootstrap_build() or cargo("build", *COLLECTOR_ARGS)
    if rc:
        return rc
    os.makedirs(BALLISTA_DIR, exist_ok=True)
    exe = release_exe("jsprof-collector")
    url = f"df://127.0.0.1:{port}"
    procs = []

    def spawn(name, argv):
        with open(os.path.join(BALLISTA_DIR, f"{name}.log"), "wb") as out:
            p = subprocess.Popen([exe, *argv], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        procs.append({"name": name, "pid": p.pid})
        with open(os.path.join(BALLISTA_DIR, "cluster.json"), "w") as f:
            json.dump({"url": url, "processes": procs}, f)

    spawn("scheduler", ["ballista-scheduler", "--bind", f"127.0.0.1:{port}"])
    # Executors register as they start: the scheduler answers first.
    rc = subprocess.call(ballista_status_cmd(url, 0))
    for k in range(executors):
        if rc:
            break
        flight = port + 1 + 2 * k
        spawn(f"executor{k}", ["ballista-executor", "--scheduler", url, "--bind", f"127.0.0.1:{flight}",
                               "--grpc-port", str(flight + 1), "--work-dir", os.path.join(BALLISTA_DIR, f"work{k}")])
    rc = rc or subprocess.call(ballista_status_cmd(url, executors))
    if rc:
        log(f"the cluster did not come up: see the logs in {BALLISTA_DIR}; ./mach ballista down stops what started")
        return rc
    log(f"up: jsprof query|top --ballista {url} (./mach ballista down stops it)")
    return 0


def register(commands):
    parser = cli.command(
        commands, "ballista", "a local Ballista cluster for `jsprof query|top --ballista` (up, down, status)",
        description="A local Ballista cluster for `jsprof query|top --ballista`: a scheduler and executors, "
                    "each a `jsprof-collector ballista-…` process.\n\nTheir pids, ports and logs are in "
                    "$JSPROF_BALLISTA_DIR (default ~/.cache/jsprof/ballista).")
    sub = cli.group(parser)
    up = cli.command(
        sub, "up", "build the collector, start a scheduler and N executors, wait for them",
        lambda ns: ballista_up(ns.executors, ns.port),
        description="Builds the collector's workspace, then starts `jsprof-collector ballista-scheduler` on "
                    "127.0.0.1:P and N `ballista-executor`s (each on the next two ports), and waits until all "
                    "have registered. Exits 1 if a cluster is up already.")
    up.add_argument("--executors", metavar="N", type=cli.whole_number(), default=2, help="executors (default 2)")
    up.add_argument("--port", metavar="P", type=cli.whole_number(), default=50050,
                    help="the scheduler's port (default 50050)")
    cli.command(sub, "down", "stop the cluster's processes (SIGTERM, SIGKILL after 15 s)", lambda ns: ballista_down())
    cli.command(sub, "status", "the cluster's processes, and the scheduler's answer", lambda ns: ballista_status())
