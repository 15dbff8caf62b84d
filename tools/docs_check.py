#!/usr/bin/env python3
"""The docs check: every repository path the docs name exists, and every command they mark
runnable still runs as shown.

Reads README.md, ARCHITECTURE.md and docs/**/*.md (standard library only).

Paths. In inline code (`components/shell/src/browser.rs`) and in link targets
([guide](docs/shell.md), ![img](docs/report.png)), a repository path is a token that contains
a slash and whose first component is a top-level directory of the repository; a link target
is relative to the file it is in, and a `#section` after a Markdown file must name one of its
headings. Tokens holding a placeholder or glob (`*`, `?`, `{`, `<`, `…`, `...`, `$`, `=`) are
skipped, and so are URLs, absolute paths and `~/` paths. Fenced code blocks are output and
commands, not claims about the tree: their paths are not checked (a runnable block's are, by
running it).

Commands. A fenced block whose preceding non-blank line is the HTML comment
`<!-- runnable -->` (invisible once rendered) is run: each of its lines that starts with
`$ ` is a command (a trailing backslash continues it), run with bash from the repository
root in the block's order, and must exit 0, or N for `<!-- runnable exit=N -->`. `jsprof` is
the built binary, $JSPROF_TARGET_DIR/release/jsprof (default
~/.cache/jsprof/target/release/jsprof). Files the commands leave in the work tree are removed
afterwards; a command that changes a tracked file, or one that ends in `&` (a server), is a
problem. Mark only quick commands that need no network.

    python3 tools/docs_check.py               paths and runnable commands
    python3 tools/docs_check.py --paths-only  paths only (no build needed)
    python3 tools/docs_check.py --list        the runnable commands, not run
    python3 tools/docs_check.py --self-test   shows that a broken path and a failing
                                              command are caught (temporary files)

Exits 0 when nothing is wrong, 1 with a list of problems (file:line: what) otherwise.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC_FILES = ("README.md", "ARCHITECTURE.md")
DOC_DIR = "docs"
# A token with one of these is a placeholder, a glob or an elision, not a path.
PLACEHOLDER = re.compile(r"[*?{}<>\[\]$=…]|\.\.\.")
FENCE = re.compile(r"^\s*(```+|~~~+)")
RUNNABLE = re.compile(r"^\s*<!--\s*runnable(?:\s+exit=(\d+))?\s*-->\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def doc_files(root):
    files = [f for f in DOC_FILES if os.path.isfile(os.path.join(root, f))]
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, DOC_DIR)):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files


class Tree:
    """What exists in the repository: the files git knows (tracked, or new and not ignored),
    and the folders that hold them; on a tree that is no git work tree, the file system."""

    def __init__(self, root):
        self.root = root
        self.entries = None
        try:
            out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                                 cwd=root, capture_output=True, check=True).stdout.decode()
        except (OSError, subprocess.CalledProcessError):
            out = None
        if out is not None:
            self.entries = set()
            for path in out.split("\0"):
                if not path or not os.path.exists(os.path.join(root, path)):
                    continue  # deleted in the work tree, not yet in the index
                parts = path.split("/")
                for i in range(1, len(parts) + 1):
                    self.entries.add("/".join(parts[:i]))
        self.top = {e for e in os.listdir(root)
                    if os.path.isdir(os.path.join(root, e)) and e not in (".git", "target")}

    def exists(self, path):
        path = os.path.normpath(path)
        if path.startswith(".."):
            return False
        if self.entries is not None:
            return path in self.entries or path == "."
        return os.path.exists(os.path.join(self.root, path))


def strip_fences(lines):
    """Yields (line number, text, in_fence) for every line."""
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            yield number, line, True
        elif fence is not None:
            if m and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence) \
                    and line.strip() == m.group(1):
                fence = None
            yield number, line, True
        else:
            yield number, line, False


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for _number, line, in_fence in strip_fences(lines):
        m = None if in_fence else HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
    return result


def path_token(token, top):
    """The repository path a token of inline code names, or None."""
    token = token.strip("()[],;:'\"")
    token = re.sub(r":\d+(:\d+)?$", "", token)  # file:line
    token = token.split("#", 1)[0]
    if "/" not in token or PLACEHOLDER.search(token):
        return None
    if token.startswith(("/", "~", "./", "../")) or "://" in token or token.startswith(("file:", "data:", "blob:", "http:", "https:")):
        return None
    if token.split("/", 1)[0] not in top:
        return None
    return token


def check_paths(root, files=None):
    tree = Tree(root)
    problems = []
    anchor_cache = {}
    for rel in files or doc_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        prose = []
        for number, line, in_fence in strip_fences(lines):
            prose.append("" if in_fence else line)
        text = "\n".join(prose)
        line_starts = [0]
        for line in prose:
            line_starts.append(line_starts[-1] + len(line) + 1)

        def line_of(offset):
            lo, hi = 0, len(line_starts) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if line_starts[mid] <= offset:
                    lo = mid
                else:
                    hi = mid - 1
            return lo + 1

        # Inline code, not across a blank line.
        spans = []
        for m in CODE_SPAN.finditer(text):
            if "\n\n" in m.group(2):
                continue
            spans.append((m.start(), m.end()))
            for token in m.group(2).split():
                path = path_token(token, tree.top)
                if path and not tree.exists(path):
                    problems.append(f"{rel}:{line_of(m.start())}: `{path}` does not exist")
        # Links and images outside inline code.
        for m in LINK.finditer(text):
            if any(s <= m.start() < e for s, e in spans):
                continue
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
                continue
            path, _, anchor = target.partition("#")
            here = os.path.dirname(rel)
            resolved = os.path.normpath(os.path.join(here, path)) if path else rel
            where = f"{rel}:{line_of(m.start())}"
            if path and (PLACEHOLDER.search(path) or path.startswith("/")):
                problems.append(f"{where}: link `{target}` is not a repository path")
                continue
            if not tree.exists(resolved):
                problems.append(f"{where}: link `{target}` -> `{resolved}` does not exist")
                continue
            if anchor and resolved.endswith(".md"):
                if resolved not in anchor_cache:
                    anchor_cache[resolved] = anchors(os.path.join(root, resolved))
                if anchor not in anchor_cache[resolved]:
                    problems.append(f"{where}: link `{target}`: no heading `#{anchor}` in {resolved}")
    return problems


def runnable_blocks(root, files=None):
    """[(file, line, expected exit status, [(line, command)])] of the blocks marked runnable."""
    blocks = []
    for rel in files or doc_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        last_prose = None
        block = None
        for number, line, in_fence in strip_fences(lines):
            if not in_fence:
                if line.strip():
                    last_prose = line
                continue
            if block is None:
                m = RUNNABLE.match(last_prose or "")
                block = {"marked": bool(m), "exit": int(m.group(1) or 0) if m else 0,
                         "line": number, "commands": [], "open": None}
                last_prose = None
                continue
            if FENCE.match(line) and line.strip().startswith(("```", "~~~")):
                if block["marked"]:
                    blocks.append((rel, block["line"], block["exit"], block["commands"]))
                block = None
                continue
            if block["open"] is not None:
                start, text = block["open"]
                text += "\n" + line
                block["open"] = (start, text) if line.endswith("\\") else None
                if block["open"] is None:
                    block["commands"].append((start, text))
            elif line.startswith("$ "):
                if line.endswith("\\"):
                    block["open"] = (number, line[2:])
                else:
                    block["commands"].append((number, line[2:]))
    return blocks


def jsprof_binary():
    target = os.environ.get("JSPROF_TARGET_DIR", os.path.expanduser("~/.cache/jsprof/target"))
    return os.path.join(target, "release", "jsprof")


def untracked(root):
    try:
        out = subprocess.run(["git", "ls-files", "--others", "-z"], cwd=root,
                             capture_output=True, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return None
    return {p for p in out.split("\0") if p}


def tracked_changes(root):
    try:
        return subprocess.run(["git", "diff", "--name-only"], cwd=root, capture_output=True,
                              check=True).stdout.decode().split()
    except (OSError, subprocess.CalledProcessError):
        return []


def run_commands(root, files=None, timeout=1800, verbose=True):
    problems = []
    blocks = runnable_blocks(root, files)
    binary = jsprof_binary()
    bindir = tempfile.mkdtemp(prefix="docs-check-bin.")
    try:
        os.symlink(binary, os.path.join(bindir, "jsprof"))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        before = untracked(root)
        changed_before = set(tracked_changes(root))
        for rel, line, expected, commands in blocks:
            for number, command in commands:
                where = f"{rel}:{number}"
                if command.rstrip().endswith("&"):
                    problems.append(f"{where}: `{command}` starts a background process; "
                                    "it may not be marked runnable")
                    continue
                if command.split()[0] == "jsprof" and not os.access(binary, os.X_OK):
                    problems.append(f"{where}: `{command}`: {binary} is not built (./mach build)")
                    continue
                if verbose:
                    print(f"docs-check: {where}: $ {command}", file=sys.stderr, flush=True)
                try:
                    result = subprocess.run(["bash", "-c", command], cwd=root, env=env,
                                            stdin=subprocess.DEVNULL, capture_output=True,
                                            timeout=timeout)
                except subprocess.TimeoutExpired:
                    problems.append(f"{where}: `{command}` did not end within {timeout} s")
                    continue
                if result.returncode != expected:
                    tail = (result.stderr or result.stdout).decode(errors="replace").strip().splitlines()[-3:]
                    problems.append(f"{where}: `{command}` exited {result.returncode}, expected "
                                    f"{expected}" + "".join(f"\n    {t}" for t in tail))
        changed = set(tracked_changes(root)) - changed_before
        for path in sorted(changed):
            problems.append(f"a runnable command changed the tracked file {path}")
        after = untracked(root)
        if before is not None and after is not None:
            for path in sorted(after - before):
                try:
                    os.remove(os.path.join(root, path))
                except OSError:
                    pass
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    return problems


def report(problems, what):
    if problems:
        print(f"docs-check: {len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"docs-check: {what}: ok", file=sys.stderr)
    return 0


def self_test():
    """A tree made for the test: one good path, one broken, one link to a missing heading,
    one runnable command that fails, one whose expected failure is written down."""
    tmp = tempfile.mkdtemp(prefix="docs-check-self-test.")
    saved = os.environ.get("JSPROF_TARGET_DIR")
    try:
        os.makedirs(os.path.join(tmp, "components", "shell", "src"))
        os.makedirs(os.path.join(tmp, "docs"))
        os.makedirs(os.path.join(tmp, "target", "release"))
        open(os.path.join(tmp, "components", "shell", "src", "main.rs"), "w").close()
        fake = os.path.join(tmp, "target", "release", "jsprof")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = fails ] && exit 3\nexit 0\n")
        os.chmod(fake, 0o755)
        os.environ["JSPROF_TARGET_DIR"] = os.path.join(tmp, "target")
        with open(os.path.join(tmp, "docs", "guide.md"), "w") as f:
            f.write("# Guide\n\n## A section\n")
        with open(os.path.join(tmp, "README.md"), "w") as f:
            f.write("# Test\n\n"
                    "`components/shell/src/main.rs` is there; `components/shell/src/gone.rs` is not.\n"
                    "`components/*/src/` is a glob and `tests/x` names no top-level folder.\n"
                    "[a guide](docs/guide.md#a-section), [no such section](docs/guide.md#nowhere).\n\n"
                    "<!-- runnable -->\n```\n$ jsprof works\nok\n$ jsprof fails\n```\n\n"
                    "<!-- runnable exit=3 -->\n```\n$ jsprof fails\n```\n\n"
                    "```\n$ jsprof fails   # not marked: never run\n```\n")
        paths = check_paths(tmp)
        commands = run_commands(tmp, verbose=False)
        expected_paths = ["README.md:3: `components/shell/src/gone.rs` does not exist",
                          "README.md:5: link `docs/guide.md#nowhere`: no heading `#nowhere` in docs/guide.md"]
        ok = True
        if paths != expected_paths:
            print(f"self-test: paths: expected {expected_paths}, got {paths}", file=sys.stderr)
            ok = False
        if len(commands) != 1 or not commands[0].startswith("README.md:11: `jsprof fails` exited 3, expected 0"):
            print(f"self-test: commands: expected one failure at README.md:11, got {commands}", file=sys.stderr)
            ok = False
        print("docs-check self-test: the check reports:", file=sys.stderr)
        for p in paths + commands:
            print(f"  {p}", file=sys.stderr)
        print("docs-check self-test: " + ("ok: the broken path, the missing heading and the failing "
                                          "command were caught, nothing else" if ok else "FAILED"),
              file=sys.stderr)
        return 0 if ok else 1
    finally:
        if saved is None:
            os.environ.pop("JSPROF_TARGET_DIR", None)
        else:
            os.environ["JSPROF_TARGET_DIR"] = saved
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths-only", action="store_true", help="check the paths, run nothing")
    parser.add_argument("--list", action="store_true", help="list the runnable commands, run nothing")
    parser.add_argument("--self-test", action="store_true",
                        help="show that a broken path and a failing command are caught")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a command may take (1800)")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if args.list:
        for rel, _line, expected, commands in runnable_blocks(ROOT):
            for number, command in commands:
                print(f"{rel}:{number}: $ {command}" + (f"   (exit {expected})" if expected else ""))
        return 0
    problems = check_paths(ROOT)
    if args.paths_only:
        return report(problems, "paths")
    problems += run_commands(ROOT, timeout=args.timeout)
    return report(problems, "paths and runnable commands")


if __name__ == "__main__":
    sys.exit(main())
