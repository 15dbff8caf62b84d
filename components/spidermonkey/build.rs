//! Builds `src/shim.cpp`, the C++ that reaches what SpiderMonkey's public Rust bindings do
//! not (a script's ScriptSource id, the stack walk, the SIGPROF handler), against the
//! headers of the very SpiderMonkey build `mozjs_sys` made, whichever mozjs_sys 153.x that is.
//!
//! `mozjs_sys` does not export its build directory, so this script finds it next to its own
//! output directory (`<target>/<profile>/build/mozjs_sys-*/out/build`, the newest one with
//! `dist/include/jsapi.h`), and the SpiderMonkey source tree from that build's
//! `config.status` (`topsrcdir`). Internal headers are used for inline accessors only; the
//! same `js-confdefs.h` makes their layout the library's. A prebuilt SpiderMonkey archive has
//! no headers: mozjs_sys must build from source (`MOZJS_FROM_SOURCE=1`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build_root = out
        .ancestors()
        .nth(2)
        .expect("OUT_DIR is <target>/<profile>/build/<crate>/out");
    let mozjs = newest_mozjs_build(build_root).unwrap_or_else(|| {
        panic!(
            "no SpiderMonkey build under {}: mozjs_sys must be built from source first \
             (MOZJS_FROM_SOURCE=1; a prebuilt archive has no headers)",
            build_root.display()
        )
    });
    let config = std::fs::read_to_string(mozjs.join("config.status")).expect("config.status");
    let topsrcdir = config
        .lines()
        .find_map(|l| l.strip_prefix("topsrcdir = '"))
        .and_then(|l| l.strip_suffix('\''))
        .map(PathBuf::from)
        .expect("topsrcdir in config.status");
    // encoding_c_mem's header sits beside mozjs_sys in cargo's registry.
    let registry = topsrcdir.ancestors().nth(2).expect("registry folder");
    let encoding = std::fs::read_dir(registry)
        .expect("registry folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("encoding_c_mem-"))
        })
        .map(|p| p.join("include"))
        .expect("encoding_c_mem in cargo's registry");
    println!(
        "cargo:rerun-if-changed={}",
        mozjs.join("dist/include/jsapi.h").display()
    );
    cc::Build::new()
        .cpp(true)
        .file("src/shim.cpp")
        .std("c++20")
        .flag("-include")
        .flag(
            mozjs
                .join("js/src/js-confdefs.h")
                .to_str()
                .expect("UTF-8 path"),
        )
        .include(mozjs.join("dist/include"))
        .include(mozjs.join("js/src"))
        .include(topsrcdir.join("js/src"))
        .include(encoding)
        .define("STATIC_JS_API", None)
        .define("MOZ_HAS_MOZGLUE", None)
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-w")
        .compile("jsprof_spidermonkey_shim");
}

/// The newest `mozjs_sys-*/out/build` under `build_root` that holds a finished build.
fn newest_mozjs_build(build_root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(build_root)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("mozjs_sys-"))
        .map(|e| e.path().join("out/build"))
        .filter_map(|b| {
            let stamp = std::fs::metadata(b.join("dist/include/jsapi.h"))
                .and_then(|m| m.modified())
                .ok()?;
            b.join("config.status").is_file().then_some((stamp, b))
        })
        .max_by_key(|(stamp, _): &(SystemTime, PathBuf)| *stamp)
        .map(|(_, b)| b)
}
