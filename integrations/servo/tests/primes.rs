//! jsprof-servo on `examples/primes` given as a file (which it serves over HTTP: Servo
//! fetches module scripts in CORS mode, which fails for `file:` URLs): the trace's frames
//! and positions are jsprof's own for the same page; and a page without
//! `Document-Policy: js-profiling` gets the constructor's NotAllowedError.

mod common;

use std::path::Path;
use std::process::Command;

use common::{jsprof_servo, serve};

/// A trace's frames as (name, the resource's file name, line, column), sorted (a trace lists
/// its frames in the order its samples first met them, which depends on where the first
/// samples fell): jsprof-servo serves a file page over HTTP where jsprof reads it from
/// `file:`, so only the origins differ.
fn frames_of(trace: &serde_json::Value) -> Vec<(String, String, u64, u64)> {
    let resources: Vec<&str> = trace["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let mut frames: Vec<_> = trace["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            let url = resources[f["resourceId"].as_u64().unwrap() as usize];
            (
                f["name"].as_str().unwrap().to_owned(),
                url.rsplit('/').next().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    frames.sort();
    frames
}

fn read_traces(path: &Path) -> serde_json::Value {
    let traces =
        serde_json::from_str(&std::fs::read_to_string(path).expect("trace")).expect("JSON");
    let _ = std::fs::remove_file(path);
    traces
}

/// The command, `jsprof-servo examples/primes/index.html --trace-out t.json`, beside
/// `jsprof examples/primes/index.html --trace-out t.json` (`JSPROF_BIN`, which `./mach servo
/// test` builds and names): the same frames at the same positions.
#[test]
fn primes_frames_and_positions_are_jsprofs() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/primes/index.html");
    let tmp = std::env::temp_dir();
    let servo_out = tmp.join(format!("jsprof-servo-primes-{}.json", std::process::id()));
    let console = jsprof_servo(page.to_str().unwrap(), Some(&servo_out));
    assert!(
        console.starts_with("Finished generating 10000 primes!\n"),
        "{console}"
    );
    let traces = read_traces(&servo_out);
    let trace = &traces[0];

    let jsprof = std::env::var("JSPROF_BIN")
        .expect("JSPROF_BIN: jsprof's binary (./mach servo test sets it)");
    let jsprof_out = tmp.join(format!("jsprof-primes-{}.json", std::process::id()));
    let out = Command::new(jsprof)
        .arg(&page)
        .arg("--trace-out")
        .arg(&jsprof_out)
        .output()
        .expect("run jsprof");
    assert!(out.status.success(), "{out:?}");
    let theirs = read_traces(&jsprof_out);
    assert_eq!(frames_of(trace), frames_of(&theirs[0]), "{trace}\n{theirs}");
    assert!(
        frames_of(trace).iter().any(|(name, ..)| name == "isPrime"),
        "{trace}"
    );
    // 10,000 primes take far longer than one 20 ms interval, and every sample is in them.
    let samples = trace["samples"].as_array().expect("samples");
    assert!(samples.len() >= 3, "{trace}");
    assert!(samples.iter().all(|s| s["stackId"].is_u64()), "{trace}");
    // The page's own copy of its trace (the console's second line) is the same trace
    // (numbers compared as numbers: JSON.stringify writes 23 where serde_json wrote 23.0).
    let printed: serde_json::Value =
        serde_json::from_str(console.lines().nth(1).expect("trace line")).expect("JSON");
    assert_eq!(numbers_as_f64(&printed), numbers_as_f64(trace));
}

fn numbers_as_f64(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_f64).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), numbers_as_f64(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn without_document_policy_the_constructor_throws_not_allowed() {
    let dir = std::env::temp_dir().join(format!("jsprof-servo-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("index.html"),
        "<script>try { new Profiler({ sampleInterval: 10, maxBufferSize: 10 }); console.log('constructed'); }\n\
         catch (e) { console.log(e.name); }</script>",
    )
    .expect("page");
    let origin = serve(dir.clone());
    let console = jsprof_servo(&format!("{origin}/index.html"), None);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(console, "NotAllowedError\n");
}
