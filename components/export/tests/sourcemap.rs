//! Source maps, on the real esbuild bundle of `examples/bundled/` (rebuilt by its
//! `build.sh`): every minified function of it maps back to its original, through a map
//! found by the bundle's comment, a `data:` URL, or an HTTP `SourceMap` header.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;

use jsprof_export::sourcemap::SourceMaps;
use jsprof_export::{Frame, Keep, Profile};
use jsprof_net::Url;
use jsprof_profiler::{ProfilerFrame, ProfilerSample, ProfilerStack, ProfilerTrace};

/// The original sources, in the order esbuild put them in the bundle.
const SOURCES: [&str; 3] = ["records.js", "layout.js", "main.js"];

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bundled")
        .canonicalize()
        .unwrap()
}

fn file_url(path: &Path) -> String {
    Url::from_file_path(path).unwrap().to_string()
}

/// A function definition in a script's text: its name as written (`""` for an anonymous
/// one), and the 1-based line and column of the `(` of its parameter list, where
/// SpiderMonkey reports a function.
#[derive(Debug, Clone)]
struct Definition {
    name: String,
    line: u64,
    column: u64,
    /// 1-based column where the definition starts (`function`, `async` or the arrow's `(`).
    start: u64,
}

/// Every `function` and parenthesised arrow of `text`, in order; comment lines skipped.
/// Enough for the example's code (no strings containing `function` or `=>`).
fn definitions(text: &str) -> Vec<Definition> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") || trimmed.starts_with("/*") || trimmed.starts_with('*') {
            continue;
        }
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if line[at..].starts_with("function")
                && (at == 0 || !is_ident(bytes[at - 1]))
                && !bytes.get(at + 8).copied().is_some_and(is_ident)
            {
                let mut p = at + 8;
                while bytes[p] == b' ' || bytes[p] == b'*' {
                    p += 1;
                }
                let name_start = p;
                while is_ident(bytes[p]) {
                    p += 1;
                }
                assert_eq!(bytes[p], b'(', "line {}: {}", i + 1, &line[at..]);
                let start = if line[..at].ends_with("async ") {
                    at - 6
                } else {
                    at
                };
                found.push((start, line[name_start..p].to_owned(), p, i));
                at = p;
            } else if line[at..].starts_with("=>") {
                // Back from the `)` before the arrow to its `(`.
                let mut p = line[..at].trim_end().len() - 1;
                assert_eq!(bytes[p], b')');
                let mut depth = 0;
                loop {
                    match bytes[p] {
                        b')' => depth += 1,
                        b'(' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    p -= 1;
                }
                found.push((p, String::new(), p, i));
                at += 2;
            } else {
                at += 1;
            }
        }
    }
    // Source order is the order of their starts (an arrow's `(` comes after the `=>` scan).
    found.sort_by_key(|&(start, _, _, line)| (line, start));
    found
        .into_iter()
        .map(|(start, name, paren, line)| Definition {
            name,
            line: line as u64 + 1,
            column: paren as u64 + 1,
            start: start as u64 + 1,
        })
        .collect()
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// A trace with one frame per definition (each a root stack sampled once), at `resource`.
fn trace_of(defs: &[Definition], resource: &str) -> ProfilerTrace {
    ProfilerTrace {
        resources: vec![resource.to_owned()],
        frames: defs
            .iter()
            .map(|d| ProfilerFrame {
                name: d.name.clone(),
                resource_id: Some(0),
                line: Some(d.line),
                column: Some(d.column),
            })
            .collect(),
        stacks: (0..defs.len() as u64)
            .map(|frame_id| ProfilerStack {
                frame_id,
                parent_id: None,
            })
            .collect(),
        samples: (0..defs.len() as u64)
            .map(|i| ProfilerSample {
                marker: None,
                stack_id: Some(i),
                timestamp: i as f64 * 10.0,
            })
            .collect(),
    }
}

/// The bundle's functions but its wrapper, and their originals with the URL of each one's
/// source file (under `src_dir`).
fn bundle_and_originals(src_dir: &Url) -> (Vec<Definition>, Vec<(Definition, String)>) {
    let dir = example();
    let bundle = fs::read_to_string(dir.join("dist/app.min.js")).unwrap();
    let mut minified = definitions(&bundle);
    // The IIFE esbuild wraps the bundle in, `(()=>{…})()`: no source has it.
    let wrapper = minified.remove(0);
    assert_eq!(
        (wrapper.name.as_str(), wrapper.line, wrapper.column),
        ("", 1, 2)
    );
    let mut originals = Vec::new();
    for file in SOURCES {
        let text = fs::read_to_string(dir.join("src").join(file)).unwrap();
        let url = src_dir.join(file).unwrap().to_string();
        originals.extend(definitions(&text).into_iter().map(|d| (d, url.clone())));
    }
    assert_eq!(
        minified.len(),
        originals.len(),
        "{minified:#?}\n{originals:#?}"
    );
    (minified, originals)
}

/// Checks that `mapped` (a frame of each minified definition, in order) are the originals.
fn assert_originals(mapped: &[Frame], minified: &[Definition], originals: &[(Definition, String)]) {
    let sources: HashMap<&str, String> = SOURCES
        .iter()
        .map(|f| {
            (
                *f,
                fs::read_to_string(example().join("src").join(f)).unwrap(),
            )
        })
        .collect();
    for ((frame, min), (orig, url)) in mapped.iter().zip(minified).zip(originals) {
        // A function the minifier left anonymous stays anonymous; every other one gets its
        // original name back.
        let want_name = if min.name.is_empty() { "" } else { &orig.name };
        assert_eq!(frame.name, want_name, "{min:?} -> {frame:?}, want {orig:?}");
        assert_eq!(frame.resource.as_deref(), Some(url.as_str()), "{frame:?}");
        assert_eq!(frame.line, Some(orig.line), "{frame:?}, want {orig:?}");
        // The column is in the definition, between its start and its `(`; a named
        // function's points at its name.
        let column = frame.column.unwrap();
        assert!(
            (orig.start..=orig.column).contains(&column),
            "{frame:?}, want {orig:?}"
        );
        if !frame.name.is_empty() {
            let file = url.rsplit('/').next().unwrap();
            let line = sources[file].lines().nth(orig.line as usize - 1).unwrap();
            assert!(
                line[column as usize - 1..].starts_with(&frame.name),
                "{line}"
            );
        }
    }
}

fn frames_of(profile: &Profile) -> Vec<Frame> {
    profile.frames().to_vec()
}

#[test]
fn every_function_of_the_bundle_maps_to_its_original() {
    let dir = example();
    let bundle_path = dir.join("dist/app.min.js");
    let bundle = fs::read_to_string(&bundle_path).unwrap();
    let src_dir = Url::from_directory_path(dir.join("src")).unwrap();
    let (minified, originals) = bundle_and_originals(&src_dir);

    // The bundle really is minified: no original function name survives in it.
    for (orig, _) in &originals {
        if !orig.name.is_empty() {
            assert!(
                !bundle.contains(&orig.name),
                "{} is in the bundle",
                orig.name
            );
        }
    }
    assert!(minified.iter().any(|d| d.name.len() == 1));

    let url = file_url(&bundle_path);
    let trace = trace_of(&minified, &url);
    let mut maps = SourceMaps::new();
    let mut profile = Profile::new(Keep::Counts);
    profile
        .add_trace("bundled", &trace, &mut |f| maps.map(f))
        .unwrap();
    assert_eq!(maps.warnings(), [] as [String; 0]);
    assert_originals(&frames_of(&profile), &minified, &originals);
    // The hot spot of the page, by name.
    let names: Vec<_> = profile.frames().iter().map(|f| f.name.as_str()).collect();
    for name in [
        "computeLayout",
        "repelBoxes",
        "parseRecords",
        "renderSummary",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    // The trace itself is untouched.
    assert_eq!(trace, trace_of(&minified, &url));

    // Top-level code (named '' at the script's start), and the bundle's IIFE wrapper at its
    // `(`, have no mapping at or before them on their line: as they are.
    for column in [1, 2] {
        let top = Frame {
            name: String::new(),
            resource: Some(url.clone()),
            line: Some(1),
            column: Some(column),
        };
        assert_eq!(maps.map(top.clone()), top);
    }
    // Frames without a resource or position, or of another script without a map.
    let builtin = Frame {
        name: "Math.imul".into(),
        resource: None,
        line: None,
        column: None,
    };
    assert_eq!(maps.map(builtin.clone()), builtin);
    let plain = Frame {
        name: "isPrime".into(),
        resource: Some(file_url(
            &dir.join("../primes/generate.js").canonicalize().unwrap(),
        )),
        line: Some(5),
        column: Some(17),
    };
    assert_eq!(maps.map(plain.clone()), plain);
    assert_eq!(maps.warnings(), [] as [String; 0]);
}

/// Standard base64 with padding, for `data:` URLs.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| n << 8 | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
        out.push_str(&"=".repeat(3 - chunk.len()));
    }
    out
}

/// The bundle's text without its `sourceMappingURL` comment.
fn bare_bundle() -> String {
    let text = fs::read_to_string(example().join("dist/app.min.js")).unwrap();
    let cut = text.rfind("//# sourceMappingURL=").unwrap();
    text[..cut].to_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sourcemap-tests")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_data_url_map_resolves_sources_against_the_script() {
    let map = fs::read(example().join("dist/app.min.js.map")).unwrap();
    let dir = scratch("data-url");
    let dist = dir.join("dist");
    fs::create_dir_all(&dist).unwrap();
    let script = dist.join("inline.js");
    fs::write(
        &script,
        format!(
            "{}//# sourceMappingURL=data:application/json;charset=utf-8;base64,{}\n",
            bare_bundle(),
            base64(&map)
        ),
    )
    .unwrap();
    // "../src/records.js" from dist/inline.js.
    let src_dir = Url::from_directory_path(dir.join("src")).unwrap();
    let (minified, originals) = bundle_and_originals(&src_dir);
    let url = file_url(&script);
    let mut maps = SourceMaps::new();
    let mapped: Vec<Frame> = minified
        .iter()
        .map(|d| {
            maps.map(Frame {
                name: d.name.clone(),
                resource: Some(url.clone()),
                line: Some(d.line),
                column: Some(d.column),
            })
        })
        .collect();
    assert_eq!(maps.warnings(), [] as [String; 0]);
    assert_originals(&mapped, &minified, &originals);
}

/// An HTTP server on 127.0.0.1 serving `files` (path -> headers, body), counting requests.
/// A file with a `Location` header is a 302 redirect.
fn serve(files: HashMap<&'static str, (Vec<String>, Vec<u8>)>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    thread::spawn(move || {
        for req in server.incoming_requests() {
            let path = req.url().to_owned();
            seen.lock().unwrap().push(path.clone());
            let resp = match files.get(path.as_str()) {
                Some((headers, body)) => {
                    let mut resp = tiny_http::Response::from_data(body.clone());
                    if headers.iter().any(|h| h.starts_with("Location:")) {
                        resp = resp.with_status_code(302);
                    }
                    for h in headers {
                        resp = resp.with_header(h.parse::<tiny_http::Header>().unwrap());
                    }
                    resp
                }
                None => tiny_http::Response::from_data(b"not found".to_vec()).with_status_code(404),
            };
            let _ = req.respond(resp);
        }
    });
    (port, log)
}

#[test]
fn a_source_map_header_over_http_wins_and_is_fetched_once() {
    // The map with a sourceRoot: sources become /original/src/*.js on the server.
    let mut map: serde_json::Value =
        serde_json::from_slice(&fs::read(example().join("dist/app.min.js.map")).unwrap()).unwrap();
    map["sourceRoot"] = "/original/app/".into();
    let files = HashMap::from([
        (
            "/js/app.min.js",
            (
                vec!["SourceMap: ../maps/app.map".to_owned()],
                // The comment names a map that does not exist: the header comes first.
                format!("{}//# sourceMappingURL=missing.map\n", bare_bundle()).into_bytes(),
            ),
        ),
        ("/maps/app.map", (vec![], serde_json::to_vec(&map).unwrap())),
        ("/js/nomap.js", (vec![], b"function f(){}\n".to_vec())),
        (
            "/js/gone.js",
            (
                vec!["X-SourceMap: gone.js.map".to_owned()],
                bare_bundle().into_bytes(),
            ),
        ),
    ]);
    let (port, log) = serve(files);
    let base = format!("http://127.0.0.1:{port}");
    let src_dir = Url::parse(&format!("{base}/original/src/")).unwrap();
    let (minified, originals) = bundle_and_originals(&src_dir);
    let url = format!("{base}/js/app.min.js");
    let trace = trace_of(&minified, &url);
    let mut maps = SourceMaps::new();
    // Two traces of the same script, and frames of other scripts.
    let mut profile = Profile::new(Keep::Samples);
    for name in ["first", "second"] {
        profile
            .add_trace(name, &trace, &mut |f| maps.map(f))
            .unwrap();
    }
    assert_eq!(maps.warnings(), [] as [String; 0]);
    assert_originals(&frames_of(&profile), &minified, &originals);
    assert_eq!(profile.frames().len(), minified.len());

    for (script, line) in [
        ("nomap.js", 1),
        ("gone.js", 1),
        ("nomap.js", 1),
        ("gone.js", 1),
    ] {
        let frame = Frame {
            name: "y".into(),
            resource: Some(format!("{base}/js/{script}")),
            line: Some(line),
            column: Some(11),
        };
        assert_eq!(maps.map(frame.clone()), frame);
    }
    // One warning, for the map that is not there, naming the script and the status.
    let warnings = maps.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!("{base}/js/gone.js: ")),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("gone.js.map: HTTP status 404"),
        "{warnings:?}"
    );

    let mut requests = log.lock().unwrap().clone();
    requests.sort();
    assert_eq!(
        requests,
        [
            "/js/app.min.js",
            "/js/gone.js",
            "/js/gone.js.map",
            "/js/nomap.js",
            "/maps/app.map"
        ]
    );
}

#[test]
fn a_broken_or_missing_map_is_a_warning_and_frames_stay() {
    let dir = scratch("broken");
    let body = bare_bundle();
    let broken = [
        ("not-json.js", "{\"version\":3,\"sources\":[".to_owned()),
        (
            "bad-vlq.js",
            r#"{"version":3,"sources":["a.js"],"names":[],"mappings":"A!!;"}"#.to_owned(),
        ),
        (
            "bad-source.js",
            r#"{"version":3,"sources":["a.js"],"names":[],"mappings":"ACAA"}"#.to_owned(),
        ),
        ("empty.js", String::new()),
    ];
    let mut scripts = Vec::new();
    for (name, map) in &broken {
        let script = dir.join(name);
        fs::write(&script, format!("{body}//# sourceMappingURL={name}.map\n")).unwrap();
        fs::write(dir.join(format!("{name}.map")), map).unwrap();
        scripts.push(script);
    }
    let missing = dir.join("missing.js");
    fs::write(
        &missing,
        format!("{body}//# sourceMappingURL=nowhere/missing.js.map\n"),
    )
    .unwrap();
    scripts.push(missing);
    let bad_data = dir.join("bad-data.js");
    fs::write(
        &bad_data,
        format!("{body}//# sourceMappingURL=data:application/json;base64,@@@\n"),
    )
    .unwrap();
    scripts.push(bad_data);
    scripts.push(dir.join("no-such-script.js"));

    let minified = definitions(&body);
    let mut maps = SourceMaps::new();
    for _ in 0..2 {
        for script in &scripts {
            let trace = trace_of(&minified, &file_url(script));
            let mut profile = Profile::new(Keep::Counts);
            profile
                .add_trace("t", &trace, &mut |f| maps.map(f))
                .unwrap();
            for (frame, d) in profile.frames().iter().zip(&minified) {
                assert_eq!(frame.name, d.name);
                assert_eq!((frame.line, frame.column), (Some(d.line), Some(d.column)));
                assert_eq!(frame.resource.as_deref(), Some(file_url(script).as_str()));
            }
        }
    }
    // One warning per script, however often its frames come, each naming its script.
    let warnings = maps.warnings();
    assert_eq!(warnings.len(), scripts.len(), "{warnings:#?}");
    for (warning, script) in warnings.iter().zip(&scripts) {
        assert!(warning.starts_with(&file_url(script)), "{warning}");
    }
    assert!(warnings[4].contains("no such file"), "{}", warnings[4]);
}

/// The rule of `sourcemap.rs`: a map is loaded as a same-origin request of its script's
/// origin. A page's script cannot make jsprof read a local file, or reach another server
/// (directly or by a redirect): those maps are refused with a warning, never requested, and
/// the frames stay as they are; same-origin and `data:` maps still work.
#[test]
fn a_map_reaches_no_further_than_its_script() {
    let map = fs::read(example().join("dist/app.min.js.map")).unwrap();
    // A valid map on disk, and one on another local server: either, if loaded, would map
    // the frames (and the other server would log the request).
    let dir = scratch("hostile");
    let local_map = dir.join("app.min.js.map");
    fs::write(&local_map, &map).unwrap();
    let local_map = file_url(&local_map);
    let (other, other_log) = serve(HashMap::from([(
        "/dist/app.min.js.map",
        (vec![], map.clone()),
    )]));
    let elsewhere = format!("http://127.0.0.1:{other}/dist/app.min.js.map");
    let body = bare_bundle();
    let script = |comment: &str| format!("{body}//# sourceMappingURL={comment}\n").into_bytes();
    let data_map = format!("data:application/json;base64,{}", base64(&map));
    let files = HashMap::from([
        // Refused: a local file, by comment or header; another origin, directly or through
        // a redirect of the script's own server.
        ("/dist/file-comment.js", (vec![], script(&local_map))),
        (
            "/dist/file-header.js",
            (
                vec![format!("SourceMap: {local_map}")],
                body.clone().into_bytes(),
            ),
        ),
        ("/dist/elsewhere.js", (vec![], script(&elsewhere))),
        ("/dist/redirected.js", (vec![], script("to-elsewhere.map"))),
        (
            "/dist/to-elsewhere.map",
            (vec![format!("Location: {elsewhere}")], vec![]),
        ),
        ("/dist/to-file.js", (vec![], script("to-file.map"))),
        (
            "/dist/to-file.map",
            (vec![format!("Location: {local_map}")], vec![]),
        ),
        // Allowed: the same origin (also through a same-origin redirect), and data:.
        ("/dist/same.js", (vec![], script("app.min.js.map"))),
        ("/dist/app.min.js.map", (vec![], map.clone())),
        ("/dist/same-redirect.js", (vec![], script("/moved.map"))),
        (
            "/moved.map",
            (vec!["Location: /dist/app.min.js.map".to_owned()], vec![]),
        ),
        ("/dist/data.js", (vec![], script(&data_map))),
    ]);
    let (port, log) = serve(files);
    let base = format!("http://127.0.0.1:{port}");
    let (minified, originals) = bundle_and_originals(&Url::parse(&format!("{base}/src/")).unwrap());
    let mut maps = SourceMaps::new();
    let map_all = |maps: &mut SourceMaps, url: &str| -> Vec<Frame> {
        minified
            .iter()
            .map(|d| {
                maps.map(Frame {
                    name: d.name.clone(),
                    resource: Some(url.to_owned()),
                    line: Some(d.line),
                    column: Some(d.column),
                })
            })
            .collect()
    };
    let refused = [
        (
            "file-comment.js",
            "only a file: document may load file: URLs",
        ),
        (
            "file-header.js",
            "only a file: document may load file: URLs",
        ),
        (
            "elsewhere.js",
            "a cross-origin URL in a same-origin request",
        ),
        (
            "redirected.js",
            "a cross-origin URL in a same-origin request",
        ),
        ("to-file.js", "only a file: document may load file: URLs"),
    ];
    for (name, _) in refused {
        let url = format!("{base}/dist/{name}");
        for (frame, d) in map_all(&mut maps, &url).iter().zip(&minified) {
            assert_eq!(frame.name, d.name, "{name}: {frame:?}");
            assert_eq!(frame.resource.as_deref(), Some(url.as_str()), "{name}");
            assert_eq!((frame.line, frame.column), (Some(d.line), Some(d.column)));
        }
    }
    for name in ["same.js", "same-redirect.js", "data.js"] {
        let url = format!("{base}/dist/{name}");
        assert_originals(&map_all(&mut maps, &url), &minified, &originals);
    }
    // One warning per refused script, saying why; none for the others.
    let warnings = maps.warnings();
    assert_eq!(warnings.len(), refused.len(), "{warnings:#?}");
    for (warning, (name, why)) in warnings.iter().zip(refused) {
        assert!(
            warning.starts_with(&format!("{base}/dist/{name}: source map not used (")),
            "{warning}"
        );
        assert!(warning.contains(&format!("blocked: {why}")), "{warning}");
    }
    // The other server never heard of us, and the script's server only of what it served.
    assert_eq!(*other_log.lock().unwrap(), [] as [String; 0]);
    let mut requests = log.lock().unwrap().clone();
    requests.sort();
    assert_eq!(
        requests,
        [
            "/dist/app.min.js.map",
            "/dist/app.min.js.map",
            "/dist/data.js",
            "/dist/elsewhere.js",
            "/dist/file-comment.js",
            "/dist/file-header.js",
            "/dist/redirected.js",
            "/dist/same-redirect.js",
            "/dist/same.js",
            "/dist/to-elsewhere.map",
            "/dist/to-file.js",
            "/dist/to-file.map",
            "/moved.map",
        ]
    );
}

/// A `file:` script's map follows the same rule: a `file:` or `data:` map, not one on a
/// server (which a local page could only read with CORS, and never same-origin).
#[test]
fn a_file_script_may_not_use_a_map_on_a_server() {
    let map = fs::read(example().join("dist/app.min.js.map")).unwrap();
    let (port, log) = serve(HashMap::from([("/app.map", (vec![], map))]));
    let dir = scratch("file-to-http");
    let script = dir.join("app.js");
    fs::write(
        &script,
        format!(
            "{}//# sourceMappingURL=http://127.0.0.1:{port}/app.map\n",
            bare_bundle()
        ),
    )
    .unwrap();
    let url = file_url(&script);
    let minified = definitions(&bare_bundle());
    let mut maps = SourceMaps::new();
    for d in &minified {
        let frame = Frame {
            name: d.name.clone(),
            resource: Some(url.clone()),
            line: Some(d.line),
            column: Some(d.column),
        };
        assert_eq!(maps.map(frame.clone()), frame);
    }
    let warnings = maps.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("blocked: a cross-origin URL in a same-origin request"),
        "{warnings:?}"
    );
    assert_eq!(*log.lock().unwrap(), [] as [String; 0]);
}
