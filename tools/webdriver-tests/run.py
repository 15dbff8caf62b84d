#!/usr/bin/env python3
"""Drives jsprof's WebDriver server with clients nobody here wrote (tools/webdriver-tests/README.md).

    python3 tools/webdriver-tests/run.py [--engine jsprof|servo] [--jsprof PATH] [-k PYTEST_EXPR]
                                         [--no-smoke] [--verbose] [-- PYTEST_ARGS...]

Bootstraps its tools (Selenium and pytest, pinned by requirements.txt here, into the WPT tools'
virtualenv $JSPROF_WPT_TOOLS/venv, default ~/.cache/jsprof/wpt-tools/venv; WebdriverIO, pinned
by package-lock.json here, into $JSPROF_WEBDRIVER_TOOLS, default ~/.cache/jsprof/webdriver-tools),
serves pages/ here from two local HTTP servers (two origins, every response with
`Document-Policy: js-profiling`), starts `jsprof --webdriver 0`, runs the Selenium tests
(test_selenium.py, pytest), then the WebdriverIO smoke test (smoke.mjs), then stops jsprof with
SIGTERM and checks that it exits 0 within 10 s; then the same for a jsprof whose page's script
never ends (pages/busy.html; not with -k). Prints a closing `N passed, N failed` line; exits 1
if a check failed, 2 if jsprof or the tools could not be had.

With --engine servo the browser is `jsprof-servo --webdriver 0` (Servo with jsprof,
integrations/servo; --jsprof defaults to its build), the same server in front of Servo: the same
tests, told the engine by JSPROF_ENGINE (test_selenium.py skips, with its reason, what Servo
cannot do).
"""

import argparse
import contextlib
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import toolboot  # noqa: E402
from toolboot import Unavailable, log, npm_ci, read_bytes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAGES = os.path.join(HERE, "pages")
WPT_TOOLS = os.path.abspath(os.environ.get("JSPROF_WPT_TOOLS") or os.path.expanduser("~/.cache/jsprof/wpt-tools"))
VENV = os.path.join(WPT_TOOLS, "venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
# What was last installed into the venv from requirements.txt (a copy of it).
VENV_STAMP = os.path.join(VENV, "jsprof-webdriver-tests.requirements.txt")
NPM_TOOLS = os.path.abspath(os.environ.get("JSPROF_WEBDRIVER_TOOLS")
                            or os.path.expanduser("~/.cache/jsprof/webdriver-tools"))
NPM_PACKAGES = ("webdriverio",)
DEFAULT_JSPROF = os.path.expanduser("~/.cache/jsprof/target/release/jsprof")
DEFAULT_JSPROF_SERVO = os.path.join(os.path.abspath(os.environ.get("JSPROF_SERVO_DIR")
                                                    or os.path.expanduser("~/.cache/jsprof/servo")),
                                    "target", "release", "jsprof-servo")
LISTENING = re.compile(r"WebDriver listening on (http://127\.0\.0\.1:(\d+))")


# --- bootstrap ---------------------------------------------------------------------------

def tail(r, lines=15):
    return toolboot.tail(r.stdout + r.stderr, lines)


def bootstrap_python():
    """Selenium and pytest in the WPT tools' venv (made if missing), installed when
    requirements.txt differs from what was installed last."""
    wanted = read_bytes(os.path.join(HERE, "requirements.txt"))
    if not os.path.exists(VENV_PYTHON):
        log(f"bootstrap: python3 -m venv {VENV}")
        r = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, text=True)
        if r.returncode != 0:
            raise Unavailable(f"python3 -m venv {VENV} failed:\n{tail(r)}")
    importable = subprocess.run([VENV_PYTHON, "-c", "import selenium, pytest"], capture_output=True).returncode == 0
    if read_bytes(VENV_STAMP) != wanted or not importable:
        log(f"bootstrap: pip install --no-deps -r requirements.txt into {VENV}")
        # --no-deps: every package, dependencies included, is pinned there (see its header).
        r = subprocess.run([VENV_PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                            "-r", os.path.join(HERE, "requirements.txt")], capture_output=True, text=True)
        if r.returncode != 0:
            with contextlib.suppress(FileNotFoundError):
                os.remove(VENV_STAMP)
            raise Unavailable(f"pip install -r requirements.txt failed (exit {r.returncode}):\n{tail(r)}")
        with open(VENV_STAMP, "wb") as f:
            f.write(wanted)
    r = subprocess.run([VENV_PYTHON, "-c", "import selenium, pytest; print(selenium.__version__, pytest.__version__)"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Unavailable(f"selenium or pytest still cannot be imported:\n{tail(r)}")
    selenium, pytest = r.stdout.split()
    return {"selenium": selenium, "pytest": pytest}


def bootstrap_node():
    """Node, npm and the pinned WebdriverIO, `npm ci`'d into NPM_TOOLS when package.json or
    package-lock.json differ from the copies there, or a package is missing."""
    return npm_ci(HERE, NPM_TOOLS, NPM_PACKAGES)


# --- the pages' HTTP servers -----------------------------------------------------------------

class Release:
    """The switch forcesample.html's holdUntilReleased() polls: GET /release answers `wait`
    (after holding the request up to 100 ms) until the test asks /release/go, then `go`."""

    def __init__(self):
        self.cond = threading.Condition()
        self.go = False
        self.entered = False

    def poll(self):
        with self.cond:
            self.entered = True
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.go, timeout=0.1)
            return "go" if self.go else "wait"

    def set_go(self):
        with self.cond:
            self.go = True
            self.cond.notify_all()
        return "ok"

    def reset(self):
        with self.cond:
            self.go = self.entered = False
        return "ok"

    def wait_entered(self, timeout):
        with self.cond:
            return "yes" if self.cond.wait_for(lambda: self.entered, timeout=timeout) else "no"


class Handler(http.server.SimpleHTTPRequestHandler):
    """pages/, with {{ORIGIN}} and {{ORIGIN2}} in HTML replaced by the two servers' origins;
    /release, /release/go, /release/entered?timeout=S and /reset-release; every response
    with `Document-Policy: js-profiling` and `Cache-Control: no-store`."""

    origins = {}
    release = None

    def __init__(self, *args, **kw):
        super().__init__(*args, directory=PAGES, **kw)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        control = {
            "/release": self.release.poll,
            "/release/go": self.release.set_go,
            "/reset-release": self.release.reset,
            "/release/entered": lambda: self.release.wait_entered(
                float(urllib.parse.parse_qs(url.query).get("timeout", ["10"])[0])),
        }.get(url.path)
        if control is not None:
            return self.send_text(control(), "text/plain")
        path = self.translate_path(url.path)
        if path.endswith(".html") and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for name, origin in self.origins.items():
                text = text.replace("{{" + name + "}}", origin)
            return self.send_text(text, "text/html; charset=utf-8")
        return super().do_GET()

    def send_text(self, text, content_type):
        body = text.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self):
        self.send_header("Document-Policy", "js-profiling")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve_pages():
    """Two servers of pages/ on 127.0.0.1 (free ports, so two origins) sharing one Release;
    yields their origins and the Release."""
    release = Release()
    handler = type("PagesHandler", (Handler,), {"release": release, "origins": {}})
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    origins = [f"http://127.0.0.1:{s.server_address[1]}" for s in servers]
    handler.origins.update(ORIGIN=origins[0], ORIGIN2=origins[1])
    for s in servers:
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        yield origins[0], origins[1], release
    finally:
        for s in servers:
            s.shutdown()
            s.server_close()


# --- jsprof ------------------------------------------------------------------------------------

class Jsprof:
    """`jsprof --webdriver 0 [PAGE]`, its output kept in a log file."""

    def __init__(self, exe, log_path, page=None):
        self.log_path = log_path
        self.log = open(log_path, "w", encoding="utf-8", errors="replace")
        self.proc = subprocess.Popen([exe, "--webdriver", "0", *([page] if page else [])], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.PIPE, text=True, errors="replace")
        self.url = None
        self.port = None
        found = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.write(line)
                self.log.flush()
                m = LISTENING.search(line)
                if m and not found.is_set():
                    self.url, self.port = m.group(1), int(m.group(2))
                    found.set()
            found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        found.wait(timeout=60)

    def output(self, lines=40):
        if not self.log.closed:
            self.log.flush()
        text = read_bytes(self.log_path) or b""
        return "\n".join(text.decode("utf-8", "replace").splitlines()[-lines:])

    def stop(self):
        """SIGTERM; returns (exit status or None if still running after 10 s, seconds taken)."""
        start = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
            self.proc.kill()
            self.proc.wait()
        took = time.monotonic() - start
        self.reader.join(timeout=5)
        self.log.close()
        return rc, took


# --- the runs --------------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, name):
        self.passed += 1
        log(f"ok {name}")

    def fail(self, name, why):
        self.failed += 1
        log(f"FAIL {name}: {why}")


def run_selenium(results, env, work, args):
    """pytest over test_selenium.py in the venv; counts its tests from its JUnit XML."""
    junit = os.path.join(work, "selenium.xml")
    cmd = [VENV_PYTHON, "-m", "pytest", os.path.join(HERE, "test_selenium.py"), "-p", "no:cacheprovider",
           "-v", "-rfE", "--tb=short", "--color=no",
           # Selenium warns about its own use of RemoteConnection for a command_executor URL.
           "-W", "ignore:setting remote_server_addr:DeprecationWarning", f"--junitxml={junit}"]
    if args.k:
        cmd += ["-k", args.k]
    cmd += args.pytest_args
    log("selenium: " + " ".join(os.path.relpath(c, ROOT) if c.startswith(HERE) else c for c in cmd[1:]))
    try:
        rc = subprocess.run(cmd, cwd=HERE, env=env, timeout=900).returncode
    except subprocess.TimeoutExpired:
        results.fail("selenium", "pytest did not finish within 900 s")
        return
    try:
        suites = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        results.fail("selenium", f"pytest exited {rc} without a report ({e})")
        return
    for case in suites.iter("testcase"):
        name = f"selenium {case.get('name')}"
        problem = next((c for c in case if c.tag in ("failure", "error")), None)
        if problem is not None:
            results.fail(name, (problem.get("message") or "").splitlines()[0][:300] if problem.get("message") else "failed")
        elif next((c for c in case if c.tag == "skipped"), None) is None:
            results.passed += 1
    if rc not in (0, 1):
        results.fail("selenium", f"pytest exited {rc}")


def run_smoke(results, env):
    """smoke.mjs: one `ok NAME` or `FAIL NAME: why` line per check."""
    try:
        r = subprocess.run(["node", os.path.join(HERE, "smoke.mjs")], cwd=HERE, env=env,
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        results.fail("webdriverio", "smoke.mjs did not finish within 120 s")
        return
    counted = 0
    for line in r.stdout.splitlines():
        if line.startswith("ok "):
            counted += 1
            results.ok(f"webdriverio {line[3:]}")
        elif line.startswith("FAIL "):
            counted += 1
            results.fail(f"webdriverio {line[5:].split(':', 1)[0]}", line[5:].split(":", 1)[-1].strip())
        elif line.strip():
            log(f"webdriverio: {line}")
    if r.returncode != 0 or counted == 0:
        results.fail("webdriverio", f"node smoke.mjs exited {r.returncode}: {r.stderr.strip()[-1500:]}")


def stop_check(results, name, server, alive=True):
    """SIGTERMs `server`; it must exit 0 within 10 s."""
    rc, took = server.stop()
    if not alive:
        results.fail(name, f"jsprof had already exited ({rc}) before SIGTERM")
    elif rc is None:
        results.fail(name, "still running 10 s after SIGTERM (killed)")
    elif rc != 0:
        results.fail(name, f"exit status {rc} after SIGTERM")
    else:
        results.ok(f"{name} ({took:.2f} s)")
        return True
    return False


def check_sigterm_while_busy(results, exe, work, origin, release):
    """A jsprof whose page's script never ends (pages/busy.html, the page it opens first), with
    a session: SIGTERM must still end it, with status 0, within 10 s."""
    name = "jsprof-exits-0-on-sigterm-while-a-script-runs"
    release.reset()
    server = Jsprof(exe, os.path.join(work, "jsprof-busy.log"), page=f"{origin}/busy.html")
    if server.url is None:
        server.stop()
        results.fail(name, "no 'WebDriver listening' line within 60 s:\n" + server.output())
        return
    try:
        if release.wait_entered(30) != "yes":
            raise RuntimeError("pages/busy.html's script never started")
        body = json.dumps({"capabilities": {"alwaysMatch": {"browserName": "jsprof"}}}).encode()
        req = urllib.request.Request(f"{server.url}/session", data=body, method="POST",
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        with urllib.request.urlopen(req, timeout=30) as r:
            json.load(r)["value"]["sessionId"]
    except Exception as e:  # noqa: BLE001 (any failure here is this check's)
        server.stop()
        results.fail(name, f"{type(e).__name__}: {e}")
        return
    if not stop_check(results, name, server, server.proc.poll() is None):
        log(f"--- the last lines of jsprof's output ---\n{server.output()}\n---")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=("jsprof", "servo"), default="jsprof",
                    help="the browser: jsprof, or jsprof-servo (Servo with jsprof)")
    ap.add_argument("--jsprof", help=f"the jsprof binary (default {DEFAULT_JSPROF}), or with --engine servo "
                                     f"jsprof-servo's (default {DEFAULT_JSPROF_SERVO})")
    ap.add_argument("-k", help="run only the Selenium tests pytest's -k EXPR selects")
    ap.add_argument("--no-smoke", action="store_true", help="skip the WebdriverIO smoke test")
    ap.add_argument("--verbose", action="store_true", help="print jsprof's log at the end even if all passed")
    ap.add_argument("--bootstrap-only", action="store_true",
                    help="install Selenium, pytest and WebdriverIO if missing, then exit (./mach bootstrap)")
    ap.add_argument("pytest_args", nargs="*", help="after --: more arguments for pytest (-x, -s...)")
    args = ap.parse_args()
    start = time.monotonic()
    jsprof = os.path.abspath(os.path.expanduser(args.jsprof or (DEFAULT_JSPROF_SERVO if args.engine == "servo"
                                                                else DEFAULT_JSPROF)))
    if args.bootstrap_only:
        try:
            versions = {**bootstrap_python(), **bootstrap_node()}
        except Unavailable as e:
            log(f"webdriver-tests: {e}")
            return 2
        log("webdriver-tests: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        return 0
    if not os.access(jsprof, os.X_OK):
        log(f"webdriver-tests: {jsprof} is not an executable {'jsprof-servo' if args.engine == 'servo' else 'jsprof'}")
        return 2
    try:
        versions = bootstrap_python()
        if not args.no_smoke:
            versions.update(bootstrap_node())
    except Unavailable as e:
        log(f"webdriver-tests: cannot run the tests: {e}")
        return 2
    log(f"webdriver-tests: {args.engine} ({jsprof}), " + ", ".join(f"{k} {v}" for k, v in versions.items())
        + f" (bootstrap {time.monotonic() - start:.1f} s)")

    results = Results()
    work = tempfile.mkdtemp(prefix="jsprof-webdriver-tests-")
    try:
        with serve_pages() as (origin, origin2, release):
            server = Jsprof(jsprof, os.path.join(work, "jsprof.log"))
            if server.url is None:
                rc, _ = server.stop()
                results.fail("jsprof-listens", f"no 'WebDriver listening' line within 60 s (exit {rc}):\n"
                             + server.output())
            else:
                results.ok(f"jsprof-listens on {server.url}")
                env = dict(os.environ, JSPROF_WEBDRIVER_URL=server.url, JSPROF_WEBDRIVER_PORT=str(server.port),
                           JSPROF_PAGES=origin, JSPROF_PAGES2=origin2, JSPROF_WEBDRIVER_TOOLS=NPM_TOOLS,
                           JSPROF_ENGINE=args.engine,
                           PYTHONDONTWRITEBYTECODE="1",
                           # Selenium Manager never runs for a Remote driver; were it to, offline.
                           SE_OFFLINE="true")
                run_selenium(results, env, work, args)
                if not args.no_smoke:
                    run_smoke(results, env)
                stop_check(results, "jsprof-exits-0-on-sigterm", server, server.proc.poll() is None)
            if results.failed or args.verbose:
                log(f"--- the last lines of jsprof's output ---\n{server.output()}\n---")
            if not args.k:
                check_sigterm_while_busy(results, jsprof, work, origin, release)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"webdriver-tests: took {time.monotonic() - start:.1f} s")
    log(f"webdriver-tests: {results.passed} passed, {results.failed} failed")
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
