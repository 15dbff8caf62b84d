//! The embedding example end to end: `jsprof-embed` on a bare mozjs runtime profiles
//! `burn.js` and prints the trace; its frames are burn.js's functions, named as the spec
//! names them, at the positions of their `(`, and nothing else.

use std::collections::HashMap;
use std::process::Command;

use jsprof_profiler::{ProfilerMarker, ProfilerTrace};

const BURN: &str = include_str!("../burn.js");

/// How long `burn()` runs: at 1 ms, ~1000 sampling intervals.
const BURN_MS: &str = "1000";

/// The 1-based line and column (UTF-16 units; burn.js is ASCII) of the `(` that follows
/// `before` in burn.js: where the spec's trace puts a function's frame.
fn paren_after(before: &str) -> (u64, u64) {
    let at = BURN
        .find(before)
        .unwrap_or_else(|| panic!("{before:?} in burn.js"))
        + before.len();
    assert_eq!(
        &BURN[at..at + 1],
        "(",
        "{before:?} is followed by its parameter list"
    );
    let line = BURN[..at].matches('\n').count() as u64 + 1;
    let column = (at - BURN[..at].rfind('\n').map_or(0, |n| n + 1)) as u64 + 1;
    (line, column)
}

/// Runs the example binary and parses the trace on its first line (and the rest of its
/// output, the summary).
fn run_example() -> (ProfilerTrace, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof-embed"))
        .arg(BURN_MS)
        .output()
        .expect("jsprof-embed runs");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(
        out.status.success(),
        "jsprof-embed failed ({}): {stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let (first, rest) = stdout
        .split_once('\n')
        .expect("a trace line, then the summary");
    let trace: ProfilerTrace = serde_json::from_str(first).expect("the trace is JSON");
    (trace, rest.to_owned())
}

#[test]
fn a_bare_runtime_profiles_its_named_functions() {
    let (trace, summary) = run_example();

    // One resource: burn.js. The driver that called burn() was never registered, so none
    // of its frames (nor its URL) reach the trace.
    assert_eq!(trace.resources.len(), 1, "{:?}", trace.resources);
    assert!(
        trace.resources[0].ends_with("/examples/embed/burn.js"),
        "{:?}",
        trace.resources
    );

    // The functions, by their spec names (a declaration, an anonymous function expression
    // named by its binding, a method, a class constructor), at their `(`.
    let expected = [
        ("fib", paren_after("function fib")),
        ("sortNumbers", paren_after("const sortNumbers = function ")),
        ("multiply", paren_after("  multiply")),
        ("burn", paren_after("function burn")),
    ];
    let frame_of: HashMap<&str, usize> = trace
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    for (name, (line, column)) in expected {
        let &i = frame_of
            .get(name)
            .unwrap_or_else(|| panic!("no frame named {name}: {:?}", trace.frames));
        let frame = &trace.frames[i];
        assert_eq!(
            (frame.line, frame.column, frame.resource_id),
            (Some(line), Some(column), Some(0)),
            "{name}"
        );
    }
    // Every frame is one of burn.js's functions, at a `(` of it.
    for frame in &trace.frames {
        assert_eq!(frame.resource_id, Some(0), "{frame:?}");
        let (line, column) = (frame.line.unwrap(), frame.column.unwrap());
        let text_line = BURN
            .lines()
            .nth(line as usize - 1)
            .expect("a line of burn.js");
        assert_eq!(
            text_line.as_bytes().get(column as usize - 1),
            Some(&b'('),
            "{frame:?} is at a parameter list"
        );
    }

    // Samples: burn() ran for ~1000 intervals of 1 ms. Each block of 1 ms gets at most one
    // sample, and a loaded machine loses some (the sampler thread waits for a CPU), so only
    // a tenth is asked for.
    let stacks: Vec<Vec<&str>> = trace
        .samples
        .iter()
        .filter_map(|s| s.stack_id)
        .map(|mut id| {
            let mut names = Vec::new();
            loop {
                let node = trace.stacks[id as usize];
                names.push(trace.frames[node.frame_id as usize].name.as_str());
                match node.parent_id {
                    Some(parent) => id = parent,
                    None => break,
                }
            }
            names.reverse();
            names
        })
        .collect();
    assert!(
        stacks.len() >= 100,
        "{} samples with a stack of {}\n{summary}",
        stacks.len(),
        trace.samples.len()
    );
    // Every stack starts at burn(): the driver's frame is hidden.
    for stack in &stacks {
        assert_eq!(stack[0], "burn", "{stack:?}");
    }
    // fib, sortNumbers and multiply each take a fifth or more of burn()'s time (the summary
    // shows their shares), so each is on at least one of 100 or more stacks: a miss has
    // probability below 3 * 0.8^100, about 6e-10.
    for name in ["fib", "sortNumbers", "multiply"] {
        assert!(
            stacks.iter().any(|s| s.contains(&name)),
            "{name} on no stack\n{summary}"
        );
    }
    // fib's recursion is on the stack as such.
    assert!(
        stacks
            .iter()
            .any(|s| s.windows(2).any(|w| w == ["fib", "fib"])),
        "fib under fib\n{summary}"
    );

    // The context is cross-origin isolated, so samples carry markers: every sample with a
    // stack was taken in script (the embedder's in-script guard) or in a collection.
    for sample in trace.samples.iter().filter(|s| s.stack_id.is_some()) {
        assert!(
            matches!(
                sample.marker,
                Some(ProfilerMarker::Script | ProfilerMarker::Gc)
            ),
            "{sample:?}"
        );
    }
}
