//! Which SpiderMonkey build `shim.cpp` is compiled against: the search `build.rs` runs, kept
//! in a file of its own so that `tests/mozjs_build.rs` runs the very same code over fake
//! target dirs.
//!
//! What cargo guarantees, and what it does not tell:
//!
//! - `jsprof-spidermonkey` depends on `mozjs_sys` directly, and `mozjs_sys` declares
//!   `links = "mozjs"`, so cargo runs `mozjs_sys`'s build script to its end before ours
//!   starts. The SpiderMonkey build of this very build is therefore finished when we look.
//! - `mozjs_sys` 153.x prints no `cargo:KEY=VALUE` metadata, so there is no
//!   `DEP_MOZJS_*` variable naming its output directory, and nothing else cargo gives a build
//!   script names the hash of a dependency's build. We therefore look in
//!   `<target>/<profile>/build/mozjs_sys-*/`, and take only what is certainly finished:
//!   cargo writes `output` (the script's stdout) when a build script exits successfully, and
//!   `invoked.timestamp` when it starts, so a directory whose `output` is missing or older
//!   than its `invoked.timestamp` holds a build that is under way or that failed. Its headers
//!   are also checked (`jsapi.h` and the generated `mozilla/ProfilingCategoryList.h`).
//! - No choice is made by recency between directories. When more than one finished build
//!   remains (a stale one from another configuration or `mozjs_sys` version), they are used
//!   only if they are interchangeable for compiling the shim: the same SpiderMonkey source
//!   tree and the same `js-confdefs.h`. Otherwise the search fails and names them, so that a
//!   stale build is never compiled against by chance.

use std::path::{Path, PathBuf};

/// A finished SpiderMonkey build made by `mozjs_sys`'s build script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MozjsBuild {
    /// `<target>/<profile>/build/mozjs_sys-<hash>/out/build`: `dist/include`, `js/src`,
    /// `config.status`.
    pub dir: PathBuf,
    /// The SpiderMonkey source tree it was configured from (`topsrcdir` in `config.status`).
    pub topsrcdir: PathBuf,
}

/// The headers the shim includes that only a finished build has: `jsapi.h` is copied early,
/// the generated headers last.
const REQUIRED: &[&str] = &[
    "config.status",
    "js/src/js-confdefs.h",
    "dist/include/jsapi.h",
    "dist/include/mozilla/ProfilingCategoryList.h",
];

/// The finished SpiderMonkey build under `build_root` (`<target>/<profile>/build`), or why
/// there is none to use.
pub fn find(build_root: &Path) -> Result<MozjsBuild, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(build_root)
        .map_err(|e| format!("cannot list {}: {e}", build_root.display()))?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("mozjs_sys-"))
        .map(|e| e.path())
        .filter(|p| p.join("out").is_dir())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!(
            "no mozjs_sys build directory under {} (mozjs_sys-*/out): mozjs_sys's build \
             script has not run in this target dir",
            build_root.display()
        ));
    }
    let mut finished = Vec::new();
    let mut unfinished = Vec::new();
    for dir in &dirs {
        match finished_build(dir) {
            Ok(build) => finished.push(build),
            Err(why) => unfinished.push(format!("  {}: {why}", dir.display())),
        }
    }
    let Some(first) = finished.first().cloned() else {
        return Err(format!(
            "no finished SpiderMonkey build under {}; mozjs_sys must build from source \
             (MOZJS_FROM_SOURCE=1: a prebuilt archive has no headers):\n{}",
            build_root.display(),
            unfinished.join("\n")
        ));
    };
    let confdefs = |b: &MozjsBuild| std::fs::read(b.dir.join("js/src/js-confdefs.h")).ok();
    let same = finished
        .iter()
        .all(|b| b.topsrcdir == first.topsrcdir && confdefs(b) == confdefs(&first));
    if !same {
        let list: Vec<String> = finished
            .iter()
            .map(|b| format!("  {} (source {})", b.dir.display(), b.topsrcdir.display()))
            .collect();
        return Err(format!(
            "{} finished SpiderMonkey builds under {} differ (source tree or js-confdefs.h), \
             and cargo does not say which one this build links; remove the stale one's \
             mozjs_sys-* directory (or the target dir):\n{}",
            finished.len(),
            build_root.display(),
            list.join("\n")
        ));
    }
    Ok(first)
}

/// `dir` (`build/mozjs_sys-<hash>`) as a finished build, or why it is not one.
fn finished_build(dir: &Path) -> Result<MozjsBuild, String> {
    let modified = |name: &str| {
        std::fs::metadata(dir.join(name))
            .and_then(|m| m.modified())
            .map_err(|_| format!("no {name}"))
    };
    let output = modified("output").map_err(|e| {
        format!("{e}: its build script is still running, or failed (cargo writes `output` when it succeeds)")
    })?;
    if let Ok(invoked) = modified("invoked.timestamp") {
        if output < invoked {
            return Err(
                "its build script ran again after its last success and has not succeeded since"
                    .into(),
            );
        }
    }
    let build = dir.join("out/build");
    for rel in REQUIRED {
        if !build.join(rel).is_file() {
            return Err(format!("no out/build/{rel}"));
        }
    }
    let config = std::fs::read_to_string(build.join("config.status"))
        .map_err(|e| format!("cannot read config.status: {e}"))?;
    let topsrcdir = config
        .lines()
        .find_map(|l| l.strip_prefix("topsrcdir = '"))
        .and_then(|l| l.strip_suffix('\''))
        .map(PathBuf::from)
        .ok_or("no topsrcdir in config.status")?;
    Ok(MozjsBuild {
        dir: build,
        topsrcdir,
    })
}
