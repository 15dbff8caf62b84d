"""Unit tests of the runner's pure parts (run by ./mach test-wpt before the tests)."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import metadata  # noqa: E402
import run  # noqa: E402
import serve  # noqa: E402


class Metadata(unittest.TestCase):
    def test_parse_render_round_trip(self):
        text = metadata.render("x.window.html", "TIMEOUT", ["why"], [("a [b]", "FAIL", ["because"])])
        e = metadata.parse(text)["x.window.html"]
        self.assertEqual(e.status, "TIMEOUT")
        self.assertEqual(e.comments, ["why"])
        self.assertEqual(e.subtests["a [b]"], ("FAIL", ["because"]))

    def test_ini_path_uses_the_source_name(self):
        self.assertEqual(metadata.ini_path("/m", "/a/b.window.html"), "/m/a/b.window.js.ini")
        self.assertEqual(metadata.ini_path("/m", "/a/c.html"), "/m/a/c.html.ini")

    def test_update_keeps_reasons_and_removes_passing(self):
        with tempfile.TemporaryDirectory() as d:
            path = metadata.ini_path(d, "/t/x.html")
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(metadata.render("x.html", "OK", [], [("s", "FAIL", ["kept reason"])]))
            results = [{"test": "/t/x.html", "status": "OK", "subtests": [{"name": "s", "status": "TIMEOUT"}]}]
            metadata.update(d, results)
            with open(path) as f:
                text = f.read()
            self.assertIn("kept reason", text)
            self.assertIn("expected: TIMEOUT", text)
            results[0]["subtests"][0]["status"] = "PASS"
            _, removed = metadata.update(d, results)
            self.assertEqual(removed, [path])


class Compare(unittest.TestCase):
    def test_unexpected_pass_is_unexpected(self):
        e = metadata.Expectation()
        e.subtests["s"] = ("FAIL", [])
        r = {"status": "OK", "subtests": [{"name": "s", "status": "PASS"}]}
        self.assertTrue(run.compare(r, e))
        self.assertEqual(r["subtests"][0]["expected"], "FAIL")

    def test_expected_results_are_not(self):
        r = {"status": "OK", "subtests": [{"name": "s", "status": "PASS"}]}
        self.assertFalse(run.compare(r, metadata.Expectation()))


class Wrapper(unittest.TestCase):
    def test_meta_scripts_title_and_timeout(self):
        page = serve.wrapper_page("x.window.js", "// META: title=T\n// META: script=a.js\n// META: timeout=long\ntest(() => {});\n", "window")
        self.assertIn("<title>T</title>", page)
        self.assertIn('<script src="a.js"></script>', page)
        self.assertIn('<meta name="timeout" content="long">', page)
        self.assertLess(page.index("testharnessreport.js"), page.index('src="a.js"'))
        self.assertTrue(page.rstrip().endswith('<script src="x.window.js"></script>'))


class AnyVariants(unittest.TestCase):
    def test_any_variants_by_meta_global(self):
        self.assertEqual(serve.any_globals("// META: global=window,dedicatedworker\n"), {"window", "dedicatedworker"})
        self.assertEqual(serve.any_globals("// META: global=worker\n"), {"dedicatedworker"})
        self.assertEqual(serve.any_globals("test(() => {});\n"), {"window", "dedicatedworker"})
        self.assertEqual(metadata.ini_path("/m", "/a/x.any.worker.html"), "/m/a/x.any.js.ini")


class Discover(unittest.TestCase):
    def test_finds_tests_and_skips_support_files(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "a", "resources"))
            files = {
                "a/t.html": '<script src="/resources/testharness.js"></script>',
                "a/plain.html": "<p>not a test</p>",
                "a/w.window.js": "test(() => {});",
                "a/n.any.js": "test(() => {});",
                "a/x.tentative.window.js": "test(() => {});",
                "a/resources/helper.window.js": "",
            }
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            self.assertEqual(run.discover(d, [], False), ["/a/n.any.html", "/a/n.any.worker.html", "/a/t.html", "/a/w.window.html"])
            self.assertIn("/a/x.tentative.window.html", run.discover(d, ["a"], True))


if __name__ == "__main__":
    unittest.main()
