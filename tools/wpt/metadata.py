"""Expectations in Servo's .ini format (wpt-metadata/<test path>.ini):

    [test.html]
      # why it does not pass
      expected: ERROR
      [a subtest]
        # why
        expected: FAIL

No file: everything is expected to pass (harness OK, subtests PASS)."""

import os


def ini_path(metadata_root, test_path):
    """`/a/b.window.html` -> wpt-metadata/a/b.window.js.ini (named after the source file)."""
    rel = test_path.lstrip("/")
    for suffix, source in ((".window.html", ".window.js"), (".any.worker.html", ".any.js"), (".any.html", ".any.js")):
        if rel.endswith(suffix):
            rel = rel[: -len(suffix)] + source
            break
    return os.path.join(metadata_root, rel + ".ini")


class Expectation:
    def __init__(self):
        self.status = "OK"
        self.comments = []
        self.subtests = {}  # name -> (status, comments)


def parse(text):
    """{section name: Expectation}."""
    out = {}
    current, sub, comments = None, None, []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        s = line.strip()
        if s.startswith("#"):
            comments.append(s[1:].strip())
        elif s.startswith("[") and s.endswith("]"):
            name = s[1:-1].replace("\\]", "]")
            if indent == 0:
                current = out.setdefault(name, Expectation())
                current.comments += comments
                sub = None
            else:
                sub = name
                current.subtests[sub] = ("PASS", comments)
            comments = []
        elif s.startswith("expected:") and current is not None:
            value = s.split(":", 1)[1].strip()
            if sub is None:
                current.status = value
                current.comments += comments
            else:
                current.subtests[sub] = (value, current.subtests[sub][1] + comments)
            comments = []
    return out


def load(metadata_root, test_path):
    path = ini_path(metadata_root, test_path)
    name = os.path.basename(test_path)
    if not os.path.isfile(path):
        return Expectation()
    with open(path, encoding="utf-8") as f:
        return parse(f.read()).get(name, Expectation())


def render(name, status, harness_comments, subtests):
    """The .ini text for one test; `subtests` is [(name, status, comments)] of non-PASS ones."""
    lines = [f"[{name}]"]
    if status != "OK":
        lines += [f"  # {c}" for c in harness_comments] or ["  # TODO: say why"]
        lines.append(f"  expected: {status}")
    for sub, st, comments in subtests:
        lines.append("  [" + sub.replace("]", "\\]") + "]")
        lines += [f"    # {c}" for c in comments] or ["    # TODO: say why"]
        lines.append(f"    expected: {st}")
    return "\n".join(lines) + "\n"


def update(metadata_root, results):
    """Rewrites expectation files from a run's results (wptreport JSON `results`), keeping the
    reasons already written; one file holds every variant of a source (x.any.js.ini has
    [x.any.html] and [x.any.worker.html]). Returns the files written and removed."""
    files = {}
    for r in results:
        files.setdefault(ini_path(metadata_root, r["test"]), []).append(r)
    written, removed = [], []
    for path, rs in sorted(files.items()):
        sections = []
        for r in rs:
            name = os.path.basename(r["test"])
            old = load(metadata_root, r["test"])
            bad = [(s["name"], s["status"]) for s in r["subtests"] if s["status"] != "PASS"]
            if r["status"] == "OK" and not bad:
                continue
            subs = [(n, st, old.subtests.get(n, (None, []))[1]) for n, st in bad]
            sections.append(render(name, r["status"], old.comments, subs))
        if not sections:
            if os.path.isfile(path):
                os.remove(path)
                removed.append(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(sections))
        written.append(path)
    return written, removed
