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

/// The case, end to end: a trace of an `http:` script whose last line is
/// `//# sourceMappingURL=file:///…` (a valid map on this machine) must not make
/// `jsprof convert --source-maps` read that file, nor fetch a map on another local server;
/// the same map from the script's own origin is used.
#[test]
fn source_maps_do_not_reach_past_their_script() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = jsprof(&[&example("bundled"), "--trace-out", "b.json"], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bundled = Path::new(&example("bundled"))
        .parent()
        .unwrap()
        .join("dist");
    let script = std::fs::read_to_string(bundled.join("app.min.js")).unwrap();
    let map = std::fs::read(bundled.join("app.min.js.map")).unwrap();
    let bare = &script[..script.rfind("//# sourceMappingURL=").unwrap()];
    // A valid map as a local file, and on a second server.
    std::fs::write(d.join("local.map"), &map).unwrap();
    let local = url::Url::from_file_path(d.join("local.map")).unwrap();
    let (other, other_heard) = map_server(None, map.clone());
    // The script's server: its comment names `?map=` (local, other, or its own map).
    let (port, _) = map_server(Some(bare.to_owned()), map);
    let trace = std::fs::read_to_string(d.join("b.json")).unwrap();
    let file_script = url::Url::from_file_path(bundled.join("app.min.js")).unwrap();
    for (map_url, used) in [
        (local.to_string(), false),
        (format!("http://127.0.0.1:{other}/app.min.js.map"), false),
        ("app.min.js.map".to_owned(), true),
    ] {
        let served = format!(
            "http://127.0.0.1:{port}/app.min.js?map={}",
            url::form_urlencoded::byte_serialize(map_url.as_bytes()).collect::<String>()
        );
        std::fs::write(
            d.join("h.json"),
            trace.replace(file_script.as_str(), &served),
        )
        .unwrap();
        let r = jsprof(&["convert", "h.json", "-o", "h.folded", "--source-maps"], d);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let folded = std::fs::read_to_string(d.join("h.folded")).unwrap();
        assert_eq!(folded.contains("repelBoxes ("), used, "{map_url}: {folded}");
        assert_eq!(
            r.stderr.contains("source map not used (") && r.stderr.contains(": blocked: "),
            !used,
            "{map_url}: {}",
            r.stderr
        );
    }
    assert_eq!(
        *other_heard.lock().unwrap(),
        0,
        "the other server was asked"
    );
}

/// A server of `/app.min.js` (`script` with a `sourceMappingURL` of its `?map=` query, if
/// given) and `/app.min.js.map` (`map`); and how many requests it heard.
fn map_server(
    script: Option<String>,
    map: Vec<u8>,
) -> (u16, std::sync::Arc<std::sync::Mutex<usize>>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(0));
    let count = heard.clone();
    std::thread::spawn(move || {
        for req in server.incoming_requests() {
            *count.lock().unwrap() += 1;
            let url = url::Url::parse(&format!("http://x{}", req.url())).unwrap();
            let body = match (url.path(), &script) {
                ("/app.min.js", Some(script)) => {
                    let map = url
                        .query_pairs()
                        .find(|(k, _)| k == "map")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    format!("{script}//# sourceMappingURL={map}\n").into_bytes()
                }
                ("/app.min.js.map", _) => map.clone(),
                _ => {
                    let _ = req.respond(tiny_http::Response::empty(404));
                    continue;
                }
            };
            let _ = req.respond(tiny_http::Response::from_data(body));
        }
    });
    (port, heard)
}
