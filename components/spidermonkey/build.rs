//! Builds `src/shim.cpp`, the C++ that reaches what SpiderMonkey's public Rust bindings do
//! not (a script's ScriptSource id, the stack walk, the SIGPROF handler), against the
//! headers of the very SpiderMonkey build `mozjs_sys` made, whichever mozjs_sys 153.x that is.
//!
//! This package depends on `mozjs_sys` directly (Cargo.toml), so cargo runs `mozjs_sys`'s
//! build script (`links = "mozjs"`) to its end before this one: the build is finished when we
//! look for it. Which directory holds it is found by `buildsupport/mozjs_build.rs` (cargo
//! names it nowhere; see there), and the SpiderMonkey source tree from that build's
//! `config.status` (`topsrcdir`). Internal headers are used for inline accessors only; the
//! same `js-confdefs.h` makes their layout the library's. A prebuilt SpiderMonkey archive has
//! no headers: mozjs_sys must build from source (`MOZJS_FROM_SOURCE=1`).

#[path = "buildsupport/mozjs_build.rs"]
mod mozjs_build;

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=buildsupport/mozjs_build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build_root = out
        .ancestors()
        .nth(2)
        .expect("OUT_DIR is <target>/<profile>/build/<crate>/out");
    let mozjs = mozjs_build::find(build_root).unwrap_or_else(|why| {
        panic!("jsprof-spidermonkey: cannot compile shim.cpp against SpiderMonkey: {why}")
    });
    let topsrcdir = mozjs.topsrcdir;
    let mozjs = mozjs.dir;
    // encoding_c_mem's header (its build script says where: `links = "encoding_c_mem"`).
    let encoding = PathBuf::from(std::env::var("DEP_ENCODING_C_MEM_INCLUDE_DIR").expect(
        "DEP_ENCODING_C_MEM_INCLUDE_DIR: encoding_c_mem is a direct dependency (Cargo.toml)",
    ));
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
