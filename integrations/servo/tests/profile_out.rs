//! Profiling from outside: `jsprof-servo --profile-out FILE` profiles a page that sends no
//! `Document-Policy` (its own `Profiler` is refused), as `jsprof --profile-out` does, in the
//! spec's JSON and in an export format; a file name of no known kind is refused before the
//! page runs.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::serve;

/// A page without a policy: it computes in `work` for 600 ms and says whether its own
/// `Profiler` was allowed.
const PAGE: &str = "<script>\n\
function work(ms) { const end = performance.now() + ms; while (performance.now() < end) {} }\n\
try { new Profiler({ sampleInterval: 10, maxBufferSize: 100 }); console.log('allowed'); }\n\
catch (e) { console.log(e.name); }\n\
work(600);\n\
</script>\n";

fn run(url: &str, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jsprof-servo"))
        .arg(url)
        .arg("--profile-out")
        .arg(out)
        .args(["--timeout", "60"])
        .output()
        .expect("run jsprof-servo")
}

fn page() -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!(
        "jsprof-servo-outside-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("index.html"), PAGE).expect("page");
    let origin = serve(dir.clone());
    (dir, format!("{origin}/index.html"))
}

/// The page profiled from outside into a file named `name`: the run, and the file as JSON.
fn profiled(name: &str) -> (Output, serde_json::Value) {
    let (dir, url) = page();
    let out = dir.join(name);
    let run = run(&url, &out);
    assert!(run.status.success(), "{run:?}");
    let profile = serde_json::from_slice(&std::fs::read(&out).expect("the profile")).expect("JSON");
    let _ = std::fs::remove_dir_all(&dir);
    (run, profile)
}

#[test]
fn a_page_without_the_policy_is_profiled_from_outside() {
    let (run, trace) = profiled("profile.json");
    let console = String::from_utf8_lossy(&run.stdout);
    // The page itself may not profile: the profile from outside needs no consent.
    assert_eq!(console.trim(), "NotAllowedError", "{run:?}");
    let samples = trace["samples"].as_array().expect("samples");
    // 600 ms at a 20 ms base interval: about 30 samples; most of them in `work`.
    assert!(samples.len() >= 10, "{trace}");
    let work = trace["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .position(|f| f["name"] == "work")
        .unwrap_or_else(|| panic!("no frame `work`: {trace}"));
    let stacks = trace["stacks"].as_array().expect("stacks");
    let in_work = samples
        .iter()
        .filter(|s| {
            s["stackId"]
                .as_u64()
                .is_some_and(|id| stacks[id as usize]["frameId"].as_u64() == Some(work as u64))
        })
        .count();
    assert!(
        in_work * 2 >= samples.len(),
        "{in_work} of {} in work: {trace}",
        samples.len()
    );
}

#[test]
fn the_profile_from_outside_is_written_in_an_export_format() {
    let (_, profile) = profiled("profile.cpuprofile");
    // Chrome DevTools' .cpuprofile: call-tree nodes, and `work` among their functions.
    let nodes = profile["nodes"].as_array().expect("nodes");
    assert!(
        nodes
            .iter()
            .any(|n| n["callFrame"]["functionName"] == "work"),
        "{profile}"
    );
    assert!(
        !profile["samples"].as_array().expect("samples").is_empty(),
        "{profile}"
    );
}

#[test]
fn an_unknown_profile_file_name_is_refused_before_the_page_runs() {
    let (dir, url) = page();
    let out = dir.join("profile.txt");
    let run = run(&url, &out);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(run.stdout.is_empty(), "the page ran: {run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("--profile-out") && stderr.contains("unknown file extension"),
        "{stderr}"
    );
    assert!(!out.exists());
}
