#!/usr/bin/env python3
"""Drives jsprof with Selenium: opens a page that profiles itself, forces samples while one
of its functions runs, minimises the window, and prints what the trace holds.

    jsprof --webdriver 4444 &                 # (./mach run --webdriver 4444)
    python3 examples/webdriver/selenium_session.py 4444

Needs `selenium` (./mach bootstrap puts it in ~/.cache/jsprof/wpt-tools/venv). The page is
served by a real HTTP server started here, with `Document-Policy: js-profiling` and a
`/release` switch the session flips.
"""

import http.server
import os
import sys
import threading

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions

HERE = os.path.dirname(os.path.abspath(__file__))
released = threading.Event()


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=HERE, **kwargs)

    def end_headers(self):
        self.send_header("Document-Policy", "js-profiling")
        super().end_headers()

    def do_GET(self):
        if self.path != "/release":
            return super().do_GET()
        body = b"go" if released.is_set() else b"wait"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main(port):
    http.server.ThreadingHTTPServer.request_queue_size = 128
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = ArgOptions()
    options.set_capability("browserName", "jsprof")
    driver = webdriver.Remote(f"http://127.0.0.1:{port}", options=options)
    # The spec's Force Sample extension command.
    driver.command_executor.add_command("forceSample", "POST", "/session/$sessionId/forcesample")
    print("browser:", driver.capabilities["browserName"], driver.capabilities["browserVersion"])
    driver.get(f"http://127.0.0.1:{server.server_port}/index.html")
    print("title:", driver.title)

    driver.find_element(By.ID, "start").click()       # waitForRelease() starts running
    for _ in range(3):
        driver.execute("forceSample")                 # sampled at once, script running
    driver.minimize_window()                          # hidden: the session is paused
    driver.execute("forceSample")                     # so this one takes no sample
    driver.maximize_window()
    driver.execute("forceSample")
    released.set()                                    # waitForRelease() returns
    print("visibility:", driver.execute_script("return document.visibilityState"))

    trace = driver.execute_async_script("profiler.stop().then(arguments[0])")
    for sample in trace["samples"]:
        frame = trace["frames"][trace["stacks"][sample["stackId"]]["frameId"]]
        print(f"sample at {sample['timestamp']:8.1f} ms: {frame['name']} "
              f"(line {frame['line']}, column {frame['column']})")
    driver.quit()
    server.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4444)
