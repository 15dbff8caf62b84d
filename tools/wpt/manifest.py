"""What tests a WPT tree holds, named as upstream names them (tools/manifest/sourcefile.py
and tools/serve/serve.py in web-platform-tests): test URLs with their variant (`?a`,
`#b`), the source file behind a generated URL, `// META:` lines, `global=` scopes,
`<meta name=variant|timeout>`, and the tests this engine cannot run (reported as SKIP).
Pure: no server, no engine."""

import os
import re
from html.parser import HTMLParser

JS_META = re.compile(r"//\s*META:\s*(\w*)=(.*)$")

# The `// META: global=` scopes upstream knows: the URL suffix of each, and why jsprof does
# not run it (None: it does). Unknown names are ignored, as upstream does.
SCOPES = {
    "window": (".any.html", None),
    "dedicatedworker": (".any.worker.html", None),
    "sharedworker": (".any.sharedworker.html", "jsprof has no SharedWorker"),
    "serviceworker": (".any.serviceworker.html", "jsprof has no service workers"),
    "window-module": (".any.window-module.html", "module scripts are not supported"),
    "dedicatedworker-module": (".any.worker-module.html", "module workers are not supported"),
    "sharedworker-module": (".any.sharedworker-module.html", "jsprof has no SharedWorker"),
    "serviceworker-module": (".any.serviceworker-module.html", "jsprof has no service workers"),
    "shadowrealm": (".any.shadowrealm.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-window": (".any.shadowrealm-in-window.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-shadowrealm": (".any.shadowrealm-in-shadowrealm.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-dedicatedworker": (".any.shadowrealm-in-dedicatedworker.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-sharedworker": (".any.shadowrealm-in-sharedworker.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-serviceworker": (".https.any.shadowrealm-in-serviceworker.html", "jsprof has no ShadowRealm"),
    "shadowrealm-in-audioworklet": (".https.any.shadowrealm-in-audioworklet.html", "jsprof has no ShadowRealm"),
    "jsshell": (".any.js", "runs in a JavaScript shell, not in a browser"),
}
LONGHANDS = {"worker": {"dedicatedworker", "sharedworker", "serviceworker"}}
DEFAULT_SCOPES = {"window", "dedicatedworker"}

# URL suffixes the server generates from a source file: (URL suffix, source suffix).
GENERATED = [(".any.html", ".any.js"), (".any.worker.js", ".any.js"), (".window.html", ".window.js"),
             (".worker.html", ".worker.js")]
SCOPE_PAGE = re.compile(r"\.any\.[\w-]+\.html$")

SKIP_DIRS = {"resources", "support", "common", "tools", "interfaces", ".git", "node_modules"}


def script_metadata(source):
    """The `// META: key=value` pairs at the top of a .js test; as upstream, the first line
    that is not one ends them."""
    out = []
    for line in source.splitlines():
        m = JS_META.match(line)
        if not m:
            break
        out.append((m.group(1), m.group(2).strip()))
    return out


def _expand(name):
    return LONGHANDS.get(name, {name} if name in SCOPES else set())


def any_scopes(metadata):
    """The scopes a .any.js test runs in, from its first `// META: global=` line: the listed
    ones (`worker` = every worker kind), minus `!name` exclusions; window and dedicated
    worker when there is no line (or only exclusions)."""
    value = next((v for k, v in metadata if k == "global"), "")
    items = [i.strip() for i in value.split(",") if i.strip()]
    scopes = set() if any(not i.startswith("!") for i in items) else set(DEFAULT_SCOPES)
    for item in items:
        if item.startswith("!"):
            scopes -= _expand(item[1:])
        else:
            scopes |= _expand(item)
    return scopes


def global_variant_url(url, suffix):
    """Upstream's name for the page of a .any.js test in one scope (`x.any.js` + `.any.worker.html`)."""
    url = url.replace(".any.", ".")
    if ".https." in url and suffix.startswith(".https."):
        url = url.replace(".https.", ".")
    elif ".h2." in url and suffix.startswith(".h2."):
        url = url.replace(".h2.", ".")
    return url[: -len(".js")] + suffix


class _HtmlFacts(HTMLParser):
    """Whether an HTML file loads /resources/testharness.js, has <meta name=timeout
    content=long>, and its <meta name=variant> values."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.testharness, self.long, self.variants = False, False, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src") == "/resources/testharness.js":
            self.testharness = True
        elif tag == "meta" and a.get("name") == "timeout" and (a.get("content") or "").lower() == "long":
            self.long = True
        elif tag == "meta" and a.get("name") == "variant" and a.get("content") is not None:
            self.variants.append(a["content"])

    handle_startendtag = handle_starttag


def html_facts(text):
    p = _HtmlFacts()
    try:
        p.feed(text)
        p.close()
    except Exception:  # noqa: BLE001 - a page the parser chokes on is not a test
        pass
    return p


def _variants(values):
    """A test's variants: those starting with `?` or `#` (upstream rejects others), or one
    without any."""
    good = [v for v in values if v == "" or v[0] in "?#"]
    return good or [""]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def split_query(test):
    """`/a/x.any.html?b#c` -> (`/a/x.any.html`, `?b#c`)."""
    m = re.search(r"[?#]", test)
    return (test, "") if not m else (test[: m.start()], test[m.start():])


def tests_of(tree, rel):
    """The test URLs (variants included) a file (`/a/x.any.js`, URL path in `tree`) gives."""
    path = os.path.join(tree, rel.lstrip("/"))
    name = os.path.basename(rel)
    stem, ext = os.path.splitext(name)
    flags = stem.split(".")[1:]
    type_flag = stem.rsplit("-", 1)[1].split(".")[0] if "-" in stem else None
    if name.startswith(".") or type_flag in ("manual", "visual"):
        return []
    if ext == ".js":
        if "any" in flags:
            meta = script_metadata(read(path))
            variants = _variants([v for k, v in meta if k == "variant"])
            return [global_variant_url(rel, SCOPES[s][0]) + v for s in sorted(any_scopes(meta)) for v in variants]
        for kind in ("worker", "window"):
            if kind in flags and name.endswith(f".{kind}.js"):
                meta = script_metadata(read(path))
                variants = _variants([v for k, v in meta if k == "variant"])
                return [rel[: -len(".js")] + ".html" + v for v in variants]
        return []
    if ext in (".html", ".htm"):
        if type_flag == "crash" or "crashtests" in rel.split("/"):
            return []
        text = read(path)
        if "/resources/testharness.js" not in text:  # most files: no need to parse them
            return []
        facts = html_facts(text)
        if not facts.testharness:
            return []
        return [rel + v for v in _variants(facts.variants)]
    return []


def is_tentative(test):
    path = split_query(test)[0]
    return "tentative" in os.path.basename(path).split(".")[1:-1] or "tentative" in path.split("/")[:-1]


def source_url(test):
    """The URL path of the file a test comes from: `/a/x.any.worker.html?v` -> `/a/x.any.js`."""
    path = split_query(test)[0]
    if SCOPE_PAGE.search(path):
        return SCOPE_PAGE.sub(".any.js", path)
    for suffix, source in GENERATED:
        if path.endswith(suffix):
            return path[: -len(suffix)] + source
    return path


def skip_reason(test):
    """Why jsprof does not run `test` (its scope or protocol), or None."""
    path = split_query(test)[0]
    if "h2" in os.path.basename(path).split(".")[1:-1]:
        return "HTTP/2 (.h2.) is not served"
    for suffix, why in sorted(SCOPES.values(), key=lambda s: -len(s[0])):
        if path.endswith(suffix):
            return why
    return None


def source_path(tree, test):
    """The file a test comes from (`/a/x.any.worker.html?v` -> TREE/a/x.any.js)."""
    source = os.path.join(tree, source_url(test).lstrip("/"))
    if os.path.isfile(source):
        return source
    return os.path.join(tree, split_query(test)[0].lstrip("/"))


def is_long(tree, test):
    """Whether the test asks for the long timeout (`// META: timeout=long`, or
    `<meta name=timeout content=long>` in an HTML test)."""
    source = source_path(tree, test)
    text = read(source)
    if source.endswith(".js"):
        return ("timeout", "long") in script_metadata(text)
    return html_facts(text).long


def https_of(test):
    """Served over HTTPS: `.https.` in the name, or a service worker scope (as upstream)."""
    flags = os.path.basename(split_query(test)[0]).split(".")[1:-1]
    return "https" in flags or "serviceworker" in flags or "serviceworker-module" in flags


def www_of(test):
    """Loaded from the www subdomain: `.www.` in the name (as upstream)."""
    return "www" in os.path.basename(split_query(test)[0]).split(".")[1:-1]
