//! Replays, through each target's property function, every seed of `fuzz/corpus/TARGET/` and
//! every input a fuzzer once failed on and that was fixed, `fuzz/regressions/TARGET/`.

use std::fs;
use std::path::{Path, PathBuf};

use jsprof_fuzz_properties::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Replays every file of `dir/TARGET/` through TARGET's property function; returns how many.
fn replay(dir: &str) -> usize {
    let root = fuzz_dir().join(dir);
    let mut replayed = 0;
    for entry in fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        // The collector's intakes: jsprof-intake (components/collector, a workspace of its
        // own) replays these in its tests/fuzz_corpus.rs.
        if name.starts_with("intake_") {
            continue;
        }
        let target = TARGETS
            .iter()
            .find(|(t, _)| *t == name)
            .unwrap_or_else(|| panic!("{dir}/{name}/ names no target"))
            .1;
        let mut files: Vec<PathBuf> = fs::read_dir(entry.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            // An input that trips a dependency's debug assertion (an upstream bug; jsprof's
            // release build has no debug assertions, nor has the fuzz build for that crate).
            if file.extension().is_some_and(|e| e == "release-only") && cfg!(debug_assertions) {
                eprintln!("skipped with debug assertions on: {}", file.display());
                continue;
            }
            let data = fs::read(&file).unwrap();
            let result = std::panic::catch_unwind(|| target(&data));
            assert!(result.is_ok(), "{} fails its properties", file.display());
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn fixed_crashes_stay_fixed() {
    replay("regressions");
}

#[test]
fn every_seed_passes() {
    assert!(replay("corpus") > 0, "the seed corpora are there");
}

/// The test pages are seeds too (`./mach fuzz` reads them in place): every HTML file through
/// `html_document`, every script through `symbolizer`, every sidecar through `headers_sidecar`.
#[test]
fn every_test_page_passes() {
    let target = |name: &str| {
        TARGETS
            .iter()
            .find(|(t, _)| *t == name)
            .map(|(_, f)| *f)
            .unwrap()
    };
    let mut dirs: Vec<PathBuf> = ["pages", "wpt"]
        .iter()
        .map(|d| fuzz_dir().join("../tests").join(d))
        .collect();
    let mut replayed = 0;
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.to_string_lossy();
            let f = if name.ends_with(".html") {
                target("html_document")
            } else if name.ends_with(".js") || name.ends_with(".mjs") {
                target("symbolizer")
            } else if name.ends_with(".headers") {
                target("headers_sidecar")
            } else {
                continue;
            };
            let data = fs::read(&path).unwrap();
            let result = std::panic::catch_unwind(|| f(&data));
            assert!(result.is_ok(), "{} fails its properties", path.display());
            replayed += 1;
        }
    }
    assert!(replayed > 50, "{replayed}");
}

/// Writes the hand-made seeds of `fuzz/corpus/trace_builder/` (the encoding is
/// `trace_builder::decode`'s): `cargo test -p jsprof-fuzz-properties --test regressions --
/// --ignored`.
#[test]
#[ignore = "writes fuzz/corpus/trace_builder/"]
fn write_trace_builder_seeds() {
    use jsprof_fuzz_properties::trace_builder::{encode, Event, Frame, Stream};
    let f = |realm, hidden, kind, script, line, column| Frame {
        realm,
        hidden,
        kind,
        script,
        line,
        column,
        name: (line + column) % 4,
    };
    // Positions in app.js (script 0): outer's body, inner's body, the arrow, top level.
    let app = vec![
        f(0, false, 2, 0, 8, 1),
        f(0, false, 2, 0, 2, 5),
        f(1, false, 2, 0, 5, 20),
        f(0, false, 2, 0, 6, 3),
    ];
    let defs = vec![
        f(0, false, 4, 1, 0, 0),
        f(0, false, 3, 1, 16, 24),
        f(0, false, 3, 1, 13, 12),
        f(0, false, 0, 0, 0, 0),
    ];
    let mixed = vec![
        f(0, false, 2, 0, 8, 1),
        f(2, false, 2, 0, 2, 5),
        f(0, true, 1, 2, 1, 1),
        f(3, false, 0, 0, 0, 0),
        f(0, false, 2, 3, 2, 3),
        f(0, false, 2, 5, 1, 1),
        f(0, false, 5, 0, 1, 1),
        f(1, false, 1, 2, 1, 17),
        f(0, false, 2, 2, 1, 40),
    ];
    let stack = |scale, dt, frames: &Vec<Frame>| Event::Stack {
        scale,
        dt,
        frames: frames.clone(),
    };
    let again = |dt, index, copy| Event::Again {
        scale: 2,
        dt,
        index,
        copy,
    };
    let idle = |dt| Event::Idle { scale: 2, dt };
    let seeds = [
        (
            "simple",
            Stream {
                isolated: false,
                max_samples: 0,
                origin_ms: 0,
                events: vec![
                    stack(2, 100, &app[..2].to_vec()),
                    stack(2, 100, &app),
                    again(100, 0, false),
                    idle(100),
                    again(100, 1, true),
                    stack(3, 1, &app[..1].to_vec()),
                ],
            },
        ),
        (
            "buffer-full",
            Stream {
                isolated: false,
                max_samples: 3,
                origin_ms: 0,
                events: vec![
                    stack(2, 10, &app),
                    again(10, 0, false),
                    idle(10),
                    again(10, 0, true),
                    stack(2, 10, &defs),
                ],
            },
        ),
        (
            "definitions-and-top-level",
            Stream {
                isolated: true,
                max_samples: 0,
                origin_ms: 0,
                events: vec![stack(1, 7, &defs), again(7, 0, true), idle(1)],
            },
        ),
        (
            "other-realms-hidden-unknown",
            Stream {
                isolated: false,
                max_samples: 0,
                origin_ms: 0,
                events: vec![
                    stack(2, 30, &mixed),
                    stack(2, 30, &mixed[1..4].to_vec()),
                    again(30, 1, false),
                    again(30, 0, true),
                ],
            },
        ),
        (
            "before-the-origin",
            Stream {
                isolated: true,
                max_samples: 0,
                origin_ms: 5,
                events: vec![
                    stack(1, 255, &app),
                    stack(1, 255, &app),
                    stack(0, 255, &app),
                    again(255, 0, false),
                ],
            },
        ),
        (
            "deep",
            Stream {
                isolated: false,
                max_samples: 0,
                origin_ms: 0,
                events: vec![
                    stack(2, 10, &app.iter().cycle().take(15).copied().collect()),
                    stack(2, 10, &app.iter().cycle().take(14).copied().collect()),
                    again(10, 0, true),
                    again(10, 1, false),
                ],
            },
        ),
    ];
    let dir = fuzz_dir().join("corpus/trace_builder");
    fs::create_dir_all(&dir).unwrap();
    for (name, stream) in seeds {
        jsprof_fuzz_properties::trace_builder::check_stream(&stream);
        fs::write(dir.join(name), encode(&stream)).unwrap();
    }
}

/// Inline scripts' recorded positions point at their text, also after the `<script`s that
/// are not the document's script elements (fixed in document.rs by taking lines from
/// html5ever's tokenizer).
#[test]
fn script_positions_point_at_their_text() {
    let cases = [
        "<template><script>a()</script></template><script>b()</script>",
        "<svg><script>a()</script></svg><script>b()</script>",
        "<math><script>a()</script></math><script>b()</script>",
        "<a title='<script>'></a><script>b()</script>",
        "<?x <script>a()</script><script>b()</script>",
        "<noembed><script>a()</script></noembed><script>b()</script>",
        "<script>x='</scriptx><script>'</script><script>b()</script>",
        "<script\n>a()</script>",
        "<p>\r\n<script>a()</script>\r<script>\r\nb()</script>",
    ];
    for html in cases {
        let misplaced = jsprof_fuzz_properties::misplaced_scripts(html);
        assert!(misplaced.is_empty(), "{html:?}: {misplaced:?}");
    }
}

/// Inline script positions the fuzzer once found wrong (components/page-model/src/
/// document.rs), now placed as html5ever's tokenizer reads the tags.
#[test]
fn script_positions_the_tokenizer_way() {
    use jsprof_page_model::document::{parse, Limits};
    // (document, the script's text position: line, column)
    let cases = [
        // A quote inside an unquoted attribute value is not a quote to the tokenizer.
        ("<script x=a'b>c()</script>", (1, 15)),
        ("<script x=a\"b>c()</script>", (1, 15)),
        // The tokenizer replaces a NUL in script text with U+FFFD.
        ("<script>a\0b()</script>", (1, 9)),
        // A template's script with the same text on the same line comes first.
        (
            "<template><script>a()</script></template><script>a()</script>",
            (1, 50),
        ),
    ];
    let wrong: Vec<_> = cases
        .iter()
        .filter_map(|&(html, want)| {
            let doc = parse(html, &Limits::default(), None).unwrap();
            let got = (doc.scripts[0].line, doc.scripts[0].column);
            (got != want).then_some((html, got, want))
        })
        .collect();
    assert!(wrong.is_empty(), "(document, got, want): {wrong:#?}");
}
