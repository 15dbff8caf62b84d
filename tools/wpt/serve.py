"""The WPT server: wptserve on the standard hosts and ports, with what a WPT checkout's own
tools/serve adds (wrapper pages for .window.js, .any.js and .worker.js tests, the stash)
and what jsprof's runner provides (testharnessreport.js, testharness.js & co from the npm
package wpt-runner, /interfaces from webidl/ when the tree has none, /common/redirect.py
when the tree has none). TLS uses a test CA and one host certificate for every WPT host,
made on first use; wptserve's config gets them as "pregenerated" so that its https ports
exist for `{{ports[https][0]}}` and the other substitutions."""

import logging
import os
import ssl
import uuid

from wptserve import handlers, server, stash
from wptserve.config import ConfigBuilder
from wptserve.routes import routes as default_routes
from wptserve.sslutils.openssl import OpenSSLEnvironment
from wptserve.utils import HTTPException

import manifest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# As upstream's config.json: the hosts, their subdomains (two of them IDN), and the ports.
BROWSER_HOST = "web-platform.test"
ALT_HOST = "not-web-platform.test"
SUBDOMAINS = {"www", "www1", "www2", "天気の良い日", "élève"}
NOT_SUBDOMAINS = {"nonexistent"}
PORTS = {"http": [8000, 8001], "https": [8443, 8444]}


def idna(label):
    return label.encode("idna").decode("ascii")


def all_hosts():
    """Every WPT host that resolves (ASCII), the browser host first: what the runner maps to
    127.0.0.1 and what the host certificate covers. The "nonexistent" subdomains
    (`{{hosts[][nonexistent]}}`) stay unresolvable, as with upstream's hosts file."""
    hosts = [BROWSER_HOST, ALT_HOST]
    for base in (BROWSER_HOST, ALT_HOST):
        hosts += [f"{idna(s)}.{base}" for s in sorted(SUBDOMAINS)]
    return hosts


def covers(cert_path, hosts):
    """Whether the certificate at `cert_path` names every host."""
    try:
        names = {v for k, v in ssl._ssl._test_decode_cert(cert_path).get("subjectAltName", ()) if k == "DNS"}
    except (OSError, ValueError, ssl.SSLError, AttributeError):
        return False
    return set(hosts) <= names


def harness_dir():
    return os.path.join(os.environ["JSPROF_WPT_TOOLS"], "npm", "node_modules", "wpt-runner", "testharness")


def file_response(path, content_type):
    with open(path, "rb") as f:
        body = f.read()
    return [("Content-Type", content_type)], body


class SizedFileHandler(handlers.FileHandler):
    """wptserve's file handler, sending whole files with a Content-Length: wptserve streams
    plain files and ends them by closing the connection, which over TLS without
    close_notify a strict client (rustls) reports as a truncation."""

    def get_data(self, response, path, byte_ranges):
        if byte_ranges is None:
            with open(path, "rb") as f:
                return f.read()
        return super().get_data(response, path, byte_ranges)


GLOBAL_WINDOW = """<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
  isShadowRealm: function() { return false; },
};
</script>"""
GLOBAL_WORKER = """self.GLOBAL = {
  isWindow: function() { return false; },
  isWorker: function() { return true; },
  isShadowRealm: function() { return false; },
};"""


def _html_attr(value):
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _js_string(value):
    return value.replace("\\", "\\\\").replace('"', '\\"')


def page_meta(metadata):
    """The <meta>/<title> lines a wrapper page gets from `// META: timeout=long` and `title=`."""
    out = []
    for k, v in metadata:
        if k == "timeout" and v == "long":
            out.append('<meta name="timeout" content="long">')
        elif k == "title":
            out.append("<title>%s</title>" % v.replace("&", "&amp;").replace("<", "&lt;"))
    return out


def wrapper_page(kind, path, query, metadata):
    """The generated page of a test, as upstream's tools/serve writes it: `kind` "window"
    (X.window.html), "any" (X.any.html) or "worker" (X.any.worker.html, X.worker.html, which
    run `path` + `query` in a dedicated worker); `path` is the script's URL path."""
    lines = ["<!doctype html>", "<meta charset=utf-8>"] + page_meta(metadata)
    if kind == "any":
        lines.append(GLOBAL_WINDOW)
    lines += ['<script src="/resources/testharness.js"></script>',
              '<script src="/resources/testharnessreport.js"></script>']
    if kind == "worker":
        lines += ["<div id=log></div>", "<script>",
                  f'fetch_tests_from_worker(new Worker("{_js_string(path + query)}"));', "</script>"]
        return "\n".join(lines) + "\n"
    lines += [f'<script src="{_html_attr(v)}"></script>' for k, v in metadata if k == "script"]
    lines += ["<div id=log></div>", f'<script src="{_html_attr(path)}"></script>']
    return "\n".join(lines) + "\n"


def worker_script(path, metadata):
    """X.any.worker.js: testharness.js, the META scripts and the test (`path`), in a worker."""
    lines = [GLOBAL_WORKER, 'importScripts("/resources/testharness.js");']
    for k, v in metadata:
        if k == "script":
            lines.append(f'importScripts("{_js_string(v)}")')
        elif k == "title":
            lines.append(f'self.META_TITLE = "{_js_string(v)}";')
    lines += [f'importScripts("{_js_string(path)}");', "done();"]
    return "\n".join(lines) + "\n"


class Wrapper:
    """A page or worker script generated from a test's source file, as upstream's
    tools/serve does: the source's headers files apply (its folder's __dir__[.sub].headers,
    then its own X[.sub].headers), then the pipes (`.sub.` in the script's name, `?pipe=`).
    A scope the source's `// META: global=` does not list is a 404; a name whose source
    does not exist is served as a plain file."""

    # kind -> [(URL suffix, source suffix, suffix of the script the page loads)], and the
    # scope whose `global=` listing exposes the page.
    KINDS = {
        "window": ([(".window.html", ".window.js", ".window.js")], None),
        "any": ([(".any.html", ".any.js", ".any.js")], "window"),
        "worker": ([(".any.worker.html", ".any.js", ".any.worker.js"),
                    (".worker.html", ".worker.js", ".worker.js")], "dedicatedworker"),
        "worker-script": ([(".any.worker.js", ".any.js", ".any.js")], None),
    }

    def __init__(self, tree, kind, fallback):
        self.tree, self.kind, self.fallback = tree, kind, fallback
        self.suffixes, self.scope = self.KINDS[kind]

    def __call__(self, request, response):
        url_path = request.url_parts.path
        for suffix, source_suffix, script_suffix in self.suffixes:
            if url_path.endswith(suffix):
                break
        else:
            raise HTTPException(404)
        stem = url_path[: -len(suffix)]
        source = handlers.filesystem_path(self.tree, request)[: -len(suffix)] + source_suffix
        if not os.path.isfile(source):
            return self.fallback(request, response)
        metadata = manifest.script_metadata(manifest.read(source))
        if self.scope == "window" and "window" not in manifest.any_scopes(metadata) or \
                self.scope == "dedicatedworker" and source_suffix == ".any.js" and \
                "dedicatedworker" not in manifest.any_scopes(metadata):
            raise HTTPException(404, f"this test does not run in the {self.scope} scope")
        script = stem + script_suffix
        query = "?" + request.url_parts.query if request.url_parts.query else ""
        if self.kind == "worker-script":
            response.headers.set("Content-Type", "text/javascript")
            response.content = worker_script(script, metadata)
        else:
            response.headers.set("Content-Type", "text/html")
            response.content = wrapper_page(self.kind, script, query, metadata)
        for name, value in handlers.load_headers(request, source):
            response.headers.set(name, value)
        handlers.wrap_pipeline(script, request, response)


def make_routes(tree):
    """The runner's routes, before wptserve's defaults (earlier routes win)."""

    @handlers.handler
    def report(request, response):
        return file_response(os.path.join(HERE, "testharnessreport.js"), "text/javascript")

    def harness_file(name):
        @handlers.handler
        def h(request, response):
            return file_response(os.path.join(harness_dir(), name), "text/javascript")
        return h

    @handlers.handler
    def interfaces(request, response):
        name = os.path.basename(request.url_parts.path)
        own = os.path.join(tree, "interfaces", name)
        stem = name[: -len(".idl")]
        for path in (own, os.path.join(ROOT, "webidl", stem + ".webidl"),
                     os.path.join(ROOT, "webidl", "internal", stem + ".webidl")):
            if os.path.isfile(path):
                return file_response(path, "text/plain")
        return 404, [], "no such IDL"

    @handlers.handler
    def redirect(request, response):
        # /common/redirect.py?location=URL[&status=30x]: as the WPT tree's own handler.
        own = os.path.join(tree, "common", "redirect.py")
        if os.path.isfile(own):
            return handlers.python_script_handler(request, response)
        status = int(request.GET.first(b"status", b"302"))
        location = request.GET.first(b"location").decode()
        return status, [("Location", location), ("Content-Type", "text/plain")], f"Redirecting to {location}"

    files = SizedFileHandler()
    return [
        ("GET", "/resources/testharnessreport.js", report),
        ("GET", "/resources/testharness.js", harness_file("testharness.js")),
        ("GET", "/resources/idlharness.js", harness_file("idlharness.js")),
        ("GET", "/resources/WebIDLParser.js", harness_file("webidl2.js")),
        ("GET", "/interfaces/*.idl", interfaces),
        ("*", "/common/redirect.py", redirect),
        ("GET", "*.any.worker.js", Wrapper(tree, "worker-script", files)),
        ("GET", "*.worker.html", Wrapper(tree, "worker", files)),
        ("GET", "*.window.html", Wrapper(tree, "window", files)),
        ("GET", "*.any.html", Wrapper(tree, "any", files)),
    ] + [(m, p, files if p == "*" else h) for (m, p, h) in default_routes]


class Servers:
    """wptserve on every host and port (`ports`: {"http": [a, b], "https": [c, d]}, PORTS by
    default), with wptserve's stash for python handlers; `ca_path` is the test CA to
    trust, `config` wptserve's config (what `.sub.` substitutions read)."""

    def __init__(self, tree, cert_dir, ports=None):
        self.tree = os.path.abspath(tree)
        self.cert_dir = cert_dir
        self.ports = ports or PORTS
        self.servers = []
        self._entered = []

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _enter(self, context):
        value = context.__enter__()
        self._entered.append(context)
        return value

    def _start(self):
        logger = logging.getLogger("wptserve")
        logger.setLevel(logging.WARNING)
        ssl_env = OpenSSLEnvironment(logger, base_path=self.cert_dir)
        self._enter(ssl_env)
        hosts = all_hosts()
        self.ca_path = ssl_env.ca_cert_path(hosts)
        key, cert = ssl_env.host_cert_path(hosts)
        if not covers(cert, hosts):
            # wptserve reuses a valid host certificate whatever names it has (it checks
            # only the date): one made for fewer hosts is made again, by the same CA.
            key, cert = ssl_env._generate_host_cert(tuple(sorted(hosts, key=len)))
        builder = ConfigBuilder(
            logger,
            subdomains=SUBDOMAINS,
            not_subdomains=NOT_SUBDOMAINS,
            browser_host=BROWSER_HOST,
            alternate_hosts={"alt": ALT_HOST},
            doc_root=self.tree,
            ports=self.ports,
            ssl={"type": "pregenerated",
                 "pregenerated": {"host_key_path": key, "host_cert_path": cert, "ca_cert_path": self.ca_path}},
        )
        self.config = self._enter(builder)
        self._enter(stash.StashServer(("127.0.0.1", 0), authkey=str(uuid.uuid4())))
        routes = make_routes(self.tree)
        for scheme, ports in self.config.ports.items():
            for port in ports:
                https = scheme == "https"
                s = server.WebTestHttpd(
                    host="127.0.0.1", port=port, doc_root=self.tree, routes=routes, use_ssl=https,
                    key_file=self.config.ssl_config["key_path"] if https else None,
                    certificate=self.config.ssl_config["cert_path"] if https else None, config=self.config)
                s.start()
                self.servers.append(s)

    def __exit__(self, *args):
        for s in self.servers:
            s.stop()
        self.servers = []
        while self._entered:
            self._entered.pop().__exit__(*args)
