"""Checks whose inputs are unchanged since a full run passed them: the record, and CI's skip.

Some checks cost more than CI's time allows on a fresh machine: the collector's build and
tests (DataFusion and Ballista, ~45 minutes of a 2-core machine before a test runs), its
clippy, and the fuzz smoke run (an instrumented build of its own). Each such *job* has a fixed
set of inputs: the files of the packages it builds (from `cargo metadata`) and of the other
paths it reads, and the toolchain. Their digest is a SHA-256 over every tracked file's path
and content, as they are in the working tree, and `rustc -vV`.

- When a job passes in full (`./mach test` with no filter, `./mach lint`, `./mach fuzz all
  --time S` with S >= 10), its digest is recorded in `.ci/verified.json`, with the commit it
  ran on and the date. The file is committed with the change it verifies.
- When `JSPROF_CI_SKIP_VERIFIED=1` (`.ci/run` sets it), a job whose digest equals the
  recorded one is skipped with a line that says so: the check was run on exactly these
  inputs. Any change to one of its inputs, or a missing record, runs the job.

Nothing is ever skipped without that variable, so `./mach test` run by hand always runs
everything.
"""

import datetime
import hashlib
import json
import os
import subprocess

from .common import ROOT, log

RECORD = os.path.join(ROOT, ".ci", "verified.json")
SKIP_VARIABLE = "JSPROF_CI_SKIP_VERIFIED"


def _path_packages(manifest):
    """The directories of the path packages (members and path dependencies) that cargo
    builds for `manifest`, relative to the repository's root."""
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    dirs = set()
    for package in json.loads(out)["packages"]:
        if package.get("source") is None:
            dirs.add(os.path.relpath(os.path.dirname(package["manifest_path"]), ROOT))
    return dirs


def _collector_inputs():
    return _path_packages(os.path.join(ROOT, "components", "collector", "Cargo.toml")) | {
        # `jsprof collect` (the shell hands over to jsprof-collector: tests/collect.rs).
        "components/shell",
        # The field snippet the live test serves (tests/sdk/live.mjs).
        "examples/field",
        # How the collector's tests are run, and the build's environment.
        "tools/mach/collector.py", "tools/mach/test.py", "tools/mach/lint.py", "tools/mach/common.py",
        "tools/toolboot.py", ".cargo",
    }


def _fuzz_inputs():
    return _path_packages(os.path.join(ROOT, "fuzz", "targets", "Cargo.toml")) | {
        # Seeds read where they are (tools/mach/fuzz.py), the committed corpora and regressions.
        "fuzz", "tests/pages", "tests/wpt", "tools/mach/fuzz.py", "tools/mach/common.py",
    }


# job -> (what it is, its inputs)
JOBS = {
    "collector-test": ("the collector's build and tests", _collector_inputs),
    "collector-lint": ("the collector's rustfmt and clippy", _collector_inputs),
    "fuzz-smoke": ("the fuzz smoke run (every target, >= 10 s each)", _fuzz_inputs),
}


def digest(job):
    """The digest of `job`'s inputs as they are in the working tree (tracked files only)."""
    _, inputs = JOBS[job]
    paths = sorted(inputs())
    listed = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True,
                            check=True).stdout.split(b"\0")
    h = hashlib.sha256()
    h.update(subprocess.run(["rustc", "-vV"], capture_output=True, check=True).stdout)
    for name in sorted(f for f in listed if f):
        path = os.path.join(ROOT, os.fsdecode(name))
        h.update(name + b"\0")
        try:
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
        except FileNotFoundError:
            h.update(b"deleted")
    return h.hexdigest()


def _load():
    try:
        with open(RECORD) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _head():
    r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def record(job):
    """`job` passed in full on the working tree's inputs: write its digest into the record."""
    try:
        d = digest(job)
    except (OSError, subprocess.CalledProcessError) as e:
        log(f"verified: cannot compute the inputs of {job}: {e}")
        return
    entries = _load()
    if entries.get(job, {}).get("digest") == d:
        return
    entries[job] = {"digest": d, "passed_on": _head(),
                    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    os.makedirs(os.path.dirname(RECORD), exist_ok=True)
    with open(RECORD, "w") as f:
        json.dump(dict(sorted(entries.items())), f, indent=2)
        f.write("\n")
    log(f"verified: {JOBS[job][0]} passed; recorded in {os.path.relpath(RECORD, ROOT)} (commit it with the change)")


def skip(job):
    """Whether `job` may be skipped here: only under JSPROF_CI_SKIP_VERIFIED=1, and only when its
    inputs are those recorded as passed. Says which, either way."""
    if os.environ.get(SKIP_VARIABLE) != "1":
        return False
    what = JOBS[job][0]
    entry = _load().get(job)
    try:
        d = digest(job)
    except (OSError, subprocess.CalledProcessError) as e:
        log(f"verified: {what}: cannot compute its inputs ({e}); running it")
        return False
    if entry and entry.get("digest") == d:
        log(f"verified: {what}: skipped, its inputs are those it passed on "
            f"(commit {entry.get('passed_on', '?')[:12]}, {entry.get('date', '?')}; .ci/verified.json)")
        return True
    log(f"verified: {what}: its inputs changed since it last passed (or it never did): running it")
    return False
