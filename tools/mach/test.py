"""`./mach test`, everything CI runs, and the suites it is made of that run on their own:
`./mach test-multiprocess` (the second pass, every page in a content process),
`./mach test-export-readers` and `./mach test-webdriver`. mach's own tests (tools/mach/tests)
run first.
"""

import json
import os
import subprocess
import sys

from . import cli
from .build import bootstrap, check_units
from .collector import collector_build, ensure_collector_npm, ensure_s3s_fs
from .lint import docs_check
from . import verified
from .common import (SHELL_FROM_TESTS, BUILD_ARGS, COLLECTOR_ARGS, ROOT, bootstrap_build, build_shell, cargo, env, log,
                     release_exe, toolboot)
from .servo import test_servo_if_built
from .servo_tree import servo_build, servo_check_patches, servo_exe
from .wpt import WPT_TOOLS, engine_type, test_wpt

MACH_TESTS = os.path.join(ROOT, "tools", "mach", "tests")


def mach_tests():
    """mach's own tests (argument parsing, the Servo lay-out): quiet unless one fails."""
    cmd = [sys.executable, "-B", "-m", "unittest", "discover", "-s", MACH_TESTS]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        log(f"mach's own tests failed: python3 -m unittest discover -s {os.path.relpath(MACH_TESTS, ROOT)}")
    return proc.returncode


def test(args=(), repeat=1, load=0):
    """The Servo patches' check (./mach servo check-patches, no build), the Rust tests, the
    exports read by others' readers (tools/export-readers), jsprof
    driven by Selenium and WebdriverIO (tools/webdriver-tests), our WPT tests (tests/wpt),
    then the docs check (tools/docs_check.py: every path the docs name exists, and the
    commands marked runnable run).

    --repeat N runs that whole sequence N times, stopping at the first failure (and saying
    which run it was); --load K keeps K busy processes (one shell loop each, a core's worth of
    work) running meanwhile, to check that the tests pass on a loaded machine. Other
    arguments go to `cargo test`."""
    args = list(args)
    rc = mach_tests() or bootstrap() or servo_check_patches()
    if rc:
        return rc
    with busy_processes(load):
        for run_number in range(1, repeat + 1):
            if repeat > 1:
                log(f"test run {run_number} of {repeat}" + (f", {load} busy processes beside it" if load else ""))
            rc = (ensure_chromium() or check_units() or cargo("test", *BUILD_ARGS, *args)
                  or shell_from_tests() or test_collector(args)
                  or test_export_readers() or test_webdriver() or test_wpt([])
                  or docs_check([]))
            # With a test filter only the filtered cargo tests run, in one mode.
            if not rc and not args:
                rc = test_multiprocess() or test_servo_if_built()
            if rc:
                if repeat > 1:
                    log(f"test run {run_number} of {repeat} failed (exit status {rc})")
                return rc
    if repeat > 1:
        log(f"all {repeat} test runs passed")
    return 0


def shell_from_tests():
    """The jsprof binary `cargo test` just built (its integration tests need it) is the one the
    later steps run: building the shell alone (SHELL_ARGS) would unify features over fewer
    packages (serde_json's float_roundtrip is a dev-dependency's, for one) and rebuild jsprof's
    crates, and the next `cargo test` would rebuild them back. Never SpiderMonkey either way
    (./mach check-units)."""
    os.environ[SHELL_FROM_TESTS] = "1"
    return 0


def test_collector(args):
    """The collector's build and tests (components/collector, a workspace of its own). Under
    JSPROF_CI_SKIP_VERIFIED=1 (CI) they are skipped when their inputs are those they last
    passed on (tools/mach/verified.py); a full pass here records them."""
    if not args and verified.skip("collector-test"):
        return 0
    # The shell too: tests/collect.rs runs `jsprof collect`, and a target dir last built from
    # another checkout has just had the shell's units cleaned (common.relocate_target).
    rc = (ensure_collector_npm() or ensure_s3s_fs() or build_shell() or collector_build()
          or cargo("test", *COLLECTOR_ARGS, *args))
    if not rc and not args:
        verified.record("collector-test")
    return rc


class busy_processes:
    """`count` processes that keep a core busy each (`sh -c 'while :; do :; done'`), for
    as long as the `with` block runs; ended by their process ids."""

    def __init__(self, count):
        self.count = count
        self.procs = []

    def __enter__(self):
        for _ in range(self.count):
            self.procs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"], stdin=subprocess.DEVNULL))
        if self.procs:
            log(f"{len(self.procs)} busy processes: {' '.join(str(p.pid) for p in self.procs)}")
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()
        return False


# Set to 1, `jsprof PAGE` runs as `jsprof -M PAGE` (every page in a content process).
MULTIPROCESS = {"JSPROF_MULTIPROCESS": "1"}


def test_multiprocess():
    """The second pass: the shell's integration tests (components/shell/tests), the WebDriver
    clients and our WPT tests again, with every page jsprof runs in a content process of its
    own (JSPROF_MULTIPROCESS=1 makes `jsprof PAGE` behave as `jsprof -M PAGE`)."""
    rc = bootstrap_build()
    if rc:
        return rc
    binaries = shell_test_binaries()
    if binaries is None:
        return 1
    rc = check_multiprocess()
    if rc:
        return rc
    log("the shell's integration tests again, with content processes (JSPROF_MULTIPROCESS=1)")
    for name, exe in binaries:
        log(f"  {name}")
        rc = subprocess.call([exe], cwd=os.path.join(ROOT, "components", "shell"),
                             env=dict(env(), **MULTIPROCESS))
        if rc:
            log(f"{name} failed with content processes (exit status {rc})")
            return rc
    return test_webdriver(env_extra=MULTIPROCESS) or test_wpt([], env_extra=MULTIPROCESS)


def check_multiprocess():
    """That JSPROF_MULTIPROCESS=1 does put the page in a content process (else the second
    pass would only run the first again): its --profile-stats line names a pid that is not
    the browser's."""
    exe = release_exe("jsprof")
    page = os.path.join(ROOT, "tests", "pages", "multiprocess", "count.html")
    proc = subprocess.Popen([exe, page, "--profile-stats"], env=dict(env(), **MULTIPROCESS),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate()
    pids = []
    for line in err.splitlines():
        try:
            pids.append(json.loads(line)["pid"])
        except (ValueError, KeyError, TypeError):
            continue
    if proc.returncode or len(pids) != 1 or pids[0] == proc.pid:
        log(f"JSPROF_MULTIPROCESS=1 did not run the page in a content process "
            f"(exit status {proc.returncode}, the page's pids {pids}, the browser's {proc.pid}):\n{err[-2000:]}")
        return 1
    log(f"JSPROF_MULTIPROCESS=1: the page ran in content process {pids[0]}, its browser is {proc.pid}")
    return 0


def shell_test_binaries():
    """(name, path) of the shell's integration test binaries, built as `cargo test` builds
    them (the same unit set: nothing is rebuilt)."""
    cmd = ["cargo", "test", *BUILD_ARGS, "--no-run", "--message-format=json"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env(), stdout=subprocess.PIPE, text=True)
    if proc.returncode:
        log(f"{' '.join(cmd)} failed (exit status {proc.returncode})")
        return None
    binaries = []
    for line in proc.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        target = message.get("target") or {}
        # multiprocess.rs chooses each run's mode itself: the first pass ran it in both.
        if (message.get("reason") == "compiler-artifact" and message.get("executable")
                and target.get("kind") == ["test"] and target.get("name") != "multiprocess"
                and message.get("package_id", "").find("/components/shell") >= 0):
            binaries.append((target["name"], message["executable"]))
    return sorted(binaries)


def ensure_chromium():
    """Debian's chromium, whose page the profiler service's test has POST to its port
    (components/shell/tests/scope.rs)."""
    if os.path.exists(os.environ.get("CHROMIUM", "/usr/bin/chromium")):
        return 0
    boot = toolboot()
    try:
        boot.apt_install(["chromium"])
    except boot.Unavailable as e:
        log(f"./mach test: chromium: {e}")
        return 1
    return 0


def test_export_readers():
    """jsprof's exports opened by readers nobody here wrote: speedscope and the report in
    headless Chromium, pprof-format (installs chromium and the npm packages on first use)."""
    rc = build_shell()
    if rc:
        return rc
    return subprocess.call([sys.executable, os.path.join(ROOT, "tools", "export-readers", "run.py"),
                            "--jsprof", release_exe("jsprof")])


def test_webdriver(args=(), env_extra=None, engine="jsprof"):
    """jsprof's WebDriver server driven by Selenium and WebdriverIO (tools/webdriver-tests;
    installs them on first use), in jsprof, or with engine "servo" in jsprof-servo (built by
    `./mach servo build`)."""
    if engine == "servo":
        rc = servo_build()
        exe = servo_exe()
    else:
        rc = build_shell()
        exe = release_exe("jsprof")
    if rc:
        return rc
    return subprocess.call([sys.executable, os.path.join(ROOT, "tools", "webdriver-tests", "run.py"),
                            "--jsprof", exe, "--engine", engine, *args],
                           env=dict(os.environ, JSPROF_WPT_TOOLS=WPT_TOOLS, **(env_extra or {})))


def register(commands):
    p = cli.command(
        commands, "test", "everything CI runs: mach's, Rust, export-reader, WebDriver and WPT tests, then -M",
        lambda ns: test(ns.args, ns.repeat, ns.load), passthrough=cli.KNOWN,
        usage="./mach test [--repeat N] [--load K] [cargo test args]",
        description="mach's own tests (tools/mach/tests, quiet unless one fails), ./mach bootstrap, then: "
                    "./mach check-units, cargo test of the workspace and of the collector's, "
                    "./mach test-export-readers, ./mach test-webdriver, ./mach test-wpt, then "
                    "./mach test-multiprocess and, when a Servo build is here, ./mach servo test.\n\n"
                    "Every other argument goes to both `cargo test`s, unchanged and in its order (with any, "
                    "the second pass and Servo's tests are left out): `./mach test -p jsprof-profiler -- "
                    "--nocapture`.")
    p.add_argument("--repeat", metavar="N", type=cli.whole_number(1, "needs a whole number (1 or more)"), default=1,
                   help="run the whole sequence N times in a row, stopping at the first failure")
    p.add_argument("--load", metavar="K", type=cli.whole_number(0, "needs a whole number"), default=0,
                   help="with K busy processes beside it (a loaded machine)")
    cli.command(commands, "test-multiprocess", "the shell's, WebDriver and WPT tests again, every page in a content process", lambda ns: test_multiprocess(),
                description=test_multiprocess.__doc__)
    cli.command(commands, "test-export-readers", "the exports read by speedscope, pprof-format and headless Chromium", lambda ns: test_export_readers(),
                description=test_export_readers.__doc__)
    p = cli.command(commands, "test-webdriver", "Selenium (PyPI) and WebdriverIO (npm) drive jsprof --webdriver "
                "(tools/webdriver-tests)", lambda ns: test_webdriver(ns.args, engine=ns.engine), passthrough=cli.KNOWN,
                usage="./mach test-webdriver [--engine jsprof|servo] [-k EXPR] [--no-smoke] [--verbose] [-- PYTEST_ARGS]",
                description="Builds jsprof (with --engine servo: jsprof-servo, ./mach servo build), then runs "
                            "tools/webdriver-tests/run.py against it with every other argument given, "
                            "unchanged: -k EXPR (the Selenium tests pytest's -k selects), --no-smoke (no "
                            "WebdriverIO), --verbose, and after -- pytest's own. Installs Selenium, pytest and "
                            "WebdriverIO on first use.")
    p.add_argument("--engine", type=engine_type, default="jsprof", metavar="jsprof|servo",
                   help="the browser the tests drive (default jsprof)")
