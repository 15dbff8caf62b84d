"""What the traces hold, read from their JSON, and the judging of what each reader read
(tools/export-readers/README.md). run.py runs the readers; this file only compares."""

import collections
import gzip
import json
import os
import re
import struct

# --- what the traces hold ---------------------------------------------------------------

# A function's identity, as jsprof merges frames: name, resource URL, line, column.
Fn = collections.namedtuple("Fn", "name url line column")


def pseudo_label(sample):
    """The pseudo-frame jsprof's exports give a sample without a stack (model.rs, Empty)."""
    return {"script": "(program)", "gc": "(garbage collector)"}.get(sample.get("marker"), "(idle)")


def read_traces(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, list) else [data]


class Expect:
    """What a set of traces holds, read straight from their JSON: every sample's call path
    (root first; a pseudo-frame's label for a sample without a stack)."""

    def __init__(self, traces, title):
        self.title = title
        self.traces = len(traces)
        self.paths = collections.Counter()
        self.first_trace_paths = None
        for trace in traces:
            resources = trace.get("resources", [])
            fns = []
            for fr in trace["frames"]:
                rid = fr.get("resourceId")
                fns.append(Fn(fr["name"], resources[rid] if rid is not None else None, fr.get("line"), fr.get("column")))
            stacks = []
            for st in trace["stacks"]:
                parent = st.get("parentId")
                stacks.append((stacks[parent] if parent is not None else ()) + (fns[st["frameId"]],))
            paths = collections.Counter(
                stacks[s["stackId"]] if s.get("stackId") is not None else pseudo_label(s) for s in trace["samples"])
            self.paths.update(paths)
            if self.first_trace_paths is None:
                self.first_trace_paths = paths
        self.samples = sum(self.paths.values())

    @staticmethod
    def functions_of(paths):
        fns = {}
        for p in paths:
            if isinstance(p, tuple):
                for f in p:
                    fns[f] = True
        return list(fns)

    @staticmethod
    def pseudo_of(paths):
        return collections.Counter({p: n for p, n in paths.items() if isinstance(p, str)})

    @property
    def functions(self):
        return self.functions_of(self.paths)

    @property
    def pseudo(self):
        return self.pseudo_of(self.paths)

    def self_counts(self):
        counts = collections.Counter()
        for p, n in self.paths.items():
            if isinstance(p, tuple):
                counts[p[-1]] += n
        return counts

    def total_counts(self):
        counts = collections.Counter()
        for p, n in self.paths.items():
            if isinstance(p, tuple):
                for f in set(p):
                    counts[f] += n
        return counts

    def top(self, share=0.0):
        """The function with the most self samples, if it has them alone and at least
        `share` of all samples; else None."""
        ranked = self.self_counts().most_common(2)
        if not ranked or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]) or ranked[0][1] < share * self.samples:
            return None
        return ranked[0][0]

    def flame_nodes(self):
        """The call-path prefixes a flame graph draws a frame for (pseudo-frames are roots)."""
        nodes = set()
        for p in self.paths:
            if isinstance(p, str):
                nodes.add((p,))
            else:
                nodes.update(p[:i] for i in range(1, len(p) + 1))
        return nodes


def display_name(f):
    return f.name or "(anonymous)"


def label(f):
    """Frame::label, as the folded stacks write it (`;` to `,`, line breaks to spaces)."""
    s = display_name(f)
    if f.url is not None:
        s += f" ({f.url}"
        if f.line is not None:
            s += f":{f.line}"
            if f.column is not None:
                s += f":{f.column}"
        s += ")"
    return s.replace(";", ",").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


# --- speedscope -------------------------------------------------------------------------

# How speedscope (1.25) names and keys the functions of each format, from its importers:
# Chrome's (.cpuprofile, Trace Event) keys a call frame by name, URL, line and column, names
# an unnamed one `(anonymous FILE:LINE)`, and drops the `(root)` and `(idle)` nodes; pprof's
# keys a function by name, file and start line; folded stacks key a frame by its text; its
# own format keeps the file's frames as they are. `importer` is the line it logs.
def chrome_name(f):
    if f.name:
        return f.name
    if f.url:
        return f"(anonymous {f.url.split('/')[-1]}:{f.line if f.line is not None else 0})"
    return "(anonymous)"


SPEEDSCOPE = {
    "cpuprofile": {
        "importer": "Importing as Chrome CPU Profile",
        "key": lambda f: (f.name, f.url, f.line, f.column), "name": chrome_name, "drop": {"(idle)"}},
    "trace-event": {
        "importer": "Importing as Chrome Timeline Object",
        "key": lambda f: (f.name, f.url, f.line, f.column), "name": chrome_name, "drop": {"(idle)"}},
    "speedscope": {
        "importer": "Importing as speedscope json file",
        "key": lambda f: f, "name": display_name, "drop": set()},
    "pprof": {
        "importer": "Importing as protobuf encoded pprof file",
        "key": lambda f: (display_name(f), f.url or "", f.line or 0), "name": display_name, "drop": set()},
    "folded": {
        "importer": "Importing as collapsed stack format",
        "key": label, "name": label, "drop": set()},
}


def speedscope_expected(kind, expect, export_path):
    """(title, sorted row names) speedscope should show for this export."""
    how = SPEEDSCOPE[kind]
    if kind == "speedscope":
        # The active profile (the first trace: jsprof writes activeProfileIndex 0).
        paths = expect.first_trace_paths
        with open(export_path, encoding="utf-8") as f:
            written = json.load(f)
        title = written["profiles"][written.get("activeProfileIndex", 0)]["name"]
    else:
        paths = expect.paths
        title = os.path.basename(export_path)  # these formats carry no name: speedscope shows the file's
    rows = {}
    for f in expect.functions_of(paths):
        rows.setdefault(how["key"](f), how["name"](f))
    names = sorted(rows.values()) + sorted(p for p in expect.pseudo_of(paths) if p not in how["drop"])
    return title, sorted(names)


def check_speedscope(kind, expect, export_path, seen):
    problems = []
    if seen.get("error"):
        return [f"speedscope did not show the profile: {seen['error']}",
                f"its console: {[l for l in seen.get('consoleErrors', [])][:3]}"]
    for what in ("pageErrors", "consoleErrors", "dialogs", "failedRequests"):
        if seen.get(what):
            problems.append(f"{what}: {seen[what][:3]}")
    how = SPEEDSCOPE[kind]
    if seen.get("importer") != how["importer"]:
        problems.append(f"importer: {seen.get('importer')!r}, wanted {how['importer']!r}")
    title, names = speedscope_expected(kind, expect, export_path)
    if seen.get("title") != title:
        problems.append(f"title {seen.get('title')!r}, wanted {title!r}")
    # The page's title is the file's name: the one jsprof wrote in its own format (the
    # input's file name, or "N traces"), else the export's file name.
    doc_title = f"{expect.title if kind == 'speedscope' else os.path.basename(export_path)} - speedscope"
    if seen.get("documentTitle") != doc_title:
        problems.append(f"document title {seen.get('documentTitle')!r}, wanted {doc_title!r}")
    if seen.get("scrolls"):
        problems.append("the sandwich table scrolls: not every function was read")
    got = sorted(r["name"] for r in seen.get("rows", []))
    if got != names:
        problems.append(f"{len(got)} functions {got}, wanted {len(names)} {names}")
    if kind == "folded":
        # Weights are sample counts here: the functions' self counts add up to every sample.
        total = sum(int(r["self"].split(" ")[0]) for r in seen.get("rows", []))
        if total != expect.samples:
            problems.append(f"self counts add up to {total}, wanted {expect.samples} samples")
    # speedscope sorts the table by self time: a function with most of the samples leads it.
    top = expect.top(share=0.75) if kind != "speedscope" or expect.traces == 1 else None
    if top is not None:
        want = how["name"](top)
        rows = seen.get("rows", [])
        if not rows or rows[0]["name"] != want:
            problems.append(f"first row (most self time) {rows[0]['name'] if rows else None!r}, wanted {want!r}")
    return problems


# --- pprof-format -----------------------------------------------------------------------

def check_pprof(expect, read):
    problems = []
    if "samples/count" not in read["sampleTypes"]:
        return [f"no samples/count sample type: {read['sampleTypes']}"]
    count = read["totals"]["samples/count"]
    if count != expect.samples:
        problems.append(f"samples/count adds up to {count}, the traces have {expect.samples} samples")
    if "cpu/nanoseconds" in read["totals"] and read["totals"]["cpu/nanoseconds"] != count * read["period"]:
        problems.append(f"cpu/nanoseconds {read['totals']['cpu/nanoseconds']} != {count} samples x period {read['period']}")
    want_fns = sorted([(display_name(f), f.name, f.url or "", f.line or 0) for f in expect.functions]
                      + [(p, p, "", 0) for p in expect.pseudo])
    got_fns = sorted((f["name"], f["systemName"], f["filename"], f["startLine"]) for f in read["functions"])
    if got_fns != want_fns:
        problems.append(f"functions {got_fns}, wanted {want_fns}")
    want_paths = collections.Counter()
    for p, n in expect.paths.items():
        key = ((p, "", 0),) if isinstance(p, str) else tuple((f.name, f.url or "", f.line or 0) for f in p)
        want_paths[key] += n
    got_paths = collections.Counter()
    for s in read["samples"]:
        if None in s["path"]:
            problems.append(f"a sample's location has no single function line: {s}")
            continue
        got_paths[tuple((l["systemName"], l["filename"], l["line"]) for l in s["path"])] += s["values"][read["sampleTypes"].index("samples/count")]
    if got_paths != want_paths:
        problems.append(f"call paths differ: {sorted(got_paths.items())} != {sorted(want_paths.items())}")
    if read["comments"] != [expect.title]:
        problems.append(f"comments {read['comments']}, wanted [{expect.title!r}]")
    return problems


# --- the report and the SVG in Chromium -------------------------------------------------

def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def check_page(expect, read, report, screenshot=None):
    """A `jsprof report` (report=True) or an inferno `.svg` export, as Chromium shows it."""
    problems = []
    if read.get("error"):
        return [f"the page did not load: {read['error']}"]
    for what in ("pageErrors", "consoleErrors", "dialogs", "failedRequests"):
        if read.get(what):
            problems.append(f"{what}: {read[what][:3]}")
    if read.get("requests") != [read["url"]]:
        problems.append(f"requests other than the file itself: {read.get('requests')}")
    top = expect.top()
    totals = expect.total_counts()
    if report:
        if read.get("heading") != expect.title:
            problems.append(f"heading {read.get('heading')!r}, wanted {expect.title!r}")
        facts = read.get("facts", {})
        want = {"traces": str(expect.traces), "samples": str(expect.samples),
                "idle": str(expect.pseudo["(idle)"]), "program": str(expect.pseudo["(program)"]),
                "gc": str(expect.pseudo["(garbage collector)"])}
        for k, v in want.items():
            if facts.get(k) != v:
                problems.append(f"fact {k} is {facts.get(k)!r}, wanted {v!r}")
        rows = read.get("rows", [])
        fns = expect.functions
        if len(fns) <= 50 and len(rows) != len(fns):
            problems.append(f"{len(rows)} rows in the top functions table, wanted {len(fns)}")
        if top is not None and (not rows or rows[0][0] != display_name(top)):
            problems.append(f"first row of the top functions {rows[0][0] if rows else None!r}, wanted {display_name(top)!r}")
        if expect.title.startswith("primes") and (not rows or rows[0][0] != "isPrime"):
            problems.append("examples/primes: the first row is not isPrime")
    flame = read.get("flame")
    if not flame:
        return problems + ["no flame graph SVG"]
    if flame["width"] < 600 or flame["height"] < 50:
        problems.append(f"the flame graph is drawn {flame['width']}x{flame['height']} px")
    want_frames = len(expect.flame_nodes()) + 1  # and "all"
    if len(flame["frames"]) != want_frames:
        problems.append(f"{len(flame['frames'])} flame graph frames, wanted {want_frames} (call paths and `all`)")
    if top is not None:
        search = read.get("search") or {}
        prefix = f"{display_name(top)} ("
        want_hl = sorted(t for t in flame["frames"] if t.startswith(prefix))
        if sorted(search.get("highlighted", [])) != want_hl or not want_hl:
            problems.append(f"search {display_name(top)!r} highlighted {search.get('highlighted')}, wanted {want_hl}")
        m = re.fullmatch(r"Matched: ([\d.]+)%", search.get("matched", ""))
        share = 100.0 * totals[top] / expect.samples
        if not m or abs(float(m.group(1)) - share) > 0.2:
            problems.append(f"search says {search.get('matched')!r}, wanted about {share:.1f}%")
    if screenshot:
        size = png_size(screenshot) if os.path.exists(screenshot) else None
        if not size or size[0] != 1280:
            problems.append(f"screenshot {screenshot}: {size or 'not written'}, wanted 1280 wide")
    return problems
