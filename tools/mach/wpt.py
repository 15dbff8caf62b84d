"""Our web-platform-tests (tests/wpt, expectations in wpt-metadata/): `./mach test-wpt` runs
them in jsprof or, with `--engine servo`, in jsprof-servo; `./mach update-wpt` rewrites the
expectations from a --log-json file. The runner is tools/wpt/run.py; its pieces (wptserve in a
virtualenv, testharness.js from the npm package wpt-runner) are installed here on first use.
"""

import argparse
import os
import shutil
import subprocess
import sys

from . import cli
from .common import ROOT, apt_install, bootstrap_build, build_shell, log, release_exe
from .servo_tree import servo_build, servo_exe

# The WPT runner's pieces (not committed): wptserve in a virtualenv, and testharness.js,
# idlharness.js and webidl2.js from the npm package wpt-runner.
WPT_TOOLS = os.environ.get("JSPROF_WPT_TOOLS", os.path.expanduser("~/.cache/jsprof/wpt-tools"))
WPTSERVE = "wptserve==4.0.3"
WPT_RUNNER = "wpt-runner@7.0.0"
ENGINES = ("jsprof", "servo")


def wpt_python():
    return os.path.join(WPT_TOOLS, "venv", "bin", "python")


def bootstrap_wpt():
    """wptserve (PyPI) and wpt-runner (npm) under WPT_TOOLS, once."""
    python = wpt_python()
    if subprocess.call([python, "-c", "import wptserve"], stderr=subprocess.DEVNULL) if os.path.exists(python) else True:
        log(f"installing {WPTSERVE} into {WPT_TOOLS}/venv")
        if subprocess.call([sys.executable, "-m", "venv", os.path.join(WPT_TOOLS, "venv")]) != 0:
            return 1
        if subprocess.call([python, "-m", "pip", "install", "-q", WPTSERVE]) != 0:
            return 1
    harness = os.path.join(WPT_TOOLS, "npm", "node_modules", "wpt-runner", "testharness", "testharness.js")
    if not os.path.exists(harness):
        if shutil.which("npm") is None and apt_install(["nodejs", "npm"]):
            return 1
        log(f"installing {WPT_RUNNER} into {WPT_TOOLS}/npm")
        if subprocess.call(["npm", "install", "--silent", "--prefix", os.path.join(WPT_TOOLS, "npm"), WPT_RUNNER]) != 0:
            return 1
    if shutil.which("openssl") is None and apt_install(["openssl"]):
        return 1
    return 0


def run_wpt(args, engine="jsprof", env_extra=None):
    """The WPT runner (tools/wpt/run.py, given `args`) against jsprof, or with engine "servo"
    against jsprof-servo (built by `./mach servo build`), whose expectations are
    wpt-metadata/servo/."""
    args = list(args)
    if engine == "servo":
        rc = bootstrap_wpt() or servo_build()
        if rc:
            return rc
        exe = servo_exe()
        if "--metadata" not in args and "--wpt-root" not in args:
            args += ["--metadata", os.path.join(ROOT, "wpt-metadata", "servo")]
        wpt_env = dict(os.environ, JSPROF_WPT_TOOLS=WPT_TOOLS, **(env_extra or {}))
        return subprocess.call([wpt_python(), os.path.join(ROOT, "tools", "wpt", "run.py"), "--jsprof", exe, *args],
                               env=wpt_env)
    rc = bootstrap_build() or bootstrap_wpt() or build_shell()
    if rc:
        return rc
    exe = release_exe("jsprof")
    wpt_env = dict(os.environ, JSPROF_WPT_TOOLS=WPT_TOOLS, **(env_extra or {}))
    return subprocess.call([wpt_python(), os.path.join(ROOT, "tools", "wpt", "run.py"), "--jsprof", exe, *args], env=wpt_env)


def test_wpt(args=(), engine="jsprof", env_extra=None):
    """./mach test-wpt [--engine jsprof|servo] [PATH...] [--wpt-root DIR] [--exclude-tentative] [--log-json FILE]"""
    rc = bootstrap_wpt()
    # The runner's own unit tests first (quiet unless they fail).
    rc = rc or subprocess.call([wpt_python(), "-m", "unittest", "-q", os.path.join("tools", "wpt", "test_runner.py")],
                               cwd=ROOT, env=dict(os.environ, JSPROF_WPT_TOOLS=WPT_TOOLS))
    return rc or run_wpt(args, engine, env_extra)


def update_wpt(args, engine="jsprof"):
    """./mach update-wpt LOG [--wpt-root DIR]: rewrite wpt-metadata/ from a --log-json file."""
    return run_wpt(["--update", *args], engine)


def engine_type(value):
    if value not in ENGINES:
        raise argparse.ArgumentTypeError(f"{value!r}: expected jsprof or servo")
    return value


RUNNER_OPTIONS = """\
Passed on to tools/wpt/run.py, in their order (all but --engine):
  PATH...              tests or folders, relative to the tree (default: all of it)
  --wpt-root DIR       another tree (a web-platform-tests checkout); expectations then
                       wpt-metadata/upstream
  --exclude-tentative  leave out the .tentative. tests (--include-tentative: keep them)
  --log-json FILE      every result as JSON lines (./mach update-wpt reads it)
  --metadata DIR       the expectations' directory
  --serve              only serve the tree, and print how to run a test by hand
"""


def register(commands):
    p = cli.command(
        commands, "test-wpt", "our web-platform-tests (tests/wpt) in jsprof, or with --engine servo in jsprof-servo",
        lambda ns: test_wpt(ns.args, ns.engine), passthrough=cli.KNOWN,
        usage="./mach test-wpt [--engine jsprof|servo] [PATH...] [--wpt-root DIR] [--exclude-tentative] "
              "[--log-json FILE]",
        description="The WPT runner's own unit tests (quiet unless they fail), then our web-platform-tests "
                    "(tests/wpt), or those of --wpt-root DIR, against jsprof (built first), or with --engine "
                    "servo against jsprof-servo (./mach servo build; expectations wpt-metadata/servo/).\n\n"
                    "Installs wptserve (PyPI) and wpt-runner (npm) into $JSPROF_WPT_TOOLS "
                    "(default ~/.cache/jsprof/wpt-tools) on first use.",
        epilog=RUNNER_OPTIONS)
    p.add_argument("--engine", type=engine_type, default="jsprof", metavar="jsprof|servo",
                   help="the browser the tests run in (default jsprof)")
    p = cli.command(
        commands, "update-wpt", "rewrite wpt-metadata/ expectations from a --log-json file",
        lambda ns: update_wpt(ns.args, ns.engine), passthrough=cli.KNOWN,
        check=lambda ns: None if ns.args else "a LOG (a --log-json file) is needed", usage="./mach update-wpt LOG [--wpt-root DIR] [--engine jsprof|servo]",
        description="Rewrites the expectations (wpt-metadata/, with --engine servo wpt-metadata/servo/, with "
                    "--wpt-root wpt-metadata/upstream) from the results in LOG, a file that ./mach test-wpt "
                    "--log-json wrote. Everything but --engine is passed on to tools/wpt/run.py --update.")
    p.add_argument("--engine", type=engine_type, default="jsprof", metavar="jsprof|servo",
                   help="whose expectations (default jsprof)")
