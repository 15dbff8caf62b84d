//! The uploaded-maps fixture (tests/fixtures/maps, esbuild's output of a small app) and its
//! traces: the minified script's functions where a browser's profiler puts them, a trace of
//! them, and `jsprof-collector sourcemaps upload` (tests/uploaded_maps.rs,
//! tests/ballista.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{BIN, DAY};

/// The fixture's directory.
pub fn maps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/maps")
}

/// The minified functions of `script`: (name, 1-based line, 1-based column of the `(` of
/// `function NAME(`), where a browser's profiler puts them.
pub fn minified_functions(script: &str) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for (l, line) in script.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find("function ") {
            let start = from + at + "function ".len();
            let rest = &line[start..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            if rest[name.len()..].starts_with('(') && !name.is_empty() {
                out.push((name.clone(), l as u64 + 1, (start + name.len()) as u64 + 1));
            }
            from = start;
        }
    }
    out
}

/// The original functions of the fixture, as the minified script orders them:
/// formatPrice, computeTotals, renderCart, onLoad (`e`, `c`, `i`, `u`).
pub const ORIGINALS: [&str; 4] = ["formatPrice", "computeTotals", "renderCart", "onLoad"];

/// A trace (the spec's dictionary) of the minified script at `url`: onLoad → renderCart →
/// computeTotals → formatPrice. Leaves: formatPrice 6 (4 under computeTotals, 2 under
/// renderCart), computeTotals 3, renderCart 2, onLoad 1: 12 samples, 10 ms apart.
pub fn minified_trace(url: &str) -> serde_json::Value {
    let script = std::fs::read_to_string(maps().join("dist/assets/app.min.js")).unwrap();
    let fns = minified_functions(&script);
    assert_eq!(
        fns.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["e", "c", "i", "u"],
        "the fixture's functions"
    );
    let frames: Vec<serde_json::Value> = fns
        .iter()
        .map(|(name, line, column)| {
            serde_json::json!({"name": name, "resourceId": 0, "line": line, "column": column})
        })
        .collect();
    // Frame ids: 0 e, 1 c, 2 i, 3 u. Stacks: 0 u, 1 u>i, 2 u>i>c, 3 u>i>c>e, 4 u>i>e.
    let stacks = serde_json::json!([
        {"frameId": 3},
        {"frameId": 2, "parentId": 0},
        {"frameId": 1, "parentId": 1},
        {"frameId": 0, "parentId": 2},
        {"frameId": 0, "parentId": 1},
    ]);
    let leaves = [3, 3, 3, 3, 4, 4, 2, 2, 2, 1, 1, 0];
    let samples: Vec<serde_json::Value> = leaves
        .iter()
        .enumerate()
        .map(|(i, s)| serde_json::json!({"timestamp": 100.0 + 10.0 * i as f64, "stackId": s}))
        .collect();
    serde_json::json!({"resources": [url], "frames": frames, "stacks": stacks, "samples": samples})
}

pub fn post_minified(addr: std::net::SocketAddr, release: &str, url: &str) {
    super::post_trace(
        addr,
        None,
        &minified_trace(url),
        release,
        "https://shop.example/cart",
        "Mozilla/5.0 Chrome/130.0",
        DAY,
    );
}

/// `jsprof-collector sourcemaps upload`: (success, stdout, stderr).
pub fn upload(
    addr: std::net::SocketAddr,
    key: &str,
    release: &str,
    dir: &Path,
) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(["sourcemaps", "upload", "--release", release, "--collector"])
        .arg(format!("http://{addr}"))
        .args(["--key", key])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
