"""Unit tests of the runner (run by ./mach test-wpt before the tests): its pure parts, and the
real servers on a fixture tree."""

import errno
import http.client
import os
import re
import socket
import ssl
import sys
import tempfile
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import manifest  # noqa: E402
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


    def test_dir_ini_prefs_apply_below_their_folder_deeper_wins(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "a", "b"))
            with open(os.path.join(d, "__dir__.ini"), "w") as f:
                f.write("prefs: [dom.testing.enabled:true, x.y:1]\n")
            with open(os.path.join(d, "a", "b", "__dir__.ini"), "w") as f:
                f.write("# why\nprefs: [x.y:2]\n")
            self.assertEqual(metadata.prefs_for(d, "/a/b/t.any.worker.html?v"),
                             {"dom.testing.enabled": "true", "x.y": "2"})
            self.assertEqual(metadata.prefs_for(d, "/a/t.html"), {"dom.testing.enabled": "true", "x.y": "1"})
            # A folder's __dir__.ini is no test's expectations, and update() leaves it alone.
            metadata.update(d, [{"test": "/a/b/t.html", "status": "OK", "subtests": []}])
            self.assertTrue(os.path.isfile(os.path.join(d, "a", "b", "__dir__.ini")))
        with self.assertRaises(ValueError):
            metadata.dir_prefs("prefs: dom.testing.enabled:true")


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
        meta = manifest.script_metadata("// META: title=T&<\n// META: script=a.js\n// META: timeout=long\ntest(() => {});\n")
        page = serve.wrapper_page("window", "/d/x.window.js", "", meta)
        self.assertIn("<title>T&amp;&lt;</title>", page)
        self.assertIn('<script src="a.js"></script>', page)
        self.assertIn('<meta name="timeout" content="long">', page)
        self.assertLess(page.index("testharnessreport.js"), page.index('src="a.js"'))
        self.assertTrue(page.rstrip().endswith('<script src="/d/x.window.js"></script>'))

    def test_worker_page_passes_the_query_and_keeps_the_meta(self):
        meta = [("timeout", "long"), ("script", "a.js")]
        page = serve.wrapper_page("worker", "/d/x.any.worker.js", "?v=1", meta)
        self.assertIn('new Worker("/d/x.any.worker.js?v=1")', page)
        self.assertIn('<meta name="timeout" content="long">', page)
        self.assertNotIn("a.js", page)
        script = serve.worker_script("/d/x.any.js", meta + [("title", 'say "hi"')])
        self.assertLess(script.index("self.GLOBAL"), script.index('importScripts("/resources/testharness.js")'))
        self.assertIn('importScripts("a.js")', script)
        self.assertIn('self.META_TITLE = "say \\"hi\\"";', script)
        self.assertTrue(script.rstrip().endswith('importScripts("/d/x.any.js");\ndone();'))

    def test_metadata_ends_at_the_first_other_line(self):
        self.assertEqual(manifest.script_metadata("// META: a=1\n//META:b=2 \n\n// META: c=3\n"), [("a", "1"), ("b", "2")])


class Scopes(unittest.TestCase):
    def test_global_meta(self):
        scopes = lambda v: manifest.any_scopes([("global", v)])  # noqa: E731
        self.assertEqual(scopes("window,dedicatedworker"), {"window", "dedicatedworker"})
        self.assertEqual(scopes("worker"), {"dedicatedworker", "sharedworker", "serviceworker"})
        self.assertEqual(scopes("window,worker,!dedicatedworker"), {"window", "sharedworker", "serviceworker"})
        self.assertEqual(scopes("!dedicatedworker"), {"window"})
        self.assertEqual(scopes("window,shadowrealm,jsshell,unknown"), {"window", "shadowrealm", "jsshell"})
        self.assertEqual(manifest.any_scopes([]), {"window", "dedicatedworker"})
        self.assertEqual(manifest.any_scopes([("global", "window"), ("global", "worker")]), {"window"})

    def test_upstream_urls(self):
        url = manifest.global_variant_url
        self.assertEqual(url("/a/x.any.js", ".any.worker.html"), "/a/x.any.worker.html")
        self.assertEqual(url("/a/x.https.any.js", ".any.serviceworker.html"), "/a/x.https.any.serviceworker.html")
        self.assertEqual(url("/a/x.any.js", ".https.any.shadowrealm-in-serviceworker.html"),
                         "/a/x.https.any.shadowrealm-in-serviceworker.html")
        self.assertEqual(url("/a/x.any.js", ".any.js"), "/a/x.any.js")

    def test_skip_reasons(self):
        for test in ["/a/x.any.sharedworker.html", "/a/x.https.any.serviceworker.html?v", "/a/x.any.serviceworker.html",
                     "/a/x.any.shadowrealm.html", "/a/x.any.js", "/a/x.h2.any.html", "/a/x.any.worker-module.html"]:
            self.assertTrue(manifest.skip_reason(test), test)
        for test in ["/a/x.any.html", "/a/x.any.worker.html?v", "/a/x.window.html", "/a/x.html", "/a/x.worker.html"]:
            self.assertIsNone(manifest.skip_reason(test), test)

    def test_https_and_www(self):
        self.assertTrue(manifest.https_of("/a/x.https.any.worker.html?v"))
        self.assertTrue(manifest.https_of("/a/x.any.serviceworker.html"))
        self.assertFalse(manifest.https_of("/a/x.any.html?https"))
        self.assertTrue(run.url_of("/a/x.https.html?q").startswith("https://web-platform.test:8443/a/x.https.html?q"))
        self.assertEqual(run.url_of("/a/x.www.html"), "http://www.web-platform.test:8000/a/x.www.html")


class Sources(unittest.TestCase):
    def test_source_and_ini_of_generated_urls(self):
        cases = {
            "/a/x.any.html?b=/c": "/a/x.any.js", "/a/x.any.worker.html": "/a/x.any.js",
            "/a/x.any.sharedworker.html": "/a/x.any.js", "/a/x.https.any.serviceworker.html": "/a/x.https.any.js",
            "/a/x.any.js": "/a/x.any.js", "/a/x.window.html#f": "/a/x.window.js", "/a/x.worker.html": "/a/x.worker.js",
            "/a/x.html?v": "/a/x.html",
        }
        for test, source in cases.items():
            self.assertEqual(manifest.source_url(test), source, test)
            self.assertEqual(metadata.ini_path("/m", test), "/m" + source + ".ini")
        self.assertEqual(metadata.section_name("/a/x.any.html?b=/c"), "x.any.html?b=/c")

    def test_variants_have_their_own_sections(self):
        with tempfile.TemporaryDirectory() as d:
            path = metadata.ini_path(d, "/t/x.any.html?a")
            os.makedirs(os.path.dirname(path))
            results = [{"test": "/t/x.any.html?a", "status": "TIMEOUT", "subtests": []},
                       {"test": "/t/x.any.html?b", "status": "OK", "subtests": [{"name": "s", "status": "FAIL"}]},
                       {"test": "/t/x.any.worker.html?a", "status": "OK", "subtests": []},
                       {"test": "/t/x.any.sharedworker.html?a", "status": "SKIP", "subtests": []}]
            metadata.update(d, results)
            with open(path) as f:
                text = f.read()
            self.assertIn("[x.any.html?a]\n", text)
            self.assertIn("[x.any.html?b]\n", text)
            self.assertNotIn("worker", text)
            self.assertEqual(metadata.load(d, "/t/x.any.html?a").status, "TIMEOUT")
            self.assertEqual(metadata.load(d, "/t/x.any.html?b").subtests["s"][0], "FAIL")
            self.assertEqual(metadata.load(d, "/t/x.any.html").status, "OK")


class AnyVariants(unittest.TestCase):
    def test_any_variants_by_meta_global(self):
        self.assertEqual(metadata.ini_path("/m", "/a/x.any.worker.html"), "/m/a/x.any.js.ini")


class Discover(unittest.TestCase):
    def tree(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for name, text in files.items():
            path = os.path.join(d.name, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return d.name

    def test_finds_tests_and_skips_support_files(self):
        d = self.tree({
            "a/t.html": '<script src="/resources/testharness.js"></script>',
            "a/plain.html": "<p>not a test</p>",
            "a/mention.html": "<script>// /resources/testharness.js</script>",
            "a/w.window.js": "test(() => {});",
            "a/n.any.js": "test(() => {});",
            "a/x.tentative.window.js": "test(() => {});",
            "a/tentative/y.window.js": "test(() => {});",
            "a/m-manual.html": '<script src="/resources/testharness.js"></script>',
            "a/resources/helper.window.js": "",
            "a/helper.js": "",
        })
        self.assertEqual(run.discover(d, [], False), ["/a/n.any.html", "/a/n.any.worker.html", "/a/t.html", "/a/w.window.html"])
        both = run.discover(d, ["a"], True)
        self.assertIn("/a/x.tentative.window.html", both)
        self.assertIn("/a/tentative/y.window.html", both)

    def test_variants_scopes_and_worker_tests(self):
        d = self.tree({
            "v/x.any.js": "// META: global=window,dedicatedworker,sharedworker,serviceworker\n"
                          "// META: variant=?a\n// META: variant=?b=1\ntest(() => {});",
            "v/y.https.any.js": "// META: global=window,worker,!dedicatedworker\ntest(() => {});",
            "v/z.worker.js": "// META: variant=#f\nimportScripts('/resources/testharness.js');",
            "v/h.html": '<meta name=variant content="?one"><meta content="?two" name="variant">'
                        '<meta name=timeout content=long><script src="/resources/testharness.js"></script>',
            "v/l.any.js": "// META: timeout=long\n// META: global=jsshell,shadowrealm\n",
        })
        tests = run.discover(d, ["v"], False)
        self.assertEqual(tests, sorted([
            "/v/x.any.html?a", "/v/x.any.html?b=1", "/v/x.any.worker.html?a", "/v/x.any.worker.html?b=1",
            "/v/x.any.sharedworker.html?a", "/v/x.any.sharedworker.html?b=1",
            "/v/x.any.serviceworker.html?a", "/v/x.any.serviceworker.html?b=1",
            "/v/y.https.any.html", "/v/y.https.any.sharedworker.html", "/v/y.https.any.serviceworker.html",
            "/v/z.worker.html#f", "/v/h.html?one", "/v/h.html?two", "/v/l.any.js", "/v/l.any.shadowrealm.html",
        ]))
        self.assertEqual([t for t in tests if manifest.skip_reason(t) is None],
                         ["/v/h.html?one", "/v/h.html?two", "/v/x.any.html?a", "/v/x.any.html?b=1",
                          "/v/x.any.worker.html?a", "/v/x.any.worker.html?b=1", "/v/y.https.any.html", "/v/z.worker.html#f"])
        self.assertEqual(manifest.source_path(d, "/v/x.any.worker.html?b=1"), os.path.join(d, "v/x.any.js"))
        self.assertEqual(run.timeout_of(d, "/v/h.html?two"), run.TIMEOUT_LONG)
        self.assertEqual(run.timeout_of(d, "/v/x.any.worker.html?a"), run.TIMEOUT_NORMAL)
        self.assertEqual(run.timeout_of(d, "/v/l.any.js"), run.TIMEOUT_LONG)


class Summary(unittest.TestCase):
    def test_skips_are_listed_and_never_unexpected(self):
        r = run.skipped("/a/x.any.sharedworker.html", "jsprof has no SharedWorker")
        e = metadata.Expectation()
        e.status = "ERROR"
        self.assertFalse(run.compare(r, e))
        text = run.summary([r], [])
        self.assertIn("SKIP", text)
        self.assertIn("/a/x.any.sharedworker.html: jsprof has no SharedWorker", text)
        self.assertIn("All results as expected.", text)


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


SUB_FIXTURE = """<!doctype html>
host={{host}}
hosts[][]={{hosts[][]}}
hosts[][www]={{hosts[][www]}}
hosts[][nonexistent]={{hosts[][nonexistent]}}
hosts[alt][]={{hosts[alt][]}}
hosts[alt][www]={{hosts[alt][www]}}
hosts[alt][www2]={{hosts[alt][www2]}}
domains[www]={{domains[www]}}
domains[www1]={{domains[www1]}}
domains[élève]={{domains[élève]}}
ports[http]={{ports[http][0]}},{{ports[http][1]}}
ports[https]={{ports[https][0]}},{{ports[https][1]}}
location[server]={{location[server]}}
location[scheme]={{location[scheme]}}
location[host]={{location[host]}}
location[hostname]={{location[hostname]}}
location[port]={{location[port]}}
location[path]={{location[path]}}
location[pathname]={{location[pathname]}}
location[query]={{location[query]}}
GET[a]={{GET[a]}}
GET[none]={{GET[none]}}
headers[X-Test]={{headers[X-Test]}}
uuid()={{uuid()}}
$id={{$id:uuid()}}
$id again={{$id}}
"""

SUB_EXPECTED = """<!doctype html>
host=web-platform.test
hosts[][]=web-platform.test
hosts[][www]=www.web-platform.test
hosts[][nonexistent]=nonexistent.web-platform.test
hosts[alt][]=not-web-platform.test
hosts[alt][www]=www.not-web-platform.test
hosts[alt][www2]=www2.not-web-platform.test
domains[www]=www.web-platform.test
domains[www1]=www1.web-platform.test
domains[élève]=xn--lve-6lad.web-platform.test
ports[http]={http0},{http1}
ports[https]={https0},{https1}
location[server]={scheme}://web-platform.test:{port}
location[scheme]={scheme}
location[host]=web-platform.test:{port}
location[hostname]=web-platform.test
location[port]={port}
location[path]=/sub/all.sub.html
location[pathname]=/sub/all.sub.html
location[query]=?a=x%20y&amp;b=2
GET[a]=x y
GET[none]=
headers[X-Test]=from the test
uuid()=UUID
$id=ID
$id again=ID
"""

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


class Served(unittest.TestCase):
    """The real servers (serve.Servers) on a fixture tree, on free ports, over HTTP and HTTPS."""

    FILES = {
        "__dir__.headers": "X-Dir: root\n",
        "sub/all.sub.html": SUB_FIXTURE,
        "h/__dir__.headers": "X-Dir: h\n",
        "h/t.window.js": "// META: title=t\ntest(() => {});\n",
        "h/t.window.js.headers": "X-Own: window\n",
        "h/u.any.js": "// META: timeout=long\n// META: variant=?v=1\ntest(() => {});\n",
        "h/u.any.js.sub.headers": "X-Own-Sub: {{location[pathname]}}\n",
        "h/only-window.any.js": "// META: global=window\ntest(() => {});\n",
        "h/w.worker.js": "importScripts('/resources/testharness.js');\ndone();\n",
        "h/nested/t.html": '<script src="/resources/testharness.js"></script>\n',
        "h/nested/t.html.headers": "X-Own: html\n",
        "h/plain.txt": "plain\n",
        "stash.py": (
            "def main(request, response):\n"
            "    key = request.GET.first(b'key')\n"
            "    if request.GET.first(b'action') == b'put':\n"
            "        request.server.stash.put(key, request.GET.first(b'value'))\n"
            "        return 'stored'\n"
            "    return request.server.stash.take(key) or 'none'\n"),
    }

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        for name, text in cls.FILES.items():
            path = os.path.join(cls.dir.name, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        tools = os.environ.get("JSPROF_WPT_TOOLS")
        cls.certs = None if tools else tempfile.TemporaryDirectory()
        cert_dir = os.path.join(tools, "certs") if tools else cls.certs.name
        # wptserve needs its port numbers before it binds them (its substitutions read them),
        # so they are picked free and bound a moment later: another process may take one in
        # between. A start that finds one taken picks again.
        for attempt in range(20):
            http0, http1, https0, https1 = free_ports(4)
            cls.ports = {"http": [http0, http1], "https": [https0, https1]}
            try:
                cls.servers = serve.Servers(cls.dir.name, cert_dir, ports=cls.ports).__enter__()
                break
            except OSError as e:
                if e.errno != errno.EADDRINUSE or attempt == 19:
                    raise
        cls.tls = ssl.create_default_context(cafile=cls.servers.ca_path)

    @classmethod
    def tearDownClass(cls):
        cls.servers.__exit__(None, None, None)
        cls.dir.cleanup()
        if cls.certs:
            cls.certs.cleanup()

    def get(self, path, scheme="http", host="web-platform.test", headers=None):
        port = self.ports[scheme][0]
        if scheme == "https":
            conn = http.client.HTTPSConnection(host, port, context=self.tls)
            # Connect to 127.0.0.1 but check the certificate for `host` (no /etc/hosts needed).
            conn.sock = self.tls.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname=host)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=10)
            conn.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            conn.request("GET", path, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.headers, r.read().decode("utf-8")
        finally:
            conn.close()

    def test_every_substitution(self):
        for scheme in ("http", "https"):
            with self.subTest(scheme=scheme):
                status, _, text = self.get("/sub/all.sub.html?a=x%20y&b=2", scheme, headers={"X-Test": "from the test"})
                self.assertEqual(status, 200, text)
                want = SUB_EXPECTED
                for k, v in {"http0": self.ports["http"][0], "http1": self.ports["http"][1],
                             "https0": self.ports["https"][0], "https1": self.ports["https"][1],
                             "scheme": scheme, "port": self.ports[scheme][0]}.items():
                    want = want.replace("{" + k + "}", str(v))
                pattern = re.escape(want).replace("UUID", UUID).replace("ID", f"({UUID})", 1).replace("ID", r"\1")
                m = re.fullmatch(pattern, text)
                self.assertIsNotNone(m, text)
                uuids = re.findall(UUID, text)
                self.assertEqual(len(uuids), 3)
                self.assertNotEqual(uuids[0], uuids[1], "uuid() is new each time; $id keeps its value")

    def test_wrappers_get_their_own_folder_and_file_headers(self):
        _, h, page = self.get("/h/t.window.html")
        self.assertEqual((h["X-Dir"], h["X-Own"], h["Content-Type"]), ("h", "window", "text/html"))
        self.assertIn('<script src="/h/t.window.js"></script>', page)
        for path, ctype in [("/h/u.any.html", "text/html"), ("/h/u.any.worker.html", "text/html"),
                            ("/h/u.any.worker.js", "text/javascript")]:
            status, h, _ = self.get(path + "?v=1")
            self.assertEqual((status, h["X-Dir"], h["X-Own-Sub"], h["Content-Type"]), (200, "h", path, ctype))
        _, h, _ = self.get("/h/nested/t.html")
        self.assertEqual((h["X-Dir"], h["X-Own"]), (None, "html"))
        _, h, _ = self.get("/h/plain.txt")
        self.assertEqual(h.get_all("X-Dir"), ["h"])

    def test_worker_pages(self):
        _, _, page = self.get("/h/u.any.worker.html?v=1", "https")
        self.assertIn('new Worker("/h/u.any.worker.js?v=1")', page)
        self.assertIn('<meta name="timeout" content="long">', page)
        _, _, page = self.get("/h/w.worker.html")
        self.assertIn('new Worker("/h/w.worker.js")', page)
        self.assertEqual(self.get("/h/only-window.any.html")[0], 200)
        self.assertEqual(self.get("/h/only-window.any.worker.html")[0], 404)
        self.assertEqual(self.get("/h/missing.any.html")[0], 404)

    def test_pipes_and_stash(self):
        _, h, _ = self.get("/h/plain.txt?pipe=header(Access-Control-Allow-Origin,*)", "https", host="not-web-platform.test")
        self.assertEqual(h["Access-Control-Allow-Origin"], "*")
        key = str(uuid.uuid4())
        self.assertEqual(self.get(f"/stash.py?action=put&key={key}&value=v")[2], "stored")
        self.assertEqual(self.get(f"/stash.py?action=take&key={key}", "https")[2], "v")


if __name__ == "__main__":
    unittest.main()
