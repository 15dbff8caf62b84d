"""`./mach lint` (rustfmt, clippy -D warnings and the prelude lint, over the main workspace, the
collector's and, when a Servo build is here, integrations/servo) and `./mach docs-check`
(tools/docs_check.py: the commands and paths the README and the guides show).
"""

import os
import subprocess
import sys

from . import cli, verified
from .common import BUILD_ARGS, COLLECTOR_ARGS, COLLECTOR_MANIFEST, ROOT, bootstrap_build, cargo, log
from .servo_tree import SERVO_ROOT, servo_env, servo_exe

DOCS_CHECK = os.path.join(ROOT, "tools", "docs_check.py")

# The prelude lint's own tests (its rules, and tests/prelude_lint.rs on the real prelude).
PRELUDE_LINT_ARGS = ["--release", "-p", "jsprof-prelude-lint"]


def lint():
    rc = bootstrap_build()
    rc = rc or cargo("fmt", "--all", "--", "--check")
    rc = rc or cargo("clippy", *BUILD_ARGS, "--", "-D", "warnings")
    rc = rc or lint_collector()
    # The prelude lint (tools/prelude-lint, a development crate nothing links): no function
    # of the prelude reaches a built-in a page can replace. Also part of ./mach test.
    rc = rc or cargo("test", *PRELUDE_LINT_ARGS)
    return rc or lint_servo_if_built()


def lint_collector():
    """rustfmt --check and clippy -D warnings over the collector's workspace. Under
    JSPROF_CI_SKIP_VERIFIED=1 (CI) skipped when its inputs are those it last passed on
    (tools/mach/verified.py); a pass here records them."""
    if verified.skip("collector-lint"):
        return 0
    rc = cargo("fmt", "--all", *COLLECTOR_MANIFEST, "--", "--check")
    rc = rc or cargo("clippy", *COLLECTOR_ARGS, "--", "-D", "warnings")
    if not rc:
        verified.record("collector-lint")
    return rc


def lint_servo_if_built():
    """rustfmt and clippy -D warnings on integrations/servo (jsprof-servo and its tests; the
    patched Servo crates are dependencies, not linted), when a Servo build is here: without
    one, clippy would first check Servo's ~800 crates."""
    if not os.path.exists(servo_exe()):
        log("integrations/servo not linted: no Servo build here")
        return 0
    manifest = ["--manifest-path", os.path.join(SERVO_ROOT, "Cargo.toml")]
    rc = subprocess.call(["cargo", "fmt", *manifest, "--", "--check"], cwd=SERVO_ROOT, env=servo_env())
    return rc or subprocess.call(["cargo", "clippy", "--release", "--locked", "--all-targets", *manifest,
                                  "--", "-D", "warnings"], cwd=SERVO_ROOT, env=servo_env())


def docs_check(args):
    """python3 tools/docs_check.py ARGS, or exit 2 if this checkout has no such script."""
    if not os.path.isfile(DOCS_CHECK):
        log(f"docs-check: {os.path.relpath(DOCS_CHECK, ROOT)} is not in this checkout (issue 39 adds it)")
        return 2
    return subprocess.call([sys.executable, DOCS_CHECK, *args])


def register(commands):
    cli.command(commands, "lint", "cargo fmt --check, cargo clippy -D warnings, the prelude lint",
                lambda ns: lint(),
                description="rustfmt --check and clippy -D warnings over the main workspace and the collector's, "
                            "the prelude lint (cargo test -p jsprof-prelude-lint), then rustfmt and clippy over "
                            "integrations/servo when a Servo build is here.")
    cli.command(commands, "docs-check", "check the commands and paths the README and the guides show "
                "(tools/docs_check.py)", lambda ns: docs_check(ns.args), passthrough=cli.REMAINDER,
                usage="./mach docs-check [ARGS]",
                description="Runs python3 tools/docs_check.py with every argument given, unchanged (-h before "
                            "them is mach's). Exits 2 if this checkout has no tools/docs_check.py.")
