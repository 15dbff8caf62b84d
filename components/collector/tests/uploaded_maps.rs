//! Uploaded source maps (issue 37, item 2): `jsprof-collector sourcemaps upload` against a
//! running `collect`, traces whose frames are a real minified script's functions
//! (tests/fixtures/maps, esbuild's output), and every view — `top`, `flame`, `diff`,
//! `query`'s `frames_mapped`, the page's API — naming the original functions, files and
//! lines; a map uploaded after its traces applies to them; debug ids from the real Sentry
//! and Datadog SDK payloads (tests/fixtures) match a map by id alone; bad uploads are
//! refused with their reason and lose nothing.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use common::maps::{maps, minified_trace, post_minified, upload, ORIGINALS};
use common::{http, query, run, Collector, DAY};

const UPLOAD_KEY: &str = "upload-secret-0123";
const READ_KEY: &str = "read-key-0123";
/// The debug id of tests/fixtures/maps/dist-debug-id (its README).
const DEBUG_ID: &str = "9c1f6a52-7d0e-4b8a-a3e1-5f2c7b9d4e10";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `top`'s table for `release`.
fn top(store: &Path, release: &str) -> String {
    run(&["top", "--store", s(store), "--release", release])
}

/// (function, resource, line, samples) of `top`'s table.
fn top_rows(table: &str) -> Vec<(String, String, String, i64)> {
    table
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            (c.len() > 9)
                .then(|| {
                    Some((
                        c[1].to_owned(),
                        c[2].to_owned(),
                        c[3].to_owned(),
                        c[9].parse().ok()?,
                    ))
                })
                .flatten()
        })
        .collect()
}

/// Column `i` of a table `query` printed, row by row.
fn column(table: &str, i: usize) -> Vec<String> {
    table
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| l.split('|').nth(i + 1).unwrap().trim().to_owned())
        .collect()
}

/// The line of `function NAME` in the fixture's original `file`.
fn original_line(file: &str, name: &str) -> String {
    let text = std::fs::read_to_string(maps().join("src").join(file)).unwrap();
    let at = text
        .lines()
        .position(|l| l.contains(&format!("function {name}(")))
        .unwrap();
    (at + 1).to_string()
}

#[test]
fn uploaded_maps_name_the_original_functions_in_every_view() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let url = "https://shop.example/assets/app.min.js";
    let c = Collector::start(
        store,
        &[
            "--upload-key",
            &format!("default={UPLOAD_KEY}"),
            "--read-key",
            &format!("default={READ_KEY}"),
        ],
    );
    // The traces first, minified: the map comes after them.
    post_minified(c.addr, "1.0", url);
    post_minified(c.addr, "2.0", url);
    post_minified(c.addr, "2.0", url);
    let before = top(store, "1.0");
    let names: Vec<String> = top_rows(&before).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["e", "c", "i", "u"], "{before}");

    for release in ["1.0", "2.0"] {
        let (ok, out, err) = upload(c.addr, UPLOAD_KEY, release, &maps().join("dist"));
        assert!(ok, "{err}");
        assert!(
            out.contains("uploaded assets/app.min.js.map")
                && out.contains("scripts assets/app.min.js"),
            "{out}"
        );
    }
    // Kept with the store, per project and release, with its index.
    let kept = store.join("sourcemaps/default/1.0");
    assert!(kept.join("index.json").is_file());

    // top: the original names, files and lines; the samples as before.
    let after = top(store, "1.0");
    let rows = top_rows(&after);
    let cart = "https://shop.example/src/cart.js";
    let main = "https://shop.example/src/main.js";
    assert_eq!(
        rows,
        [
            (
                ORIGINALS[0].into(),
                cart.into(),
                original_line("cart.js", "formatPrice"),
                6
            ),
            (
                ORIGINALS[1].into(),
                cart.into(),
                original_line("cart.js", "computeTotals"),
                7
            ),
            (
                ORIGINALS[2].into(),
                cart.into(),
                original_line("cart.js", "renderCart"),
                11
            ),
            (
                ORIGINALS[3].into(),
                main.into(),
                original_line("main.js", "onLoad"),
                12
            ),
        ],
        "{after}"
    );
    // The store still holds the frames as the page gave them.
    let stored = query(store, "SELECT name FROM frames ORDER BY name");
    assert_eq!(column(&stored, 0), ["c", "e", "i", "u"], "{stored}");

    // query: frames_mapped, a drop-in for frames.
    let mapped = query(
        store,
        "SELECT m.name, m.line, count(*) AS samples FROM samples s
         JOIN stacks st ON st.stack_id = s.stack_id
         JOIN frames_mapped m ON m.frame_id = st.frame_id
         WHERE s.release = '1.0' GROUP BY m.name, m.line ORDER BY samples DESC, m.name",
    );
    let lines = |name| {
        original_line(
            if name == "onLoad" {
                "main.js"
            } else {
                "cart.js"
            },
            name,
        )
    };
    assert_eq!(
        (column(&mapped, 0), column(&mapped, 1), column(&mapped, 2)),
        (
            ORIGINALS.map(String::from).to_vec(),
            ORIGINALS.map(lines).to_vec(),
            ["6", "3", "2", "1"].map(String::from).to_vec()
        ),
        "{mapped}"
    );

    // flame: the call paths by original name.
    let folded = dir.path().join("out.folded");
    run(&[
        "flame",
        "--store",
        s(store),
        "--release",
        "1.0",
        "-o",
        s(&folded),
    ]);
    let folded = std::fs::read_to_string(&folded).unwrap();
    assert!(
        folded.lines().any(|l| {
            let path: Vec<&str> = l.rsplit_once(' ').unwrap().0.split(';').collect();
            path.len() == 4
                && path
                    .iter()
                    .zip(["onLoad", "renderCart", "computeTotals", "formatPrice"])
                    .all(|(p, n)| p.starts_with(n))
        }),
        "{folded}"
    );
    assert!(
        !folded.contains(";e (") && !folded.contains("u ("),
        "{folded}"
    );

    // diff: both releases' frames through their own maps.
    let diff = run(&[
        "diff",
        "--store",
        s(store),
        "--base",
        "1.0",
        "--head",
        "2.0",
    ]);
    for name in ORIGINALS {
        assert!(diff.contains(name), "{diff}");
    }
    assert!(!diff.contains("| e "), "{diff}");

    // The page's API: top, a trace's stacks, the flame graph.
    let auth = format!("Bearer {READ_KEY}");
    let (status, _, body) = http(
        c.addr,
        "GET",
        "/api/top?release=1.0",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let f = &v["functions"][0];
    assert_eq!(f["function"], "formatPrice", "{body}");
    assert_eq!(f["resource"], cart, "{body}");
    assert_eq!(
        f["line"].to_string(),
        original_line("cart.js", "formatPrice"),
        "{body}"
    );
    let (_, _, body) = http(
        c.addr,
        "GET",
        "/api/traces?release=1.0",
        &[("Authorization", &auth)],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = v["traces"][0]["id"].as_str().unwrap().to_owned();
    let (status, _, body) = http(
        c.addr,
        "GET",
        &format!("/api/trace?id={id}"),
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let functions: Vec<&str> = v["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["function"].as_str().unwrap())
        .collect();
    for name in ORIGINALS {
        assert!(functions.contains(&name), "{body}");
    }
    let (status, _, svg) = http(
        c.addr,
        "GET",
        "/api/flame?release=1.0",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200);
    assert!(
        svg.contains("formatPrice") && svg.contains("computeTotals"),
        "{svg}"
    );
    let (status, _, body) = http(
        c.addr,
        "GET",
        "/api/diff?base=1.0&head=2.0",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("formatPrice"), "{body}");

    let (status, _, body) = http(
        c.addr,
        "GET",
        "/api/groups?release=1.0&by=browser",
        &[("Authorization", &auth)],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["groups"][0]["top_function"], "formatPrice", "{body}");
    assert_eq!(v["groups"][0]["top_self"], 6, "{body}");

    // A restart keeps the maps: the page maps as before.
    drop(c);
    let c = Collector::start(store, &["--read-key", &format!("default={READ_KEY}")]);
    let (_, _, body) = http(
        c.addr,
        "GET",
        "/api/top?release=2.0",
        &[("Authorization", &auth)],
        b"",
    );
    assert!(body.contains("\"function\":\"formatPrice\""), "{body}");
}

/// The Sentry fixture's envelope with its profile chunk's frames replaced by the minified
/// script's at `url`, and `debug_meta.images` naming the script's debug id, as
/// `@sentry/core`'s `getDebugImagesForResources` does.
fn sentry_envelope(url: &str) -> Vec<u8> {
    let body = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sentry-browser-11.12.0.body"),
    )
    .unwrap();
    let text = String::from_utf8(body).unwrap();
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let mut chunk: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    let t0 = chunk["profile"]["samples"][0]["timestamp"]
        .as_f64()
        .unwrap();
    let trace = minified_trace(url);
    let frames: Vec<serde_json::Value> = trace["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::json!({"function": f["name"], "abs_path": url, "lineno": f["line"], "colno": f["column"]}))
        .collect();
    // Sentry's stacks: frame ids, leaf first.
    let stacks = serde_json::json!([[3], [2, 3], [1, 2, 3], [0, 1, 2, 3], [0, 2, 3]]);
    let samples: Vec<serde_json::Value> = trace["samples"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, s)| serde_json::json!({"stack_id": s["stackId"], "thread_id": "0", "timestamp": t0 + 0.01 * i as f64}))
        .collect();
    chunk["profile"]["frames"] = frames.into();
    chunk["profile"]["stacks"] = stacks;
    chunk["profile"]["samples"] = samples.into();
    chunk["debug_meta"] = serde_json::json!({"images": [{"type": "sourcemap", "code_file": url, "debug_id": DEBUG_ID}]});
    lines[2] = chunk.to_string();
    lines.join("\n").into_bytes()
}

/// A Datadog profile upload: the fixture's `event` part, and a `wall-time.json` of the
/// minified trace with `debugIds` as `@datadog/browser-rum`'s `buildProfilerDebugIds`
/// writes them (`[{resourceId, debugId}]`).
fn datadog_upload(url: &str) -> (String, Vec<u8>) {
    let body = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/datadog-browser-rum-7.16.2.body"),
    )
    .unwrap();
    let text = String::from_utf8_lossy(&body);
    let start = text.find("{\"application\"").unwrap();
    let end = start + text[start..].find("\r\n").unwrap();
    let mut event: serde_json::Value = serde_json::from_str(&text[start..end]).unwrap();
    event["tags_profiler"] = "service:shop,version:dd-4.2".into();
    let mut wall = minified_trace(url);
    wall["debugIds"] = serde_json::json!([{"resourceId": 0, "debugId": DEBUG_ID}]);
    wall["clocksOrigin"] = serde_json::json!({"relative": 0, "timeStamp": DAY});
    let boundary = "----jsprofMapsBoundary";
    let mut out = Vec::new();
    for (name, json) in [("event", event), ("wall-time.json", wall)] {
        out.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\nContent-Type: application/json\r\n\r\n{json}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), out)
}

#[test]
fn debug_ids_of_sentry_and_datadog_match_a_map_by_id_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let c = Collector::start(store, &["--upload-key", &format!("default={UPLOAD_KEY}")]);
    // A URL no uploaded name fits: only the debug id can find the map.
    let url = "https://cdn.example/static/3f9a17/main.js";
    let (status, _, answer) = http(
        c.addr,
        "POST",
        "/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef",
        &[("Content-Type", "text/plain;charset=UTF-8")],
        &sentry_envelope(url),
    );
    assert_eq!(status, 200, "{answer}");
    let (content_type, body) = datadog_upload(url);
    let (status, _, answer) = http(
        c.addr,
        "POST",
        "/api/v2/profile?dd-api-key=pub0123456789abcdef0123456789abcd",
        &[("Content-Type", &content_type)],
        &body,
    );
    assert_eq!(status, 202, "{answer}");
    // And the same frames without a debug id: they stay as they are.
    post_minified(c.addr, "plain-1", url);
    // The ids are kept, one small column per trace.
    let ids = query(
        store,
        "SELECT source, release, debug_ids FROM traces ORDER BY source",
    );
    assert!(
        ids.contains(&format!("{{\"{url}\":\"{DEBUG_ID}\"}}")),
        "{ids}"
    );
    assert_eq!(ids.matches(DEBUG_ID).count(), 2, "{ids}");

    // The map is uploaded for a release of its own; the script names its debug id.
    let (ok, out, err) = upload(
        c.addr,
        UPLOAD_KEY,
        "build-77",
        &maps().join("dist-debug-id"),
    );
    assert!(ok, "{err}");
    assert!(
        out.contains(DEBUG_ID) && out.contains("scripts static/bundle.js"),
        "{out}"
    );

    for release in ["shop@3.1.4", "dd-4.2"] {
        let names: Vec<String> = top_rows(&top(store, release))
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(names, ORIGINALS, "{release}");
    }
    let plain: Vec<String> = top_rows(&top(store, "plain-1"))
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(plain, ["e", "c", "i", "u"]);
}

#[test]
fn bad_uploads_are_refused_with_a_reason_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let map = std::fs::read(maps().join("dist/assets/app.min.js.map")).unwrap();
    let target = "/v1/sourcemaps?release=1.0&name=assets/app.min.js.map";
    let bearer = format!("Bearer {UPLOAD_KEY}");

    // Without upload keys the route is off.
    {
        let c = Collector::start(store, &[]);
        let (status, _, body) = http(c.addr, "POST", target, &[("Authorization", &bearer)], &map);
        assert_eq!(status, 403, "{body}");
        assert!(body.contains("--upload-key"), "{body}");
    }
    let c = Collector::start(
        store,
        &[
            "--upload-key",
            &format!("default={UPLOAD_KEY}"),
            "--pref",
            "collector.max_map_bytes=4096",
        ],
    );
    let (status, _, body) = http(c.addr, "POST", target, &[], &map);
    assert_eq!(
        (status, body.trim()),
        (401, "missing upload key (Authorization: Bearer KEY)")
    );
    let (status, _, body) = http(
        c.addr,
        "POST",
        target,
        &[("Authorization", "Bearer nope")],
        &map,
    );
    assert_eq!((status, body.trim()), (401, "unknown upload key"));
    // The CLI says so, and fails.
    let (ok, _, err) = upload(c.addr, "nope", "1.0", &maps().join("dist"));
    assert!(
        !ok && err.contains("401") && err.contains("unknown upload key"),
        "{err}"
    );

    // A good map first, which what follows must not lose.
    let (status, _, body) = http(
        c.addr,
        "POST",
        &format!("{target}&script=assets/app.min.js"),
        &[("Authorization", &bearer)],
        &map,
    );
    assert_eq!(status, 200, "{body}");
    let index = std::fs::read(store.join("sourcemaps/default/1.0/index.json")).unwrap();

    let cases: [(&str, Vec<u8>, u16, &str); 6] = [
        (
            target,
            b"{\"version\":3,\"mappings\":".to_vec(),
            400,
            "not a source map",
        ),
        (
            target,
            b"<html>not json</html>".to_vec(),
            400,
            "not a source map",
        ),
        (target, vec![b' '; 5000], 413, "collector.max_map_bytes"),
        (
            "/v1/sourcemaps?release=1.0&name=../../../etc/x.map",
            map.clone(),
            400,
            "relative path",
        ),
        ("/v1/sourcemaps?name=a.map", map.clone(), 400, "release"),
        (
            "/v1/sourcemaps?release=1.0&name=a.map&debug_id=zz",
            map.clone(),
            400,
            "debug_id",
        ),
    ];
    for (t, body, want, reason) in cases {
        let (status, _, answer) = http(c.addr, "POST", t, &[("Authorization", &bearer)], &body);
        assert_eq!(status, want, "{t}: {answer}");
        assert!(answer.contains(reason), "{t}: {answer}");
    }
    // Too large without a Content-Length the server can refuse on: the body is cut off.
    let mut stream = std::net::TcpStream::connect(c.addr).unwrap();
    use std::io::Write;
    write!(stream, "POST {target} HTTP/1.1\r\nHost: x\r\nAuthorization: {bearer}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n").unwrap();
    let chunk = vec![b' '; 3000];
    for _ in 0..2 {
        let _ = write!(stream, "{:x}\r\n", chunk.len());
        let _ = stream.write_all(&chunk);
        let _ = stream.write_all(b"\r\n");
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Nothing of them was kept: the index is as it was, and nothing was written beside it.
    assert_eq!(
        std::fs::read(store.join("sourcemaps/default/1.0/index.json")).unwrap(),
        index
    );
    let files: Vec<String> = std::fs::read_dir(store.join("sourcemaps/default/1.0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(!store.join("sourcemaps/default/%2E.").exists());
    // The collector still takes traces and maps them with the good map.
    post_minified(c.addr, "1.0", "https://shop.example/assets/app.min.js");
    let names: Vec<String> = top_rows(&top(store, "1.0"))
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(names, ORIGINALS);
}
