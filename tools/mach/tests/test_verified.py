"""Tests of the record of checks that passed on their inputs (tools/mach/verified.py), in a
temporary git repository: the digest follows every tracked input file's content (and nothing
else), a pass is recorded once, and a job is skipped only under JSPROF_CI_SKIP_VERIFIED=1 and
only while its inputs are those recorded. No cargo, no network.

    python3 -m unittest discover -s tools/mach/tests
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, TOOLS)

from mach import verified  # noqa: E402


class VerifiedTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        self.git("init", "-q")
        self.write("inputs/a.rs", "fn a() {}\n")
        self.write("inputs/b.rs", "fn b() {}\n")
        self.write("other/c.rs", "fn c() {}\n")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
        jobs = {"job": ("the job", lambda: {"inputs"})}
        record = os.path.join(self.root, ".ci", "verified.json")
        for patch in (mock.patch.object(verified, "ROOT", self.root), mock.patch.object(verified, "JOBS", jobs),
                      mock.patch.object(verified, "RECORD", record)):
            patch.start()
            self.addCleanup(patch.stop)
        self.addCleanup(self.dir.cleanup)
        self.record = record

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def quietly(self, fn, *args):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            result = fn(*args)
        return result, err.getvalue()

    def test_the_digest_follows_the_inputs_content_only(self):
        first = verified.digest("job")
        self.write("other/c.rs", "fn c() { changed }\n")
        self.assertEqual(verified.digest("job"), first, "a file outside the inputs changed it")
        self.write("inputs/a.rs", "fn a() { changed }\n")
        changed = verified.digest("job")
        self.assertNotEqual(changed, first)
        self.write("inputs/a.rs", "fn a() {}\n")
        self.assertEqual(verified.digest("job"), first, "the same content gives the same digest")
        self.write("inputs/untracked.rs", "fn u() {}\n")
        self.assertEqual(verified.digest("job"), first, "an untracked file is not an input")

    def test_a_job_is_never_skipped_without_the_variable(self):
        self.quietly(verified.record, "job")
        with mock.patch.dict(os.environ, {verified.SKIP_VARIABLE: ""}):
            self.assertFalse(self.quietly(verified.skip, "job")[0])

    def test_skipped_only_while_the_inputs_are_the_recorded_ones(self):
        with mock.patch.dict(os.environ, {verified.SKIP_VARIABLE: "1"}):
            skipped, said = self.quietly(verified.skip, "job")
            self.assertFalse(skipped, "no record: it runs")
            self.assertIn("running it", said)
            self.quietly(verified.record, "job")
            skipped, said = self.quietly(verified.skip, "job")
            self.assertTrue(skipped)
            self.assertIn("skipped", said)
            self.write("inputs/b.rs", "fn b() { changed }\n")
            skipped, said = self.quietly(verified.skip, "job")
            self.assertFalse(skipped, "an input changed: it runs")
            self.assertIn("changed", said)

    def test_a_pass_is_recorded_once_with_its_commit(self):
        _, said = self.quietly(verified.record, "job")
        self.assertIn("recorded", said)
        with open(self.record) as f:
            entry = json.load(f)["job"]
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=self.root, capture_output=True,
                              text=True).stdout.strip()
        self.assertEqual(entry["passed_on"], head)
        self.assertEqual(entry["digest"], verified.digest("job"))
        _, said = self.quietly(verified.record, "job")
        self.assertEqual(said, "", "recording the same inputs again writes nothing")


if __name__ == "__main__":
    unittest.main()
