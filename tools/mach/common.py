"""What every mach command shares: the repository's root, mach's log line, the build
environment (env(), target_dir()), cargo() with its check that the target dir was last built
from this checkout (relocate_target), the Debian packages of the build and apt_install, and
the cargo argument sets of the shell, the whole workspace and the collector's workspace.

One cargo profile (release) serves build, run, test and bench, and the target directory is
persistent ($JSPROF_TARGET_DIR, default ~/.cache/jsprof/target), because SpiderMonkey's
build script takes ~30 minutes on 2 cores and runs once per profile and target directory.

This module imports no other module of mach.
"""

import json
import os
import shutil
import subprocess
import sys

# tools/mach/common.py -> the repository's root (where ./mach is).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APT_PACKAGES = ["clang-19", "libclang-19-dev", "lld-19"]

# What the tests, lint and benches build: the whole main workspace, all targets.
BUILD_ARGS = ["--release", "--workspace", "--all-targets"]
# What `./mach run` and `./mach build` build: the jsprof shell and what it needs, no test,
# bench or example. Cargo's feature resolution gives SpiderMonkey (mozjs_sys) and every unit
# its build depends on the same features and profile in both sets, so either order builds it
# once (`./mach check-units` compares the two unit graphs; ARCHITECTURE.md, "One build of
# SpiderMonkey").
SHELL_ARGS = ["--release", "-p", "jsprof-shell", "--bin", "jsprof"]
# Field profiles (components/collector, issue 27): a workspace of its own, so that DataFusion
# never changes the features mozjs_sys is built with; built into the same target dir, so that
# `jsprof collect|query|top` finds jsprof-collector beside jsprof. Built the first time a
# command needs it (collector.collector_build), not by `./mach run PAGE`.
COLLECTOR_MANIFEST = ["--manifest-path", os.path.join(ROOT, "components", "collector", "Cargo.toml")]
COLLECTOR_ARGS = ["--release", "--workspace", "--all-targets", *COLLECTOR_MANIFEST]


def log(msg):
    print(f"mach: {msg}", file=sys.stderr, flush=True)


def env():
    e = dict(os.environ)
    e.setdefault("CARGO_TARGET_DIR", os.environ.get("JSPROF_TARGET_DIR", os.path.expanduser("~/.cache/jsprof/target")))
    e.setdefault("CC", "clang-19")
    e.setdefault("CXX", "clang++-19")
    e.setdefault("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
    # No prebuilt SpiderMonkey can be downloaded here: build it from source.
    e.setdefault("MOZJS_FROM_SOURCE", "1")
    return e


def target_dir():
    return env()["CARGO_TARGET_DIR"]


def release_exe(name):
    """A binary of the release profile in the target dir (jsprof, jsprof-collector, …)."""
    return os.path.join(target_dir(), "release", name)


def dpkg_missing(packages):
    """Those of `packages` that dpkg does not list as installed."""
    missing = []
    for pkg in packages:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            missing.append(pkg)
    return missing


def missing_apt():
    return dpkg_missing(APT_PACKAGES)


def apt_install(packages):
    log(f"installing {' '.join(packages)}")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    apt_env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        if subprocess.call(sudo + cmd, env=apt_env) != 0:
            log(f"failed: {' '.join(cmd)}")
            return 1
    return 0


def bootstrap_build():
    """What `./mach run` and `./mach build` need: cargo, and clang-19 for SpiderMonkey."""
    if shutil.which("cargo") is None:
        log("cargo is not on PATH: install the Rust toolchain (rustup) first")
        return 1
    missing = missing_apt() if shutil.which("dpkg-query") else []
    if missing and apt_install(missing):
        return 1
    return 0


# Set by `./mach test` once its `cargo test` of the workspace has passed: the jsprof binary it
# built is current, and the steps after it (and the commands they start, such as the docs
# check's `./mach run …`) run it as it is (test.shell_from_tests).
SHELL_FROM_TESTS = "JSPROF_SHELL_FROM_TESTS"


def build_shell():
    """The jsprof shell (SHELL_ARGS): what `./mach build` builds, and every command that runs
    jsprof builds first (but within `./mach test`, which has just built it with its tests)."""
    if os.environ.get(SHELL_FROM_TESTS) == "1" and os.path.exists(release_exe("jsprof")):
        return 0
    return bootstrap_build() or cargo("build", *SHELL_ARGS)


_CHECKED_CHECKOUT = False


def cargo(*args):
    global _CHECKED_CHECKOUT
    if not _CHECKED_CHECKOUT:
        _CHECKED_CHECKOUT = True
        if relocate_target():
            return 1
    cmd = ["cargo", *args]
    # JSPROF_CARGO_TIMINGS=1: cargo's own report of each unit's time (target/cargo-timings/).
    if os.environ.get("JSPROF_CARGO_TIMINGS") and args and args[0] in ("build", "test"):
        cmd.append("--timings")
    log(" ".join(cmd) + f"   (target dir {target_dir()})")
    return subprocess.call(cmd, cwd=ROOT, env=env())


def relocate_target():
    """Cleans the workspace's own units when the target dir was last built from another checkout.

    Cargo keeps a workspace member's units fresh when only the checkout's path changed (its
    fingerprints hash paths relative to the workspace), so a test binary built in another clone
    would still carry that clone's `env!("CARGO_MANIFEST_DIR")` and look for its fixtures there.
    Only the members are cleaned: SpiderMonkey (mozjs_sys) and the other dependencies stay.
    (Here rather than in build.py because cargo() runs it before its first command.)
    """
    stamp = os.path.join(target_dir(), "jsprof-checkout")
    try:
        with open(stamp) as f:
            built_from = f.read().strip()
    except OSError:
        built_from = None
    if built_from == ROOT:
        return 0
    if os.path.isdir(os.path.join(target_dir(), "release")):
        meta = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"],
                              cwd=ROOT, env=env(), capture_output=True, text=True)
        if meta.returncode != 0:
            log(f"cargo metadata failed: {meta.stderr.strip()}")
            return 1
        members = [p["name"] for p in json.loads(meta.stdout)["packages"]]
        log(f"the target dir was last built from {built_from or 'an unknown checkout'}: "
            f"cleaning this workspace's {len(members)} crates (not SpiderMonkey)")
        clean = ["clean", "--release"]
        for m in members:
            clean += ["-p", m]
        if cargo(*clean) != 0:
            return 1
        if cargo("clean", "--release", "-p", "jsprof-collector", "-p", "jsprof-intake", *COLLECTOR_MANIFEST) != 0:
            return 1
    os.makedirs(target_dir(), exist_ok=True)
    with open(stamp, "w") as f:
        f.write(ROOT + "\n")
    return 0


def toolboot():
    """tools/toolboot.py (the test suites' installer of Debian and npm packages)."""
    tools = os.path.join(ROOT, "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import toolboot as module
    return module
