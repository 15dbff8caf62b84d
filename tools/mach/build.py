"""Building and running jsprof: `./mach bootstrap` (everything run and test need), `./mach
doctor` (what is here), `./mach build`, `./mach run`, `./mach codegen` (the WebIDL
bindings) and `./mach check-units` (one SpiderMonkey build serves run, test and lint).
The target dir's relocation check runs in common.cargo().
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

from . import cli
from .collector import (COLLECTOR_SDK, COLLECTOR_SUBCOMMANDS, S3_TOOLS, collector_build, ensure_collector_npm,
                        ensure_s3s_fs)
from .common import (APT_PACKAGES, BUILD_ARGS, ROOT, SHELL_ARGS, apt_install, bootstrap_build, build_shell, cargo,
                     env, log, release_exe, target_dir)
from .servo_tree import SERVO_APT_PACKAGES, servo_exe
from .wpt import WPT_TOOLS, bootstrap_wpt, wpt_python

# What `./mach test` needs beyond the build, from Debian: Chromium (the profiler service's page
# test, the export readers, the collector's live SDK and page tests) and openssl (the WPT
# server's test certificates) and patch (./mach servo check-patches, and mach's tests of the
# Servo lay-out). Node and npm come with the machine; installed if missing.
TEST_APT_PACKAGES = ["chromium", "openssl", "patch"]


def bootstrap():
    """./mach bootstrap: everything `./mach run` and `./mach test` need, installed where missing
    and said as it is installed: the build's Debian packages (clang-19, libclang-19-dev,
    lld-19), the tests' (chromium, openssl, patch, node and npm), the WPT runner's pieces (wptserve from
    PyPI, wpt-runner from npm), Selenium, pytest and WebdriverIO (tools/webdriver-tests),
    speedscope, pprof-format and playwright-core (tools/export-readers) and the collector's
    browser tests' npm packages (the real Sentry and Datadog SDKs) and its S3 tests' server
    (s3s-fs, cargo install). Idempotent; fast when done."""
    rc = bootstrap_build()
    if rc:
        return rc
    missing = [p for p in TEST_APT_PACKAGES if shutil.which(p) is None]
    missing += [pkg for pkg, exe in (("nodejs", "node"), ("npm", "npm")) if shutil.which(exe) is None]
    if missing and apt_install(missing):
        return 1
    rc = bootstrap_wpt()
    for tool in ("webdriver-tests", "export-readers"):
        rc = rc or subprocess.call([sys.executable, os.path.join(ROOT, "tools", tool, "run.py"), "--bootstrap-only"],
                                   env=dict(os.environ, JSPROF_WPT_TOOLS=WPT_TOOLS))
    rc = rc or ensure_collector_npm()
    rc = rc or ensure_s3s_fs()
    if not rc:
        log("bootstrap: everything ./mach run and ./mach test need is here (./mach doctor lists it)")
    return rc


def doctor():
    """./mach doctor: what this machine has and lacks for each command, with versions. Changes
    nothing (./mach bootstrap installs what is missing)."""
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = (r.stdout or r.stderr).strip().splitlines()
        return out[0].strip() if r.returncode == 0 and out else None

    def deb(pkg):
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", pkg], capture_output=True, text=True)
        return r.stdout.split()[-1] if "install ok installed" in r.stdout else None

    def npm_pkg(folder, name):
        try:
            with open(os.path.join(folder, "node_modules", name, "package.json")) as f:
                return json.load(f).get("version")
        except (OSError, ValueError):
            return None

    tools_cache = os.path.expanduser("~/.cache/jsprof")
    rows = [
        ("build", "rustc", first_line(["rustc", "--version"])),
        ("build", "cargo", first_line(["cargo", "--version"])),
        *[("build", p, deb(p)) for p in APT_PACKAGES],
        ("build", "clang-19", first_line(["clang-19", "--version"])),
        ("test", "chromium", first_line([os.environ.get("CHROMIUM", "chromium"), "--version"])),
        ("test", "node", first_line(["node", "--version"])),
        ("test", "npm", first_line(["npm", "--version"])),
        ("test", "python3", first_line([sys.executable, "--version"])),
        ("test", "openssl", first_line(["openssl", "version"])),
        ("test", "wptserve (venv)", first_line([wpt_python(), "-c", "import importlib.metadata as m; print(m.version('wptserve'))"])
         if os.path.exists(wpt_python()) else None),
        ("test", "wpt-runner (npm)", npm_pkg(os.path.join(WPT_TOOLS, "npm"), "wpt-runner")),
        ("test", "selenium (venv)", first_line([wpt_python(), "-c", "import selenium; print(selenium.__version__)"])
         if os.path.exists(wpt_python()) else None),
        ("test", "webdriverio (npm)", npm_pkg(os.environ.get("JSPROF_WEBDRIVER_TOOLS", os.path.join(tools_cache, "webdriver-tools")), "webdriverio")),
        ("test", "speedscope (npm)", npm_pkg(os.environ.get("JSPROF_EXPORT_TOOLS", os.path.join(tools_cache, "export-tools")), "speedscope")),
        ("test", "@sentry/browser (npm)", npm_pkg(COLLECTOR_SDK, "@sentry/browser")),
        ("test", "@datadog/browser-rum (npm)", npm_pkg(COLLECTOR_SDK, "@datadog/browser-rum")),
        ("test", "s3s-fs (cargo install)", first_line([os.path.join(S3_TOOLS, "bin", "s3s-fs"), "--version"])
         if os.path.exists(os.path.join(S3_TOOLS, "bin", "s3s-fs")) else None),
        *[("servo", p, deb(p)) for p in SERVO_APT_PACKAGES],
    ]
    target = target_dir()
    built = lambda path: "built" if os.path.exists(path) else None  # noqa: E731
    mozjs = sorted(d for d in os.listdir(os.path.join(target, "release", "build"))
                   if d.startswith("mozjs_sys-") and os.path.exists(os.path.join(target, "release", "build", d, "output"))
                   ) if os.path.isdir(os.path.join(target, "release", "build")) else []
    rows += [
        ("state", f"SpiderMonkey in {target}", ", ".join(mozjs) or None),
        ("state", "jsprof", built(os.path.join(target, "release", "jsprof"))),
        ("state", "jsprof-collector", built(os.path.join(target, "release", "jsprof-collector"))),
        ("state", "jsprof-servo", built(servo_exe())),
    ]
    width = max(len(name) for _, name, _ in rows)
    missing = 0
    for group, name, version in rows:
        print(f"{group:6} {name:{width}}  {version or 'missing'}")
        missing += version is None and group in ("build", "test")
    print(f"\n{missing} missing for ./mach run and ./mach test" + ("; ./mach bootstrap installs them" if missing else ""))
    return 0


def build(collector=False):
    """./mach build [--collector]: the jsprof shell (and, with --collector, jsprof-collector)."""
    return build_shell() or (collector_build() if collector else 0)


def run(args):
    """./mach run PAGE [jsprof options]: builds the shell (and the collector for `jsprof
    collect|query|top|flame|diff`), then runs jsprof with `args`."""
    rc = build_shell()
    if not rc and args[0] in COLLECTOR_SUBCOMMANDS:
        rc = collector_build()
    if rc:
        return rc
    return subprocess.call([release_exe("jsprof"), *args])


def codegen(check=False):
    """Regenerates the WebIDL bindings (`--check`: fail if the checked-in copy is stale)."""
    # --keep-going: the generator must build even while the bindings it is about to fix do not.
    rc = bootstrap_build()
    if rc:
        return rc
    cargo("build", "--release", "-p", "jsprof-codegen", "--keep-going")
    return subprocess.call([release_exe("jsprof-codegen"), ROOT, *(["--check"] if check else [])])


def unit_graph(*cargo_args):
    """Cargo's unit graph of a command (`--unit-graph`, unstable: RUSTC_BOOTSTRAP=1 lets
    stable cargo print it; nothing is built)."""
    cmd = ["cargo", *cargo_args, "--unit-graph", "-Z", "unstable-options"]
    proc = subprocess.run(cmd, cwd=ROOT, env=dict(env(), RUSTC_BOOTSTRAP="1"), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)["units"]


def unit_identity(units, index, memo):
    """A digest of what cargo hashes a unit's build directory from, recursively: package,
    target, mode, features, profile (but its name, which cargo leaves out) and the same of its
    dependencies."""
    if index not in memo:
        u = units[index]
        profile = {k: v for k, v in u["profile"].items() if k != "name"}
        deps = sorted(unit_identity(units, d["index"], memo) for d in u["dependencies"])
        key = json.dumps([u["pkg_id"], u["target"]["name"], u["target"]["kind"], u["mode"], sorted(u["features"]),
                          profile, u.get("platform"), deps], sort_keys=True)
        memo[index] = hashlib.sha256(key.encode()).hexdigest()
    return memo[index]


def check_units():
    """./mach check-units: SpiderMonkey is built once whatever is built first. The unit that runs
    mozjs_sys's build script (and so everything it is built from) must be the same in
    `./mach run`'s build, the tests' and lint's; otherwise one of them would build SpiderMonkey
    again (~15 min) into a second mozjs_sys-* directory."""
    sets = {"./mach run (build of the shell)": ["build", *SHELL_ARGS],
            "./mach test (cargo test)": ["test", *BUILD_ARGS, "--no-run"],
            "./mach lint (cargo clippy)": ["check", *BUILD_ARGS]}
    found = {}
    try:
        for name, args in sets.items():
            units = unit_graph(*args)
            memo = {}
            found[name] = {unit_identity(units, i, memo) for i, u in enumerate(units)
                           if u["mode"] == "run-custom-build" and "#mozjs_sys@" in u["pkg_id"]}
    except (RuntimeError, ValueError, KeyError) as e:
        log(f"check-units: {e}")
        return 1
    first_name, first = next(iter(found.items()))
    bad = [name for name, ids in found.items() if len(ids) != 1 or ids != first]
    if bad:
        log(f"check-units: mozjs_sys's build script runs as a different unit in {', '.join(bad)} "
            f"than in {first_name}: a dependency's features or the profile differ, and SpiderMonkey "
            f"would be built twice. Compare `cargo tree -e features -i mozjs_sys` in each.")
        return 1
    log(f"check-units: one SpiderMonkey build serves {', '.join(found)}")
    return 0


def register(commands):
    cli.command(commands, "bootstrap", "install what run and test need and this machine lacks (idempotent, fast when done)", lambda ns: bootstrap(), description=bootstrap.__doc__)
    cli.command(commands, "doctor", "what this machine has and lacks for each command, with versions "
                "(changes nothing)", lambda ns: doctor(), description=doctor.__doc__)
    p = cli.command(
        commands, "build", "build the jsprof shell (--collector: jsprof-collector too)",
        lambda ns: build(ns.collector),
        description="Builds the jsprof shell (cargo build " + " ".join(SHELL_ARGS) + ") into the persistent "
                    "target dir ($JSPROF_TARGET_DIR, default ~/.cache/jsprof/target), and with --collector "
                    "jsprof-collector beside it (its first build takes ~20 min).")
    p.add_argument("--collector", action="store_true", help="jsprof-collector too (components/collector)")
    p = cli.command(
        commands, "run", "build, then run a page (or `jsprof collect|query|top|…`) in the jsprof shell",
        lambda ns: run(ns.args), passthrough=cli.REMAINDER, usage="./mach run PAGE|SUBCOMMAND [jsprof options]",
        check=lambda ns: None if ns.args else "a PAGE is needed: ./mach run PAGE [jsprof options]",
        description="Builds the jsprof shell, then runs it with every argument given, unchanged and in its "
                    "order (`./mach run -M --pref x=1 PAGE --trace-out t.json`). jsprof's subcommands "
                    "collect, query, top, flame and diff are jsprof-collector's: it is built first too.\n\n"
                    "-h here is mach's; jsprof's own: `./mach run PAGE --help`, or "
                    "$JSPROF_TARGET_DIR/release/jsprof --help.")
    p = cli.command(commands, "codegen", "regenerate the WebIDL bindings from webidl/ (--check: fail if stale)",
                    lambda ns: codegen(ns.check), description=codegen.__doc__)
    p.add_argument("--check", action="store_true", help="fail if the checked-in bindings are stale; change nothing")
    cli.command(commands, "check-units", "check that one SpiderMonkey build serves run, test and lint (builds nothing)", lambda ns: check_units(), description=check_units.__doc__)
