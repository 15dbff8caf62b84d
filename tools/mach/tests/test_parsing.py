"""Tests of mach's command line: what every command's arguments parse to, the arguments passed
on unchanged and in their order (run, test, test-wpt, bench, fuzz, servo run|test, …), the
errors (exit 2), `./mach help`, and that each command calls its function with what it parsed.
Nothing here builds or runs anything but ./mach's help.

    python3 -m unittest discover -s tools/mach/tests
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, TOOLS)

from mach import bench, build, cli, collector, fuzz, lint, main, servo, test, wpt  # noqa: E402

ROOT = os.path.dirname(TOOLS)


def parse(*argv):
    """(the command's prog, its namespace as a dict without the parser's own fields)."""
    parser, ns = cli.resolve(main.build_parser(), argv)
    return parser.prog, vars(ns)


class ParsingCase(unittest.TestCase):
    def assertExit(self, code, *argv):
        """That parsing `argv` exits with `code`; returns what it wrote (stdout + stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            with self.assertRaises(SystemExit) as cm:
                cli.resolve(main.build_parser(), argv)
        self.assertEqual(cm.exception.code, code, out.getvalue() + err.getvalue())
        return out.getvalue() + err.getvalue()

    def assertArgs(self, argv, **expected):
        prog, ns = parse(*argv)
        for key, value in expected.items():
            self.assertEqual(ns.get(key), value, f"{argv}: {key}")
        return prog, ns


class NoArguments(ParsingCase):
    COMMANDS = ["bootstrap", "doctor", "check-units", "lint", "test-multiprocess", "test-export-readers",
                "servo build", "servo refresh-patches", "ballista down", "ballista status"]

    def test_parse_to_nothing(self):
        for command in self.COMMANDS:
            prog, ns = parse(*command.split())
            self.assertEqual(prog, "./mach " + command)
            self.assertEqual(ns, {})

    def test_an_extra_argument_exits_2(self):
        for command in self.COMMANDS:
            err = self.assertExit(2, *command.split(), "extra")
            self.assertIn("unrecognized arguments: extra", err)
            self.assertIn(f"mach: ./mach {command}:", err)


class Build(ParsingCase):
    def test_build(self):
        self.assertArgs(["build"], collector=False)
        self.assertArgs(["build", "--collector"], collector=True)

    def test_no_abbreviations(self):
        self.assertExit(2, "build", "--col")
        self.assertExit(2, "build", "x")

    def test_codegen(self):
        self.assertArgs(["codegen"], check=False)
        self.assertArgs(["codegen", "--check"], check=True)
        self.assertExit(2, "codegen", "ROOT")


class Run(ParsingCase):
    def test_everything_is_passed_on_in_order(self):
        for argv in (["examples/primes/index.html", "--trace-out", "primes.json"],
                     ["-M", "--pref", "dom.testing.enabled=true", "a.html", "b.html"],
                     ["--webdriver", "4444"],
                     ["--pref", "profiler.base_interval_ms=1", "--timeout", "3", "p.html", "--trace-out", "/tmp/t.json"],
                     ["scope", "9222", "-c"],
                     ["collect", "--port", "8080"],
                     ["p.html", "--help"],
                     ["p.html", "--", "x"],
                     ["--", "--help"],
                     ["--profile-out=x.json", "p.html", "-h"]):
            self.assertArgs(["run", *argv], args=argv)

    def test_a_page_is_needed(self):
        self.assertIn("a PAGE is needed", self.assertExit(2, "run"))

    def test_help_before_the_page_is_machs(self):
        self.assertIn("usage: ./mach run PAGE", self.assertExit(0, "run", "--help"))
        self.assertIn("usage: ./mach run PAGE", self.assertExit(0, "run", "-h"))


class Test(ParsingCase):
    def test_defaults(self):
        self.assertArgs(["test"], repeat=1, load=0, args=[])

    def test_repeat_and_load_anywhere_before_dashes(self):
        self.assertArgs(["test", "--repeat", "3", "--load", "2"], repeat=3, load=2, args=[])
        self.assertArgs(["test", "--repeat=2", "--load=1"], repeat=2, load=1, args=[])
        self.assertArgs(["test", "-p", "jsprof-profiler", "--repeat", "3", "filter", "--", "--nocapture"],
                        repeat=3, args=["-p", "jsprof-profiler", "filter", "--", "--nocapture"])
        self.assertArgs(["test", "filter", "--load", "4"], load=4, args=["filter"])

    def test_cargo_arguments_are_passed_on_in_order(self):
        argv = ["-p", "jsprof-shell", "--test", "scope", "some_test", "--", "--test-threads", "1", "--exact"]
        self.assertArgs(["test", *argv], repeat=1, load=0, args=argv)

    def test_after_dashes_everything_is_cargos(self):
        self.assertArgs(["test", "--", "--repeat", "3"], repeat=1, args=["--", "--repeat", "3"])

    def test_no_abbreviation_of_repeat(self):
        self.assertArgs(["test", "--rep", "3"], repeat=1, args=["--rep", "3"])

    def test_bad_numbers(self):
        self.assertIn("--repeat: needs a whole number (1 or more)", self.assertExit(2, "test", "--repeat", "0"))
        self.assertIn("--repeat: needs a whole number (1 or more)", self.assertExit(2, "test", "--repeat", "x"))
        self.assertIn("--load: needs a whole number", self.assertExit(2, "test", "--load", "-1"))
        self.assertExit(2, "test", "--repeat")

    def test_webdriver(self):
        self.assertArgs(["test-webdriver"], args=[])
        argv = ["-k", "timeouts and not slow", "--verbose", "--", "-x", "-s"]
        self.assertArgs(["test-webdriver", *argv], args=argv)
        self.assertArgs(["test-webdriver", "--engine", "servo", "-k", "force"], engine="servo", args=["-k", "force"])
        self.assertArgs(["test-webdriver", "-k", "x"], engine="jsprof", args=["-k", "x"])


class Wpt(ParsingCase):
    def test_engine_anywhere(self):
        self.assertArgs(["test-wpt"], engine="jsprof", args=[])
        self.assertArgs(["test-wpt", "--engine", "servo", "js-self-profiling", "jsprof-engine"],
                        engine="servo", args=["js-self-profiling", "jsprof-engine"])
        self.assertArgs(["test-wpt", "jsprof-engine/fetch", "--engine", "servo", "--log-json", "f.json"],
                        engine="servo", args=["jsprof-engine/fetch", "--log-json", "f.json"])
        self.assertArgs(["test-wpt", "--engine=jsprof", "a"], engine="jsprof", args=["a"])

    def test_runner_options_are_passed_on(self):
        argv = ["--wpt-root", "/tmp/wpt", "--exclude-tentative", "dom/", "--log-json", "out.json"]
        self.assertArgs(["test-wpt", *argv], engine="jsprof", args=argv)

    def test_bad_engine(self):
        self.assertIn("'gecko': expected jsprof or servo", self.assertExit(2, "test-wpt", "--engine", "gecko"))
        self.assertExit(2, "test-wpt", "--engine")

    def test_update(self):
        self.assertArgs(["update-wpt", "LOG.json"], engine="jsprof", args=["LOG.json"])
        self.assertArgs(["update-wpt", "LOG.json", "--engine", "servo"], engine="servo", args=["LOG.json"])
        self.assertArgs(["update-wpt", "--wpt-root", "D", "LOG.json"], args=["--wpt-root", "D", "LOG.json"])

    def test_update_needs_a_log(self):
        self.assertIn("a LOG", self.assertExit(2, "update-wpt"))
        self.assertIn("a LOG", self.assertExit(2, "update-wpt", "--engine", "servo"))


class Lint(ParsingCase):
    def test_docs_check_passes_everything_on(self):
        self.assertArgs(["docs-check"], args=[])
        for argv in (["--run", "README.md"], ["README.md", "--help"], ["--", "-x"]):
            self.assertArgs(["docs-check", *argv], args=argv)
        self.assertIn("usage: ./mach docs-check", self.assertExit(0, "docs-check", "--help"))

    def test_docs_check_without_the_script_exits_2(self):
        err = io.StringIO()
        with mock.patch.object(lint, "DOCS_CHECK", os.path.join(ROOT, "no-such-docs-check.py")), \
                contextlib.redirect_stderr(err):
            self.assertEqual(lint.docs_check([]), 2)
        self.assertIn("is not in this checkout", err.getvalue())

    def test_docs_check_runs_the_script_with_the_arguments(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "docs_check.py")
            out = os.path.join(tmp, "argv")
            with open(script, "w") as f:
                f.write(f"import sys\nopen({out!r}, 'w').write(repr(sys.argv[1:]))\nsys.exit(3)\n")
            with mock.patch.object(lint, "DOCS_CHECK", script):
                self.assertEqual(lint.docs_check(["--run", "a b"]), 3)
            with open(out) as f:
                self.assertEqual(f.read(), repr(["--run", "a b"]))


class Bench(ParsingCase):
    def test_bench(self):
        self.assertArgs(["bench"], peer=None, args=[])
        self.assertArgs(["bench", "--", "--save-baseline", "main"], peer=None, args=["--", "--save-baseline", "main"])
        self.assertArgs(["bench", "sample"], peer=None, args=["sample"])

    def test_peer(self):
        self.assertArgs(["bench", "--peer", "chromium"], peer="chromium", args=[])
        self.assertArgs(["bench", "--peer", "chromium", "--quick"], peer="chromium", args=["--quick"])
        self.assertArgs(["bench", "--quick", "--peer", "chromium"], peer="chromium", args=["--quick"])
        self.assertArgs(["bench", "--peer", "chromium", "--engine", "servo"], peer="chromium", engine="servo", args=[])

    def test_bad_peer(self):
        self.assertIn("usage: ./mach bench --peer chromium", self.assertExit(2, "bench", "--peer", "firefox"))
        self.assertExit(2, "bench", "--peer")
        self.assertIn("--engine goes with --peer chromium", self.assertExit(2, "bench", "--engine", "servo"))


class Fuzz(ParsingCase):
    def setUp(self):
        self.targets = fuzz.fuzz_targets()
        self.assertTrue(self.targets)

    def test_list(self):
        self.assertArgs(["fuzz", "--list"], list=True, target=None)

    def test_target_and_time(self):
        self.assertArgs(["fuzz", "all"], target="all", time=60, args=[])
        self.assertArgs(["fuzz", "all", "--time", "10"], target="all", time=10, args=[])
        self.assertArgs(["fuzz", "--time", "5", self.targets[0]], target=self.targets[0], time=5)

    def test_libfuzzer_arguments_after_dashes(self):
        self.assertArgs(["fuzz", self.targets[0], "--", "-max_len=65536", "-only_ascii=1"],
                        target=self.targets[0], args=["-max_len=65536", "-only_ascii=1"])
        self.assertArgs(["fuzz", "all", "--time", "1", "--", "--time", "x"], time=1, args=["--time", "x"])

    def test_errors(self):
        self.assertIn("targets: " + ", ".join(self.targets), self.assertExit(2, "fuzz"))
        self.assertIn("targets:", self.assertExit(2, "fuzz", "no_such_target"))
        self.assertIn("--time: takes a number of seconds", self.assertExit(2, "fuzz", "all", "--time", "x"))
        self.assertExit(2, "fuzz", "all", "extra")
        self.assertExit(2, "fuzz", "-max_len=1")


class Servo(ParsingCase):
    def test_run_passes_everything_on(self):
        for argv in (["examples/primes/index.html"], ["examples/primes/index.html", "--trace-out", "t.json"],
                     ["--headless", "p.html", "-h"], ["-M", "examples/primes/index.html", "--profile-stats"]):
            prog, _ = self.assertArgs(["servo", "run", *argv], args=argv)
            self.assertEqual(prog, "./mach servo run")
        self.assertIn("a PAGE is needed", self.assertExit(2, "servo", "run"))

    def test_test_passes_cargo_arguments_on(self):
        self.assertArgs(["servo", "test"], args=[])
        self.assertArgs(["servo", "test", "traces", "--", "--nocapture"], args=["traces", "--", "--nocapture"])

    def test_group_errors_and_help(self):
        self.assertIn("a command is needed", self.assertExit(2, "servo"))
        self.assertIn("unknown command 'layout'", self.assertExit(2, "servo", "layout"))
        with self.assertRaises(cli.Help) as cm:
            cli.resolve(main.build_parser(), ["servo", "--help"])
        self.assertEqual(cm.exception.parser.prog, "./mach servo")


class Ballista(ParsingCase):
    def test_up(self):
        self.assertArgs(["ballista", "up"], executors=2, port=50050)
        self.assertArgs(["ballista", "up", "--executors", "3", "--port", "6000"], executors=3, port=6000)
        self.assertArgs(["ballista", "up", "--port=7000"], executors=2, port=7000)

    def test_errors(self):
        self.assertExit(2, "ballista")
        self.assertExit(2, "ballista", "start")
        self.assertExit(2, "ballista", "up", "--executors", "x")
        self.assertExit(2, "ballista", "up", "--port")
        self.assertExit(2, "ballista", "up", "3")


class Help(ParsingCase):
    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main.main(list(argv))
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def all_commands(self):
        return [name for name, _ in main.build_parser().command_rows()]

    def test_listing_has_every_command_on_one_line(self):
        for argv in ([], ["help"], ["-h"], ["--help"]):
            rc, out, _ = self.run_main(*argv)
            self.assertEqual(rc, 0)
            listed = [line.strip().split("  ")[0] for line in out.split("commands:\n")[1].split("\n\n")[0].splitlines()]
            self.assertEqual(listed, self.all_commands())
        for name in ("bootstrap", "doctor", "build", "run", "codegen", "check-units", "test", "test-multiprocess",
                     "test-export-readers", "test-webdriver", "test-wpt", "update-wpt", "lint", "docs-check",
                     "bench", "fuzz", "servo", "servo build", "servo run", "servo test", "servo refresh-patches",
                     "ballista", "ballista up", "ballista down", "ballista status", "help"):
            self.assertIn(name, self.all_commands())

    def test_every_command_takes_help(self):
        for name in self.all_commands():
            rc, out, _ = self.run_main(*name.split(), "--help")
            self.assertEqual(rc, 0, name)
            self.assertIn("usage: ./mach " + name, out, name)
            rc, out2, _ = self.run_main("help", *name.split())
            self.assertEqual(rc, 0, name)
            self.assertIn("usage:", out2, name)

    def test_help_of_an_unknown_command(self):
        rc, _, err = self.run_main("help", "nope")
        self.assertEqual(rc, 2)
        self.assertIn("no command 'nope'", err)
        self.assertEqual(self.run_main("help", "servo", "nope")[0], 2)

    def test_unknown_command_exits_2(self):
        rc, _, err = self.run_main("nope")
        self.assertEqual(rc, 2)
        self.assertIn("unknown command 'nope'", err)
        self.assertEqual(self.run_main("--nope")[0], 2)


class Dispatch(unittest.TestCase):
    """Each command calls its function with what it parsed (the functions mocked)."""

    def call(self, module, name, argv):
        with mock.patch.object(module, name, return_value=0) as fn:
            self.assertEqual(main.main(argv), 0)
        fn.assert_called_once()
        return fn.call_args

    def test_calls(self):
        cases = [
            (build, "bootstrap", ["bootstrap"], mock.call()),
            (build, "doctor", ["doctor"], mock.call()),
            (build, "build", ["build", "--collector"], mock.call(True)),
            (build, "run", ["run", "-M", "p.html", "--trace-out", "t"], mock.call(["-M", "p.html", "--trace-out", "t"])),
            (build, "codegen", ["codegen", "--check"], mock.call(True)),
            (build, "check_units", ["check-units"], mock.call()),
            (test, "test", ["test", "--repeat", "2", "-p", "x"], mock.call(["-p", "x"], 2, 0)),
            (test, "test_multiprocess", ["test-multiprocess"], mock.call()),
            (test, "test_export_readers", ["test-export-readers"], mock.call()),
            (test, "test_webdriver", ["test-webdriver", "-k", "e"], mock.call(["-k", "e"], engine="jsprof")),
            (test, "test_webdriver", ["test-webdriver", "--engine", "servo"], mock.call([], engine="servo")),
            (wpt, "test_wpt", ["test-wpt", "a", "--engine", "servo"], mock.call(["a"], "servo")),
            (wpt, "update_wpt", ["update-wpt", "L.json"], mock.call(["L.json"], "jsprof")),
            (lint, "lint", ["lint"], mock.call()),
            (lint, "docs_check", ["docs-check", "x"], mock.call(["x"])),
            (bench, "bench", ["bench", "--", "--quick"], mock.call(["--", "--quick"])),
            (bench, "peer", ["bench", "--peer", "chromium", "--quick"], mock.call(["--quick"], "jsprof")),
            (bench, "peer", ["bench", "--peer", "chromium", "--engine", "servo"], mock.call([], "servo")),
            (fuzz, "fuzz", ["fuzz", "all", "--time", "3", "--", "-runs=1"], mock.call("all", 3, ["-runs=1"])),
            (servo, "servo_build", ["servo", "build"], mock.call()),
            (servo, "servo_run", ["servo", "run", "p.html", "-x"], mock.call(["p.html", "-x"])),
            (servo, "servo_test", ["servo", "test", "f"], mock.call(["f"])),
            (servo, "servo_refresh_patches", ["servo", "refresh-patches"], mock.call()),
            (collector, "ballista_up", ["ballista", "up", "--executors", "1"], mock.call(1, 50050)),
            (collector, "ballista_down", ["ballista", "down"], mock.call()),
            (collector, "ballista_status", ["ballista", "status"], mock.call()),
        ]
        for module, name, argv, expected in cases:
            with self.subTest(argv=argv):
                self.assertEqual(self.call(module, name, argv), expected)

    def test_fuzz_list_prints_the_targets(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), mock.patch.object(fuzz, "fuzz") as fn:
            self.assertEqual(main.main(["fuzz", "--list"]), 0)
        fn.assert_not_called()
        self.assertEqual(out.getvalue().split(), fuzz.fuzz_targets())

    def test_exit_status_is_the_functions(self):
        with mock.patch.object(build, "build", return_value=101):
            self.assertEqual(main.main(["build"]), 101)


class Script(unittest.TestCase):
    """./mach itself: help with no arguments (exit 0), 2 for an unknown command."""

    def mach(self, *argv):
        return subprocess.run([sys.executable, os.path.join(ROOT, "mach"), *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)

    def test_no_arguments_prints_the_help(self):
        r = self.mach()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("commands:", r.stdout)

    def test_unknown_command(self):
        r = self.mach("no-such-command")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'no-such-command'", r.stderr)

    def test_no_bytecode_in_the_tree(self):
        self.mach("help", "build")
        self.assertFalse(os.path.exists(os.path.join(TOOLS, "mach", "__pycache__")))


if __name__ == "__main__":
    unittest.main()
