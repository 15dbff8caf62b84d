"""Bootstrapping the test suites' third-party tools (tools/export-readers,
tools/webdriver-tests): Debian packages through apt-get, Node and npm, and npm packages
pinned by a checked-in package-lock.json, `npm ci`'d into a cache directory outside the work
tree. A tool that cannot be had raises `Unavailable` with what to do."""

import json
import os
import shutil
import subprocess


def log(msg):
    print(msg, flush=True)


class Unavailable(Exception):
    """A tool the checks need is missing and could not be installed."""


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


def apt_install(packages):
    """`apt-get install -y PACKAGES` (after `apt-get update`), printing what it installs."""
    if shutil.which("apt-get") is None:
        raise Unavailable(f"{' '.join(packages)} missing, and there is no apt-get to install it with")
    if os.geteuid() != 0:
        raise Unavailable(f"{' '.join(packages)} missing; install it as root: apt-get install -y {' '.join(packages)}")
    log(f"bootstrap: apt-get install -y {' '.join(packages)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = subprocess.run(["apt-get", "install", "-y", *packages], env=env,
                       capture_output=True, text=True)
    installed = [l.split(" ", 2)[2] for l in r.stdout.splitlines() if l.startswith("Setting up ")]
    for line in installed:
        log(f"bootstrap:   installed {line.rstrip('. ')}")
    if r.returncode != 0:
        raise Unavailable(f"apt-get install {' '.join(packages)} failed (exit {r.returncode}):\n{tail(r.stdout + r.stderr)}")


def ensure_node():
    """Node and npm (the machine's nodejs package carries npm; Debian's own needs its npm
    package too)."""
    for pkg, exe in (("nodejs", "node"), ("npm", "npm")):
        if shutil.which(exe) is None:
            apt_install([pkg])
    for exe in ("node", "npm"):
        if shutil.which(exe) is None:
            raise Unavailable(f"{exe} is still missing after apt-get install")


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def npm_ci(source, tools, packages):
    """The npm packages pinned by `source`'s package.json and package-lock.json, `npm ci`'d
    into `tools` when the copies there differ or a package is missing (no install scripts:
    none may fetch a browser or a driver). Returns {package: version}, and node's."""
    ensure_node()
    os.makedirs(tools, exist_ok=True)
    wanted = {name: read_bytes(os.path.join(source, name)) for name in ("package.json", "package-lock.json")}
    current = {name: read_bytes(os.path.join(tools, name)) for name in wanted}
    have_all = all(os.path.exists(os.path.join(tools, "node_modules", p, "package.json")) for p in packages)
    if current != wanted or not have_all:
        log(f"bootstrap: npm ci of {', '.join(packages)} into {tools}")
        for name, data in wanted.items():
            with open(os.path.join(tools, name), "wb") as f:
                f.write(data)
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=tools,
                           capture_output=True, text=True)
        if r.returncode != 0:
            # Leave no stale lock behind, so that the next run tries again.
            os.remove(os.path.join(tools, "package-lock.json"))
            raise Unavailable(f"npm ci in {tools} failed (exit {r.returncode}):\n{tail(r.stdout + r.stderr)}")
    versions = {p: json.loads(read_bytes(os.path.join(tools, "node_modules", p, "package.json")))["version"]
                for p in packages}
    versions["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return versions
