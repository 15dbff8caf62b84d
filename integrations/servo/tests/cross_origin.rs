//! Cross-origin filtering in Servo: a classic script from another origin, fetched without
//! CORS (no `crossorigin`), is muted, and its frames never reach the page's trace, while the
//! page's own function beside it does.

mod common;

use common::{jsprof_servo, serve};

#[test]
fn a_no_cors_cross_origin_scripts_frames_never_appear() {
    let base = std::env::temp_dir().join(format!("jsprof-servo-xo-{}", std::process::id()));
    let (page_dir, other_dir) = (base.join("page"), base.join("other"));
    std::fs::create_dir_all(&page_dir).expect("dir");
    std::fs::create_dir_all(&other_dir).expect("dir");
    std::fs::write(
        other_dir.join("busy.js"),
        "function busy(ms) {\n  const end = performance.now() + ms;\n  while (performance.now() < end) {}\n}\n",
    )
    .expect("script");
    let other = serve(other_dir);
    std::fs::write(
        page_dir.join("index.html"),
        format!(
            "<script src=\"{other}/busy.js\"></script>\n<script>\n\
             function mine(ms) {{ const end = performance.now() + ms; while (performance.now() < end) {{}} }}\n\
             const profiler = new Profiler({{ sampleInterval: 10, maxBufferSize: 10000 }});\n\
             mine(300);\nbusy(300);\n\
             profiler.stop().then((trace) => console.log(JSON.stringify(trace)));\n</script>\n"
        ),
    )
    .expect("page");
    std::fs::write(
        page_dir.join("index.html.headers"),
        "Document-Policy: js-profiling\n",
    )
    .expect("headers");
    let page = serve(page_dir);
    let console = jsprof_servo(&format!("{page}/index.html"), None);
    let _ = std::fs::remove_dir_all(&base);
    let trace: serde_json::Value = serde_json::from_str(console.trim()).expect("one trace line");
    let names: Vec<&str> = trace["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let resources = trace["resources"].as_array().expect("resources");
    // Non-vacuous: 600 ms at a 20 ms base interval, and the page's own function is seen.
    assert!(
        trace["samples"].as_array().expect("samples").len() >= 10,
        "{trace}"
    );
    assert!(names.contains(&"mine"), "{trace}");
    assert!(!names.contains(&"busy"), "{trace}");
    assert!(
        resources
            .iter()
            .all(|r| !r.as_str().unwrap().starts_with(&other)),
        "{trace}"
    );
}
