"""The Servo tree of jsprof in Servo (integrations/servo, issue 25): the registry's
servo-script, servo-script-bindings and servo-layout laid out under $JSPROF_SERVO_DIR/crates with our
patches (integrations/servo/patches) applied, the patches rewritten from edited copies
(`./mach servo refresh-patches`, with its splitter of a patch into each file's hunks), and the
build of jsprof-servo. The `./mach servo` commands are in servo.py; the WPT runner uses the
build from here too.

Where the lay-out reads and writes is a Tree: Tree.default() is the real one, the tests make
one in a temporary directory.
"""

import filecmp
import hashlib
import os
import shutil
import subprocess
import tempfile

from .common import ROOT, apt_install, bootstrap_build, dpkg_missing, env, log

# A workspace of its own with a target dir of its own: Servo pins mozjs 0.26.4 (SpiderMonkey
# 153.3), the main workspace has 0.26.14, and jsprof-spidermonkey's build.rs refuses a target
# dir holding two different finished SpiderMonkey builds (cargo does not say which one a build
# links), so the two never share one.
SERVO_ROOT = os.path.join(ROOT, "integrations", "servo")
SERVO_DIR = os.environ.get("JSPROF_SERVO_DIR", os.path.expanduser("~/.cache/jsprof/servo"))
SERVO_CRATES = ["servo-script-0.7.0", "servo-script-bindings-0.7.0", "servo-layout-0.7.0"]
# Debian packages jsprof-servo's build and headless run use beyond ./mach bootstrap's, as
# measured on the first build (2026-11-26): linked (ldd) fontconfig and freetype, found by
# their -sys crates through pkg-config; loaded at run time (LD_DEBUG=files) EGL with Mesa's
# software driver for the SoftwareRenderingContext, and the X11 and Wayland client
# libraries that EGL opens. The Python codegen needs python3 >= 3.11 (or uv), which the
# machine's python3 is. zlib, expat, libpng and brotli come with those.
SERVO_APT_PACKAGES = ["pkg-config", "patch", "libfontconfig-dev", "libfreetype-dev", "libegl1",
                      "libegl-mesa0", "libgl1-mesa-dri", "libx11-6", "libwayland-client0"]


def servo_env():
    e = env()
    e["CARGO_TARGET_DIR"] = os.path.join(SERVO_DIR, "target")
    return e


def servo_exe():
    return os.path.join(servo_env()["CARGO_TARGET_DIR"], "release", "jsprof-servo")


class Tree:
    """Where the lay-out reads and writes.

    patches_dir  the patches, NAME.NN-what.patch, applied in file-name order to the crate
                 whose name without its version is NAME (servo-script.01-….patch)
    crates_dir   the laid-out copies, one directory per crate, and the stamp patches.sha256
    src_root     cargo's registry sources ($CARGO_HOME/registry/src/INDEX/CRATE-VERSION)
    link         a symlink to crates_dir (integrations/servo/patched, which its Cargo.toml names)
    fetch_dir    a manifest naming only the crates, for `cargo fetch` when they are missing
    """

    def __init__(self, patches_dir, crates_dir, src_root, link, fetch_dir, crates=SERVO_CRATES):
        self.patches_dir = patches_dir
        self.crates_dir = crates_dir
        self.src_root = src_root
        self.link = link
        self.fetch_dir = fetch_dir
        self.crates = list(crates)

    @classmethod
    def default(cls):
        cargo_home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
        return cls(patches_dir=os.path.join(SERVO_ROOT, "patches"),
                   crates_dir=os.path.join(SERVO_DIR, "crates"),
                   src_root=os.path.join(cargo_home, "registry", "src"),
                   link=os.path.join(SERVO_ROOT, "patched"),
                   fetch_dir=os.path.join(SERVO_DIR, "fetch"))

    def patches(self):
        return sorted(f for f in os.listdir(self.patches_dir) if f.endswith(".patch"))


def crate_patches(crate, patches):
    """The patches of `crate` (servo-script-0.7.0: servo-script.*), in order; not those of a
    crate whose name only starts the same (servo-script-bindings.*)."""
    prefix = crate.rsplit("-", 1)[0] + "."
    return [name for name in patches if name.startswith(prefix)]


def registry_sources(src_root, crates):
    """{crate: its directory} for those of `crates` in the registry's sources (the first
    index, by name, that holds the crate's Cargo.toml)."""
    found = {}
    for crate in crates:
        dirs = sorted(os.listdir(src_root)) if os.path.isdir(src_root) else []
        for d in dirs:
            if os.path.isfile(os.path.join(src_root, d, crate, "Cargo.toml")):
                found[crate] = os.path.join(src_root, d, crate)
                break
    return found


def fetch_crates(tree):
    """integrations/servo itself cannot be fetched before its patched/ exists: fetch the
    crates through a manifest that names only them."""
    os.makedirs(os.path.join(tree.fetch_dir, "src"), exist_ok=True)
    with open(os.path.join(tree.fetch_dir, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "jsprof-servo-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
                '[workspace]\n\n[dependencies]\n'
                + "".join(f'{c.rsplit("-", 1)[0]} = "={c.rsplit("-", 1)[1]}"\n' for c in tree.crates))
    with open(os.path.join(tree.fetch_dir, "src", "lib.rs"), "w") as f:
        f.write("")
    if subprocess.call(["cargo", "fetch", "--manifest-path", os.path.join(tree.fetch_dir, "Cargo.toml")],
                       cwd=tree.fetch_dir, env=servo_env()) != 0:
        log("cargo fetch failed")
        return 1
    return 0


def layout_stamp(patches_dir, patches, sources, crates):
    """The hash of the patches (names and bytes) and of the sources' paths, which the copies
    were made with."""
    digest = hashlib.sha256()
    for name in patches:
        digest.update(name.encode())
        with open(os.path.join(patches_dir, name), "rb") as f:
            digest.update(f.read())
    for crate in crates:
        digest.update(sources[crate].encode())
    return digest.hexdigest()


def sync_tree(src, dest):
    """Makes dest's files those of src, rewriting only the files whose bytes differ."""
    for d, dirs, files in os.walk(dest, topdown=False):
        rel = os.path.relpath(d, dest)
        for f in files:
            if not os.path.isfile(os.path.join(src, rel, f)):
                os.unlink(os.path.join(d, f))
        if rel != "." and not os.path.isdir(os.path.join(src, rel)):
            shutil.rmtree(d, ignore_errors=True)
    for d, dirs, files in os.walk(src):
        rel = os.path.relpath(d, src)
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
        for f in files:
            a, b = os.path.join(d, f), os.path.join(dest, rel, f)
            if not os.path.isfile(b) or not filecmp.cmp(a, b, shallow=False):
                shutil.copy2(a, b)
                os.utime(b)


def crate_sources(tree):
    """{crate: its registry directory} for every crate of the tree, fetched first if any is
    missing; None (said) if they cannot be had."""
    sources = registry_sources(tree.src_root, tree.crates)
    if len(sources) < len(tree.crates):
        if fetch_crates(tree):
            return None
        sources = registry_sources(tree.src_root, tree.crates)
        missing = [c for c in tree.crates if c not in sources]
        if missing:
            log(f"{', '.join(missing)} not in {tree.src_root} after cargo fetch")
            return None
    return sources


def apply_patch(tree, name, cwd, *options):
    """patch(1) applies the tree's patch `name` in `cwd` (its output and status captured)."""
    return subprocess.run(["patch", "-p1", "--forward", "--batch", *options, "--no-backup-if-mismatch",
                           "-i", os.path.join(tree.patches_dir, name)], cwd=cwd, capture_output=True, text=True)


def servo_layout(tree=None):
    """Fresh copies of the registry's crates of SERVO_CRATES, patched, under
    $JSPROF_SERVO_DIR/crates, and integrations/servo/patched linked to them. Skipped while the
    patches (and the sources) are the ones the copies were made with (a stamp of their hashes)."""
    tree = tree or Tree.default()
    patches = tree.patches()
    sources = crate_sources(tree)
    if sources is None:
        return 1
    stamp_value = layout_stamp(tree.patches_dir, patches, sources, tree.crates)
    crates_dir = tree.crates_dir
    stamp = os.path.join(crates_dir, "patches.sha256")
    try:
        with open(stamp) as f:
            current = f.read().strip() == stamp_value
    except OSError:
        current = False
    if not current:
        log(f"laying out {', '.join(tree.crates)} in {crates_dir} with {len(patches)} patches")
        os.makedirs(crates_dir, exist_ok=True)
        for crate in tree.crates:
            dest = os.path.join(crates_dir, crate)
            # A new copy keeps the old one's modification times where files did not change,
            # so cargo rebuilds only what a patch touched: copy to the side, then sync.
            fresh = dest + ".new"
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.copytree(sources[crate], fresh)
            for name in crate_patches(crate, patches):
                r = apply_patch(tree, name, fresh)
                if r.returncode != 0:
                    log(f"patch {name} does not apply to {crate}:\n{r.stdout}{r.stderr}")
                    return 1
            if os.path.isdir(dest):
                sync_tree(fresh, dest)
                shutil.rmtree(fresh)
            else:
                os.rename(fresh, dest)
        with open(stamp, "w") as f:
            f.write(stamp_value + "\n")
    link = tree.link
    if os.path.islink(link) and os.readlink(link) == crates_dir:
        return 0
    if os.path.islink(link):
        os.unlink(link)
    elif os.path.exists(link):
        log(f"{link} exists and is not a link")
        return 1
    os.symlink(crates_dir, link)
    return 0


def patch_files(patch_path):
    """The files a patch changes (its `+++ b/…` lines), in order."""
    with open(patch_path) as f:
        return [line[6:].split("\t")[0].strip() for line in f if line.startswith("+++ b/")]


def patch_header(text):
    """A patch's comment header: all before its first `diff --git ` (all of it if none)."""
    return text[:text.index("diff --git ")] if "diff --git " in text else text


def file_section(text, rel):
    """The hunk splitter: the part of a patch's text that changes `rel`, from its
    `diff --git a/REL b/REL` line to the next file's (StopIteration if it changes no such file).
    The patch is cut at every "diff --git ", wherever on a line it stands."""
    parts = text.split("diff --git ")
    return "diff --git " + next(p for p in parts[1:] if p.startswith(f"a/{rel} b/{rel}"))


def apply_file_hunks(patch_path, rel, target, reverse):
    """Applies (or takes back) the hunks of one file of a patch to `target`."""
    with open(patch_path) as f:
        text = f.read()
    cmd = ["patch", "--batch", "--silent", "--no-backup-if-mismatch", "-o", target + ".out", target]
    if reverse:
        cmd.insert(1, "-R")
    r = subprocess.run(cmd, input=file_section(text, rel), capture_output=True, text=True)
    if r.returncode != 0:
        log(f"{os.path.basename(patch_path)}: {rel}: {r.stdout}{r.stderr}")
        return 1
    os.replace(target + ".out", target)
    return 0


def pristine_source(src_root, crate):
    """The registry's directory of `crate` for refresh-patches (the first index, by name, that
    has a directory of that name; os.listdir raises if src_root is missing)."""
    return next((os.path.join(src_root, d, crate) for d in sorted(os.listdir(src_root))
                 if os.path.isdir(os.path.join(src_root, d, crate))), None)


def file_diff(patches_dir, mine, k, rel, pristine, edited):
    """The `diff --git` section of patch mine[k] for file `rel`: from the file before the patch
    (the registry's, with the earlier patches' hunks of that file applied) to the file after it
    (the edited copy's, with the later patches' hunks of that file taken back out). "" if they
    are the same, None on failure."""
    with tempfile.TemporaryDirectory() as tmp:
        before, after = os.path.join(tmp, "before"), os.path.join(tmp, "after")
        src = os.path.join(pristine, rel)
        if os.path.exists(src):
            shutil.copyfile(src, before)
        # A file the registry lacks exists before this patch if an earlier patch made it.
        for earlier in mine[:k]:
            if rel in patch_files(os.path.join(patches_dir, earlier)):
                if apply_file_hunks(os.path.join(patches_dir, earlier), rel, before, reverse=False):
                    return None
        new = not os.path.exists(before)
        if new:
            open(before, "w").close()
        shutil.copyfile(os.path.join(edited, rel), after)
        for later in reversed(mine[k + 1:]):
            if rel in patch_files(os.path.join(patches_dir, later)):
                if apply_file_hunks(os.path.join(patches_dir, later), rel, after, reverse=True):
                    return None
        d = subprocess.run(["diff", "-u", "-p", "--label", "/dev/null" if new else f"a/{rel}",
                            "--label", f"b/{rel}", before, after], capture_output=True, text=True)
        if d.returncode > 1:
            log(d.stderr)
            return None
        if not d.stdout:
            return ""
        return f"diff --git a/{rel} b/{rel}\n" + ("new file mode 100644\n" if new else "") + d.stdout


def servo_refresh_patches(tree=None):
    """Rewrites integrations/servo/patches from the edited copies in $JSPROF_SERVO_DIR/crates.

    For each patch, each file it changes is diffed from its state before the patch (the
    registry's file with the earlier patches applied) to its state after it (the edited copy
    with the later patches' hunks for that file taken back out). Each patch keeps its comment
    header. The copies then count as laid out with the new patches (their stamp is rewritten)."""
    tree = tree or Tree.default()
    patches = tree.patches()
    for crate in tree.crates:
        mine = crate_patches(crate, patches)
        pristine = pristine_source(tree.src_root, crate)
        edited = os.path.join(tree.crates_dir, crate)
        if pristine is None or not os.path.isdir(edited):
            log(f"{crate}: no registry source or no laid-out copy (./mach servo build first)")
            return 1
        for k, name in enumerate(mine):
            path = os.path.join(tree.patches_dir, name)
            with open(path) as f:
                text = f.read()
            body = []
            for rel in patch_files(path):
                section = file_diff(tree.patches_dir, mine, k, rel, pristine, edited)
                if section is None:
                    return 1
                if section:
                    body.append(section)
            with open(path, "w") as f:
                f.write(patch_header(text) + "".join(body))
    # The copies are what the new patches make.
    return servo_layout_check(tree)


def servo_layout_check(tree=None):
    """Lays the copies out again from the patches and says whether any file differs from
    the edited copy that was there (it must not, after refresh-patches)."""
    tree = tree or Tree.default()
    crates_dir = tree.crates_dir
    saved = crates_dir + ".edited"
    if os.path.exists(saved):
        log(f"{saved} holds the edits of a refresh that failed: copy what you need from it "
            f"into {crates_dir}, remove it, then refresh again")
        return 1
    shutil.copytree(crates_dir, saved, symlinks=True)
    rc = servo_layout(tree)
    if rc:
        return rc
    d = subprocess.run(["diff", "-r", "-q", "-x", "patches.sha256", saved, crates_dir], capture_output=True, text=True)
    if d.returncode != 0:
        # The edits are kept: a file no patch touches yet needs a patch of its own.
        log(f"the patches do not reproduce the edited copies (kept in {saved}; a file no patch "
            f"changes yet needs a new patch):\n{d.stdout}")
        return 1
    shutil.rmtree(saved, ignore_errors=True)
    log("patches rewritten; they reproduce the edited copies")
    return 0


def header_problem(name, text):
    """What a patch's header lacks, or None: a maintainer reading the patch first reads what it
    changes (its first comment line) and why (a comment paragraph after it)."""
    comments = [line[1:].strip() for line in patch_header(text).splitlines() if line.startswith("#")]
    paragraphs = [p for p in "\n".join(comments).split("\n\n") if p.strip()]
    if not comments or not comments[0]:
        return f"{name}: no header (a first `# ` line saying what the patch changes)"
    if len(paragraphs) < 2:
        return f"{name}: its header says what it changes but not why (a `#` paragraph after the first line)"
    return None


def reformatted_lines(text):
    """The lines a patch rewrites without changing them: in one hunk, a removed line and an added
    line that differ only in whitespace after their indentation (spacing inside the line,
    trailing blanks). Re-indenting (code moved into or out of a block) is a change and is not
    counted. [(file, removed line)]."""
    found = []
    rel = None
    removed, added = [], []

    def flush():
        norm = lambda line: " ".join(line.split())  # noqa: E731
        indent = lambda line: line[:len(line) - len(line.lstrip())]  # noqa: E731
        for r in removed:
            for a in added:
                if r != a and norm(r) == norm(a) and indent(r) == indent(a):
                    found.append((rel, r))
                    break
        removed.clear()
        added.clear()

    for line in text.splitlines():
        if line.startswith("diff --git "):
            flush()
            rel = line.split(" b/", 1)[-1]
        elif line.startswith("@@"):
            flush()
        elif line.startswith("---") or line.startswith("+++"):
            continue
        elif line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
    flush()
    return found


def servo_check_patches(tree=None):
    """./mach servo check-patches: the patches a Servo maintainer reviews, checked without a
    build.

    - every patch's header says what it changes and why;
    - no patch rewrites a line only to change its spacing;
    - in order, every patch applies to the pinned crates from the registry exactly: no fuzz, no
      offset (`patch` would apply an inexact one silently);
    - refresh-patches, run on copies laid out from the patches, gives them back byte for byte.
    All of it in a temporary directory: the lay-out under $JSPROF_SERVO_DIR is not touched."""
    tree = tree or Tree.default()
    patches = tree.patches()
    problems = []
    for name in patches:
        with open(os.path.join(tree.patches_dir, name)) as f:
            text = f.read()
        problem = header_problem(name, text)
        if problem:
            problems.append(problem)
        for rel, line in reformatted_lines(text):
            problems.append(f"{name}: {rel}: rewrites a line only to change its spacing: {line.strip()[:80]}")
    sources = crate_sources(tree)
    if sources is None:
        return 1
    with tempfile.TemporaryDirectory(prefix="jsprof-check-patches-") as tmp:
        for crate in tree.crates:
            copy = os.path.join(tmp, "exact", crate)
            shutil.copytree(sources[crate], copy)
            for name in crate_patches(crate, patches):
                r = apply_patch(tree, name, copy, "--fuzz=0")
                inexact = [line for line in r.stdout.splitlines() if "offset" in line or "fuzz" in line]
                if r.returncode != 0:
                    problems.append(f"{name} does not apply to {crate}:\n{r.stdout}{r.stderr}")
                    break
                if inexact:
                    problems.append(f"{name} applies to {crate} only inexactly (refresh it):\n" + "\n".join(inexact))
        # Refresh on a lay-out of our own, then compare bytes.
        j = lambda *p: os.path.join(tmp, *p)  # noqa: E731
        shutil.copytree(tree.patches_dir, j("patches"))
        mine = Tree(patches_dir=j("patches"), crates_dir=j("crates"), src_root=tree.src_root,
                    link=j("patched"), fetch_dir=j("fetch"), crates=tree.crates)
        rc = servo_layout(mine) or servo_refresh_patches(mine)
        if rc:
            problems.append("refresh-patches failed on a fresh lay-out (above)")
        else:
            for name in patches:
                if not filecmp.cmp(os.path.join(tree.patches_dir, name), j("patches", name), shallow=False):
                    d = subprocess.run(["diff", "-u", os.path.join(tree.patches_dir, name), j("patches", name)],
                                       capture_output=True, text=True)
                    problems.append(f"{name}: refresh-patches does not give it back byte for byte:\n"
                                    + "\n".join(d.stdout.splitlines()[:20]))
    for problem in problems:
        log(problem)
    if problems:
        log(f"check-patches: {len(problems)} problem(s) in {len(patches)} patches")
        return 1
    log(f"check-patches: {len(patches)} patches: headers, no spacing-only lines, exact application to "
        f"{', '.join(tree.crates)}, refresh-patches reproduces them byte for byte")
    return 0


def servo_bootstrap():
    missing = dpkg_missing(SERVO_APT_PACKAGES) if shutil.which("dpkg-query") else []
    return apt_install(missing) if missing else 0


def servo_build():
    rc = bootstrap_build() or servo_bootstrap() or servo_layout()
    if rc:
        return rc
    cmd = ["cargo", "build", "--release", "--locked", "--manifest-path", os.path.join(SERVO_ROOT, "Cargo.toml")]
    e = servo_env()
    log(" ".join(cmd) + f"   (target dir {e['CARGO_TARGET_DIR']})")
    return subprocess.call(cmd, cwd=SERVO_ROOT, env=e)
