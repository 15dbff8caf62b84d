//! The search `build.rs` runs for the SpiderMonkey build that `shim.cpp` is compiled against
//! (`buildsupport/mozjs_build.rs`), over fake target dirs: a build still under way (its
//! `jsapi.h` already copied, newer than anything else, its generated headers not yet there)
//! is never taken, nor a failed rerun, nor one of two finished builds that differ.
//!
//! This guards against the failure of issue 36: a fresh target dir, where the old search
//! (the newest `mozjs_sys-*` with a `jsapi.h`) took the build in progress beside it.

#[path = "../buildsupport/mozjs_build.rs"]
mod mozjs_build;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A fake `<target>/release/build`, fresh, in cargo's temporary directory for tests.
struct BuildRoot(PathBuf);

impl BuildRoot {
    fn new(name: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("mozjs_build")
            .join(name);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("mkdir");
        BuildRoot(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// `mozjs_sys-<hash>/` as cargo leaves it when its build script starts: the
    /// `invoked.timestamp` and an `out` dir, and the files SpiderMonkey's build writes early.
    fn started(&self, hash: &str, source: &str) -> PathBuf {
        let dir = self.path().join(format!("mozjs_sys-{hash}"));
        let build = dir.join("out/build");
        write(&dir.join("invoked.timestamp"), "");
        write(
            &build.join("config.status"),
            &format!("topsrcdir = '{source}'\n"),
        );
        write(&build.join("js/src/js-confdefs.h"), "#define JS_CONF 1\n");
        write(&build.join("dist/include/jsapi.h"), "// jsapi\n");
        dir
    }

    /// The same, run to the end: the generated headers, then cargo's `output`.
    fn finished(&self, hash: &str, source: &str) -> PathBuf {
        let dir = self.started(hash, source);
        write(
            &dir.join("out/build/dist/include/mozilla/ProfilingCategoryList.h"),
            "// generated\n",
        );
        write(
            &dir.join("output"),
            "cargo:rustc-link-lib=static=js_static\n",
        );
        dir
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn set_modified(path: &Path, time: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_modified(time)
        .expect("set mtime");
}

const SOURCE: &str = "/registry/mozjs_sys-153.6.0-2/mozjs";

#[test]
fn a_build_in_progress_beside_a_finished_one_is_not_taken() {
    let root = BuildRoot::new("a_build_in_progress_beside_a_finished_one_is_not_taken");
    let done = root.finished("aaaa", SOURCE);
    let running = root.started("bbbb", SOURCE);
    // The build under way copied its jsapi.h last: it is the newest there is.
    let now = SystemTime::now();
    set_modified(
        &done.join("out/build/dist/include/jsapi.h"),
        now - Duration::from_secs(3600),
    );
    set_modified(&running.join("out/build/dist/include/jsapi.h"), now);
    let found = mozjs_build::find(root.path()).expect("the finished build");
    assert_eq!(found.dir, done.join("out/build"));
    assert_eq!(found.topsrcdir, PathBuf::from(SOURCE));
}

#[test]
fn only_a_build_in_progress_is_an_error_that_says_so() {
    let root = BuildRoot::new("only_a_build_in_progress_is_an_error_that_says_so");
    root.started("bbbb", SOURCE);
    let err = mozjs_build::find(root.path()).expect_err("nothing finished");
    assert!(err.contains("no finished SpiderMonkey build"), "{err}");
    assert!(err.contains("still running, or failed"), "{err}");
}

#[test]
fn a_rerun_that_has_not_succeeded_is_not_finished() {
    let root = BuildRoot::new("a_rerun_that_has_not_succeeded_is_not_finished");
    let dir = root.finished("aaaa", SOURCE);
    let now = SystemTime::now();
    set_modified(&dir.join("output"), now - Duration::from_secs(60));
    set_modified(&dir.join("invoked.timestamp"), now);
    let err = mozjs_build::find(root.path()).expect_err("a rerun under way");
    assert!(err.contains("ran again"), "{err}");
}

#[test]
fn generated_headers_are_required() {
    let root = BuildRoot::new("generated_headers_are_required");
    let dir = root.finished("aaaa", SOURCE);
    fs::remove_file(dir.join("out/build/dist/include/mozilla/ProfilingCategoryList.h"))
        .expect("rm");
    let err = mozjs_build::find(root.path()).expect_err("headers missing");
    assert!(err.contains("ProfilingCategoryList.h"), "{err}");
}

#[test]
fn two_finished_builds_that_differ_are_refused_by_name() {
    let root = BuildRoot::new("two_finished_builds_that_differ_are_refused_by_name");
    let old = root.finished("aaaa", "/registry/mozjs_sys-153.3.0-1/mozjs");
    let new = root.finished("bbbb", SOURCE);
    // However their times fall, neither is picked.
    for (a, b) in [(&old, &new), (&new, &old)] {
        let now = SystemTime::now();
        set_modified(&a.join("output"), now - Duration::from_secs(10));
        set_modified(&a.join("invoked.timestamp"), now - Duration::from_secs(20));
        set_modified(&b.join("output"), now);
        set_modified(&b.join("invoked.timestamp"), now - Duration::from_secs(5));
        let err = mozjs_build::find(root.path()).expect_err("ambiguous");
        assert!(err.contains("differ"), "{err}");
        assert!(
            err.contains("mozjs_sys-aaaa") && err.contains("mozjs_sys-bbbb"),
            "{err}"
        );
    }
}

#[test]
fn two_interchangeable_finished_builds_give_the_same_answer_whatever_their_times() {
    let root = BuildRoot::new(
        "two_interchangeable_finished_builds_give_the_same_answer_whatever_their_times",
    );
    let a = root.finished("aaaa", SOURCE);
    let b = root.finished("bbbb", SOURCE);
    let now = SystemTime::now();
    set_modified(&a.join("out/build/dist/include/jsapi.h"), now);
    let first = mozjs_build::find(root.path()).expect("one of them");
    set_modified(
        &a.join("out/build/dist/include/jsapi.h"),
        now - Duration::from_secs(3600),
    );
    set_modified(&b.join("out/build/dist/include/jsapi.h"), now);
    assert_eq!(mozjs_build::find(root.path()).expect("one of them"), first);
}

#[test]
fn no_mozjs_sys_directory_is_a_clear_error() {
    let root = BuildRoot::new("no_mozjs_sys_directory_is_a_clear_error");
    fs::create_dir_all(root.path().join("mozjs_sys-cccc")).expect("mkdir");
    let err = mozjs_build::find(root.path()).expect_err("none");
    assert!(err.contains("no mozjs_sys build directory"), "{err}");
}
