"""`./mach servo build|run|test|refresh-patches`: jsprof in Servo 0.7.0 (integrations/servo).
The lay-out of the patched Servo crates, the patch refresher and the build are servo_tree.py's.
"""

import os
import subprocess

from . import cli
from .common import build_shell, log, release_exe
from .servo_tree import SERVO_ROOT, servo_build, servo_check_patches, servo_env, servo_exe, servo_refresh_patches
from .wpt import test_wpt


def servo_run(args):
    rc = servo_build()
    if rc:
        return rc
    return subprocess.call([servo_exe(), *args])


# Set to 1, `jsprof-servo PAGE` runs as `jsprof-servo -M PAGE` (the page in Servo's content
# processes), as JSPROF_MULTIPROCESS=1 does for jsprof (test.py's second pass).
MULTIPROCESS = {"JSPROF_MULTIPROCESS": "1"}


def servo_test(args):
    """jsprof-servo's tests (cargo test in integrations/servo, `args` passed on), then, without
    arguments, our WPT tests in Servo against wpt-metadata/servo/, and then both again with the
    pages in Servo's content processes (JSPROF_MULTIPROCESS=1: `jsprof-servo -M`)."""
    # jsprof too: the tests compare jsprof-servo's traces with jsprof's (JSPROF_BIN).
    rc = build_shell() or servo_build()
    if rc:
        return rc
    cmd = ["cargo", "test", "--release", "--locked", "--manifest-path", os.path.join(SERVO_ROOT, "Cargo.toml"), *args]
    log(" ".join(cmd))
    e = dict(servo_env(), JSPROF_BIN=release_exe("jsprof"))
    rc = subprocess.call(cmd, cwd=SERVO_ROOT, env=e)
    if rc or args:
        return rc
    # Then our WPT tests in Servo, against wpt-metadata/servo/.
    rc = test_wpt(["js-self-profiling", "jsprof-engine"], engine="servo")
    if rc:
        return rc
    # The second pass: with content processes. multiprocess.rs picks each run's mode itself
    # (the first pass ran it), so the others only.
    names = [name for name in servo_test_targets() if name != "multiprocess"]
    tests = [arg for name in names for arg in ("--test", name)]
    cmd = ["cargo", "test", "--release", "--locked", "--manifest-path", os.path.join(SERVO_ROOT, "Cargo.toml"), *tests]
    log("again, with the pages in Servo's content processes (JSPROF_MULTIPROCESS=1): " + " ".join(cmd))
    rc = subprocess.call(cmd, cwd=SERVO_ROOT, env=dict(e, **MULTIPROCESS))
    if rc:
        log(f"jsprof-servo's tests failed with content processes (exit status {rc})")
        return rc
    return test_wpt(["js-self-profiling", "jsprof-engine"], engine="servo", env_extra=MULTIPROCESS)


def servo_test_targets():
    """The names of integrations/servo's test targets (tests/NAME.rs)."""
    tests = os.path.join(SERVO_ROOT, "tests")
    return sorted(name[:-3] for name in os.listdir(tests) if name.endswith(".rs"))


def test_servo_if_built():
    """The Servo tests, when this machine has a Servo build (a cold one takes ~39 minutes on
    2 cores, too long for CI beside the rest); otherwise one line saying so."""
    if not os.path.exists(servo_exe()):
        log("Servo tests not run: no Servo build here (./mach servo build, then ./mach servo test)")
        return 0
    log("a Servo build is here: its tests and our WPT tests in it (./mach servo test)")
    return servo_test([])


def register(commands):
    parser = cli.command(
        commands, "servo", "jsprof in Servo 0.7.0 (integrations/servo): build, run, test, refresh-patches, check-patches",
        description="jsprof in Servo 0.7.0 (integrations/servo, issue 25): the registry's servo-script and "
                    "servo-script-bindings laid out under $JSPROF_SERVO_DIR/crates (default "
                    "~/.cache/jsprof/servo) with integrations/servo/patches applied, and jsprof-servo built "
                    "with a target dir of its own ($JSPROF_SERVO_DIR/target).")
    sub = cli.group(parser)
    cli.command(sub, "build", "lay the patched Servo crates out, then build jsprof-servo", lambda ns: servo_build(),
                description="Installs the Debian packages Servo needs, lays out servo-script and "
                            "servo-script-bindings with the patches (skipped while the patches are unchanged) and "
                            "builds jsprof-servo (cargo build --release --locked).")
    p = cli.command(sub, "run", "build, then run a page in jsprof-servo", lambda ns: servo_run(ns.args),
                    passthrough=cli.REMAINDER, usage="./mach servo run PAGE [jsprof-servo options]",
                    check=lambda ns: None if ns.args else "a PAGE is needed: ./mach servo run PAGE [ARGS]",
                    description="Builds jsprof-servo, then runs it with every argument given, unchanged and in "
                                "its order.")
    cli.command(sub, "test", "jsprof-servo's tests (integrations/servo/tests), then our WPT tests in it",
                lambda ns: servo_test(ns.args), passthrough=cli.KNOWN,
                usage="./mach servo test [FILTER] [cargo test args]",
                description="Builds jsprof and jsprof-servo, runs `cargo test` in integrations/servo (the tests "
                            "compare jsprof-servo's traces with jsprof's) with the arguments given, unchanged; "
                            "without arguments, then our WPT tests js-self-profiling and jsprof-engine in "
                            "jsprof-servo (./mach test-wpt --engine servo), and then both again with the pages "
                            "in Servo's content processes (JSPROF_MULTIPROCESS=1, jsprof-servo -M).")
    cli.command(sub, "refresh-patches", "rewrite integrations/servo/patches from the edited laid-out copies",
                lambda ns: servo_refresh_patches(), description=servo_refresh_patches.__doc__)
    cli.command(sub, "check-patches", "check the patches' headers, that they apply exactly, and that refresh reproduces them",
                lambda ns: servo_check_patches(), description=servo_check_patches.__doc__)
