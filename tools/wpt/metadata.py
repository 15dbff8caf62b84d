"""Expectations in Servo's .ini format (wpt-metadata/<test path>.ini):

    [test.html]
      # why it does not pass
      expected: ERROR
      [a subtest]
        # why
        expected: FAIL

No file: everything is expected to pass (harness OK, subtests PASS). A test's section is
its URL's file name with the variant (`[x.any.worker.html?a]` in `x.any.js.ini`), as in
Servo's and wptrunner's metadata.

A folder's `__dir__.ini` may give the engine preferences for every test under it, as
wptrunner's metadata does (`prefs: [dom.testing.enabled:true, other.pref:3]`); a deeper
folder's value of a pref wins."""

import os

import manifest


def ini_path(metadata_root, test_path):
    """`/a/b.window.html` -> wpt-metadata/a/b.window.js.ini (named after the source file;
    the variant's query does not count)."""
    return os.path.join(metadata_root, manifest.source_url(test_path).lstrip("/") + ".ini")


def section_name(test_path):
    """`/a/x.any.html?b=/c` -> `x.any.html?b=/c`."""
    path, variant = manifest.split_query(test_path)
    return os.path.basename(path) + variant


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
    name = section_name(test_path)
    if not os.path.isfile(path):
        return Expectation()
    with open(path, encoding="utf-8") as f:
        return parse(f.read()).get(name, Expectation())


def dir_prefs(text):
    """The `prefs: [name:value, ...]` of a `__dir__.ini`, as {name: value}."""
    out = {}
    for raw in text.splitlines():
        s = raw.strip()
        if not s.startswith("prefs:"):
            continue
        body = s.split(":", 1)[1].strip()
        if not (body.startswith("[") and body.endswith("]")):
            raise ValueError(f"prefs: expected [name:value, ...], got {body!r}")
        for item in filter(None, (i.strip() for i in body[1:-1].split(","))):
            name, sep, value = item.partition(":")
            if not sep or not name.strip():
                raise ValueError(f"prefs: expected name:value, got {item!r}")
            out[name.strip()] = value.strip()
    return out


def prefs_for(metadata_root, test_path):
    """The preferences the `__dir__.ini` files from the metadata root down to the test's
    folder give it, outermost first (deeper ones win)."""
    folder = os.path.dirname(manifest.source_url(test_path).lstrip("/"))
    parts = [p for p in folder.split("/") if p]
    prefs = {}
    for depth in range(len(parts) + 1):
        path = os.path.join(metadata_root, *parts[:depth], "__dir__.ini")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                prefs.update(dir_prefs(f.read()))
    return prefs


def render(name, status, harness_comments, subtests):
    """The .ini text for one test; `subtests` is [(name, status, comments)] of non-PASS ones."""
    lines = ["[" + name.replace("]", "\\]") + "]"]
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
    reasons already written; one file holds every scope and variant of a source
    (x.any.js.ini has [x.any.html], [x.any.html?a] and [x.any.worker.html]); skipped tests
    get none. Returns the files written and removed."""
    files = {}
    for r in results:
        files.setdefault(ini_path(metadata_root, r["test"]), []).append(r)
    written, removed = [], []
    for path, rs in sorted(files.items()):
        sections = []
        for r in rs:
            if r["status"] == "SKIP":
                continue
            name = section_name(r["test"])
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
