//! `jsprof convert`, `jsprof report` and the export formats of `--profile-out`/`--trace-out`,
//! on traces of real pages run by the real binary. The formats' own rules are the export
//! crate's unit tests; readers written by others (speedscope, pprof-format, Chromium) check
//! the files in `tools/export-readers` (`./mach test`).

use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn jsprof(args: &[&str], dir: &Path) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("jsprof runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .join("index.html")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// Runs examples/primes with `--trace-out DIR/primes.json`; returns the trace array.
fn primes(dir: &Path) -> serde_json::Value {
    let out = jsprof(&[&example("primes"), "--trace-out", "primes.json"], dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_slice(&std::fs::read(dir.join("primes.json")).unwrap()).unwrap()
}

/// The samples a folded file counts.
fn folded_total(folded: &str) -> usize {
    folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<usize>().unwrap())
        .sum()
}

fn samples_of(traces: &serde_json::Value) -> usize {
    traces
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["samples"].as_array().unwrap().len())
        .sum()
}

#[test]
fn convert_writes_every_format_from_a_real_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let traces = primes(d);
    let n = samples_of(&traces);
    assert!(n > 0);
    for out in [
        "p.cpuprofile",
        "p.speedscope.json",
        "p.trace.json",
        "p.pb.gz",
        "p.folded",
        "p.svg",
    ] {
        let r = jsprof(&["convert", "primes.json", "-o", out], d);
        assert_eq!(r.code, 0, "{out}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("{n} samples")), "{}", r.stderr);
    }
    let r = jsprof(
        &[
            "convert",
            "primes.json",
            "-o",
            "p.json.gz",
            "--format",
            "firefox",
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Each file names the page's hot function, and holds every sample.
    let cpu: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("p.cpuprofile")).unwrap()).unwrap();
    assert_eq!(cpu["samples"].as_array().unwrap().len(), n);
    assert!(cpu["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|node| node["callFrame"]["functionName"] == "isPrime"));
    let folded = std::fs::read_to_string(d.join("p.folded")).unwrap();
    let total = folded_total(&folded);
    assert_eq!(total, n, "{folded}");
    assert!(folded.contains("isPrime ("), "{folded}");
    let pprof = jsprof_export::pprof::decode(&std::fs::read(d.join("p.pb.gz")).unwrap()).unwrap();
    let counted: i64 = pprof.sample.iter().map(|s| s.value[0]).sum();
    assert_eq!(counted as usize, n);
    assert!(pprof.string_table.iter().any(|s| s == "isPrime"));
    let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("isPrime ("), "svg");
    let firefox = jsprof_export::input::read_traces(&d.join("p.json.gz"));
    assert!(firefox.is_err(), "the Firefox file is not a ProfilerTrace");
    let gz = std::fs::read(d.join("p.json.gz")).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "a .json.gz is gzipped");
}

#[test]
fn trace_out_and_profile_out_choose_the_format_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = jsprof(
        &[
            &example("primes"),
            "--trace-out",
            "t.speedscope.json",
            "--profile-out",
            "whole.cpuprofile",
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("t.speedscope.json")).unwrap()).unwrap();
    assert_eq!(
        s["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert_eq!(s["profiles"].as_array().unwrap().len(), 1);
    let c: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("whole.cpuprofile")).unwrap()).unwrap();
    assert!(!c["samples"].as_array().unwrap().is_empty());

    // An unknown extension is an error before the page runs: nothing printed, nothing written.
    let r = jsprof(&[&example("primes"), "--trace-out", "t.txt"], d);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown file extension"), "{}", r.stderr);
    assert!(!r.stdout.contains("primes"), "the page ran: {}", r.stdout);
    assert!(!d.join("t.txt").exists());
    let r = jsprof(&[&example("primes"), "--profile-out", "p.html"], d);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn convert_and_report_reject_bad_input_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.json"), "{\"frames\": 1}").unwrap();
    for (args, says) in [
        (
            &["convert", "missing.json", "-o", "x.svg"][..],
            "missing.json: no such file",
        ),
        (
            &["convert", "bad.json", "-o", "x.svg"][..],
            "bad.json: not a ProfilerTrace",
        ),
        (
            &["convert", "bad.json", "-o", "x.json"][..],
            "cannot tell the format",
        ),
        (
            &["convert", "bad.json", "-o", "x.svg", "--format", "png"][..],
            "unknown format",
        ),
        (
            &["report", "nothing/*.json", "-o", "r.html"][..],
            "no file matches",
        ),
    ] {
        let r = jsprof(args, d);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    assert!(!d.join("x.svg").exists() && !d.join("r.html").exists());
}

/// Many traces from a directory and a glob merge by function identity: one `isPrime`, every
/// sample counted.
#[test]
fn many_traces_merge_by_function_identity() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = samples_of(&primes(d));
    let many: PathBuf = d.join("field");
    std::fs::create_dir(&many).unwrap();
    for i in 0..20 {
        std::fs::copy(d.join("primes.json"), many.join(format!("t{i:02}.json"))).unwrap();
    }
    let r = jsprof(&["convert", "field", "primes.json", "-o", "all.folded"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("21 trace(s)"), "{}", r.stderr);
    let folded = std::fs::read_to_string(d.join("all.folded")).unwrap();
    let total = folded_total(&folded);
    assert_eq!(total, 21 * n);
    assert!(folded.lines().all(|l| !l.ends_with(" 0")), "{folded}");
    // Each call path once.
    let paths: std::collections::HashSet<&str> = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().0)
        .collect();
    assert_eq!(paths.len(), folded.lines().count());
    let r = jsprof(&["report", "field/*.json", "-o", "r.html"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("isPrime"), "report");
}

/// examples/bundled is minified by esbuild: the trace names `m`, `y`…; with --source-maps
/// the exports and the report name the original functions and files.
#[test]
fn source_maps_restore_original_names_in_exports_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = jsprof(&[&example("bundled"), "--trace-out", "b.json"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let trace = std::fs::read_to_string(d.join("b.json")).unwrap();
    assert!(
        !trace.contains("repelBoxes"),
        "the trace itself is minified"
    );

    let r = jsprof(&["convert", "b.json", "-o", "raw.folded"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let raw = std::fs::read_to_string(d.join("raw.folded")).unwrap();
    assert!(
        raw.contains("dist/app.min.js") && !raw.contains("repelBoxes"),
        "{raw}"
    );

    let r = jsprof(&["convert", "b.json", "-o", "m.folded", "--source-maps"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mapped = std::fs::read_to_string(d.join("m.folded")).unwrap();
    for name in ["repelBoxes (", "computeLayout (", "src/layout.js:"] {
        assert!(mapped.contains(name), "{name} in {mapped}");
    }
    assert!(!mapped.contains("app.min.js"), "{mapped}");
    let r = jsprof(&["report", "b.json", "-o", "r.html", "--source-maps"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("repelBoxes") && html.contains("src/layout.js"));
    // The trace file is never changed.
    assert_eq!(std::fs::read_to_string(d.join("b.json")).unwrap(), trace);
}
