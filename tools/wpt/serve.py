"""The WPT server: wptserve on the standard hosts and ports, with what a WPT checkout's own
tools/serve adds (wrapper pages for .window.js and .any.js) and what jsprof's runner provides
(testharnessreport.js, testharness.js & co from the npm package wpt-runner, /interfaces from
webidl/ when the tree has none, /common/redirect.py when the tree has none)."""

import logging
import os
import re

from wptserve import handlers, server
from wptserve.config import ConfigBuilder
from wptserve.routes import routes as default_routes
from wptserve.sslutils.openssl import OpenSSLEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

BROWSER_HOST = "web-platform.test"
ALT_HOST = "not-web-platform.test"
SUBDOMAINS = {"www", "www1", "www2"}
NOT_SUBDOMAINS = {"nonexistent"}
PORTS = {"http": [8000, 8001], "https": [8443, 8444]}


def all_hosts():
    hosts = [BROWSER_HOST, ALT_HOST]
    for base in (BROWSER_HOST, ALT_HOST):
        hosts += [f"{s}.{base}" for s in sorted(SUBDOMAINS | NOT_SUBDOMAINS)]
    return hosts


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

    def generated(strip, content_type, make):
        """A file generated from a test's source: the request's path minus `strip`, plus
        `.js`, names the source; the source's headers files apply to what is generated."""
        @handlers.handler
        def h(request, response):
            js = request.url_parts.path[: -len(strip)] + ".js"
            source_path = os.path.join(tree, js.lstrip("/"))
            if not os.path.isfile(source_path):
                return 404, [], "no such test"
            with open(source_path, encoding="utf-8") as f:
                source = f.read()
            headers = [("Content-Type", content_type)] + handlers.load_headers(request, source_path)
            return headers, make(os.path.basename(js), source)
        return h

    def wrapper(kind):
        strip = ".worker.html" if kind == "worker" else ".html"
        return generated(strip, "text/html", lambda name, source: wrapper_page(name, source, kind))

    # X.any.worker.js: the worker side of X.any.worker.html.
    worker_script = generated(".worker.js", "text/javascript", worker_script_for)

    return [
        ("GET", "/resources/testharnessreport.js", report),
        ("GET", "/resources/testharness.js", harness_file("testharness.js")),
        ("GET", "/resources/idlharness.js", harness_file("idlharness.js")),
        ("GET", "/resources/WebIDLParser.js", harness_file("webidl2.js")),
        ("GET", "/interfaces/*.idl", interfaces),
        ("*", "/common/redirect.py", redirect),
        ("GET", "*.window.html", wrapper("window")),
        ("GET", "*.any.worker.html", wrapper("worker")),
        ("GET", "*.any.worker.js", worker_script),
        ("GET", "*.any.html", wrapper("any")),
    ] + [(m, p, SizedFileHandler() if p == "*" else h) for (m, p, h) in default_routes]


META = re.compile(r"^//\s*META:\s*(\w+)=(.*)$")


def metas(source):
    """The `// META: key=value` lines at the top of a test's source."""
    out = []
    for line in source.splitlines():
        m = META.match(line.strip())
        if not m:
            if line.strip() and not line.strip().startswith("//"):
                break
            continue
        out.append((m.group(1), m.group(2).strip()))
    return out


def any_globals(source):
    """The scopes a .any.js test runs in that this engine has ("window", "dedicatedworker"),
    from `// META: global=` (WPT's default: window and dedicated worker)."""
    wanted = set()
    values = [v for k, v in metas(source) if k == "global"]
    for v in values:
        for g in v.split(","):
            g = g.strip()
            if g in ("window", "dedicatedworker"):
                wanted.add(g)
            elif g == "worker":
                wanted.add("dedicatedworker")
    return wanted if values else {"window", "dedicatedworker"}


def worker_script_for(script_name, source):
    """X.any.worker.js: testharness.js, the META scripts and the test, in a worker."""
    lines = ['importScripts("/resources/testharness.js");',
             "self.GLOBAL = { isWindow: () => false, isWorker: () => true, isShadowRealm: () => false };"]
    lines += [f"importScripts({s!r});" for k, s in metas(source) if k == "script"]
    lines += [f"importScripts({script_name!r});", "done();"]
    return "\n".join(lines) + "\n"


def wrapper_page(script_name, source, kind):
    """The generated page of a .window.js or .any.js test (window scope), as WPT serves it."""
    meta = metas(source)
    scripts = [v for k, v in meta if k == "script"]
    title = next((v for k, v in meta if k == "title"), None)
    timeout = "long" if ("timeout", "long") in meta else None
    head = ['<!doctype html>', '<meta charset="utf-8">']
    if timeout:
        head.append('<meta name="timeout" content="long">')
    if title:
        head.append(f"<title>{title}</title>")
    head += ['<script src="/resources/testharness.js"></script>',
             '<script src="/resources/testharnessreport.js"></script>']
    if kind == "worker":
        worker = script_name[: -len(".js")] + ".worker.js"
        head.append(f'<div id="log"></div>\n<script>fetch_tests_from_worker(new Worker("{worker}"));</script>')
        return "\n".join(head) + "\n"
    if kind == "any":
        head.append("<script>self.GLOBAL = { isWindow: () => true, isWorker: () => false, isShadowRealm: () => false };</script>")
    head += [f'<script src="{s}"></script>' for s in scripts]
    head.append(f'<div id="log"></div>\n<script src="{script_name}"></script>')
    return "\n".join(head) + "\n"


class Servers:
    """wptserve on every host and port; `ca_path` is the test CA to trust."""

    def __init__(self, tree, cert_dir):
        self.tree = os.path.abspath(tree)
        logger = logging.getLogger("wptserve")
        logger.setLevel(logging.WARNING)
        self.ssl_env = OpenSSLEnvironment(logger, base_path=cert_dir)
        builder = ConfigBuilder(
            logger,
            subdomains=SUBDOMAINS,
            not_subdomains=NOT_SUBDOMAINS,
            browser_host=BROWSER_HOST,
            alternate_hosts={"alt": ALT_HOST},
            doc_root=self.tree,
            ports=PORTS,
            ssl={"type": "none"},
        )
        self._builder = builder
        self.servers = []

    def __enter__(self):
        self.ssl_env.__enter__()
        self.config = self._builder.__enter__()
        hosts = sorted(self.config.domains_set | self.config.not_domains_set)
        self.ca_path = self.ssl_env.ca_cert_path(hosts)
        key, cert = self.ssl_env.host_cert_path(hosts)
        routes = make_routes(self.tree)
        for scheme, ports in PORTS.items():
            for port in ports:
                s = server.WebTestHttpd(
                    host="127.0.0.1", port=port, doc_root=self.tree, routes=routes,
                    use_ssl=scheme == "https", key_file=key if scheme == "https" else None,
                    certificate=cert if scheme == "https" else None, config=self.config)
                s.start()
                self.servers.append(s)
        return self

    def __exit__(self, *args):
        for s in self.servers:
            s.stop()
        self._builder.__exit__(*args)
        self.ssl_env.__exit__(*args)
