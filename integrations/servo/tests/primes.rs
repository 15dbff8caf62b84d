//! jsprof-servo on `examples/primes` over HTTP (Servo fetches module scripts in CORS mode,
//! and a `file:` URL is no HTTP(S) URL, so a `file:` page's modules fail to load there):
//! the trace's frames, positions and resources are jsprof's own for the same page, and a
//! page without `Document-Policy: js-profiling` gets the constructor's NotAllowedError.

mod common;

use std::path::Path;

use common::{jsprof_servo, serve};

#[test]
fn primes_frames_and_positions_are_jsprofs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/primes");
    let origin = serve(root);
    let trace_out =
        std::env::temp_dir().join(format!("jsprof-servo-primes-{}.json", std::process::id()));
    let console = jsprof_servo(&format!("{origin}/index.html"), Some(&trace_out));
    assert!(
        console.starts_with("Finished generating 10000 primes!\n"),
        "{console}"
    );
    let traces: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_out).expect("trace")).expect("JSON");
    let _ = std::fs::remove_file(&trace_out);
    let trace = &traces[0];
    let resources: Vec<&str> = trace["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let frames: Vec<(String, &str, u64, u64)> = trace["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                resources[f["resourceId"].as_u64().unwrap() as usize],
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    let generate = format!("{origin}/generate.js");
    let main = format!("{origin}/main.js");
    // jsprof's own trace of the same page (`jsprof URL --trace-out`), frame for frame.
    let jsprof = [
        ("isPrime".to_owned(), generate.as_str(), 5, 17),
        ("genPrimes".to_owned(), generate.as_str(), 14, 26),
        ("handleLoad".to_owned(), main.as_str(), 4, 26),
    ];
    assert_eq!(frames, jsprof, "{trace}");
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
