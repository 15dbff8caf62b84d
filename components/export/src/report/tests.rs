//! The report's tests: structure, numbers and safety; no golden file (the page embeds the
//! flame graph, whose golden file is `seed-002.svg`).

use super::*;
use crate::model::Keep;
use jsprof_profiler::{
    ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
};

const FIXTURE: &str = include_str!("../../tests/fixtures/seed-002.json");

fn seed_trace() -> ProfilerTrace {
    serde_json::from_str(FIXTURE).unwrap()
}

fn profile(traces: &[ProfilerTrace]) -> Profile {
    let mut p = Profile::new(Keep::Counts);
    for (i, t) in traces.iter().enumerate() {
        p.add_trace(&format!("t{i}"), t, &mut |f| f).unwrap();
    }
    p
}

fn report(p: &Profile, title: &str) -> String {
    let mut out = Vec::new();
    write(p, title, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The text of an element's content with tags removed and the page's escapes undone.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The top functions table's rows, as the text of their cells.
fn rows(html: &str) -> Vec<Vec<String>> {
    let table = &html[html.find("<table class=\"top\">").expect("the table")..];
    let body = &table[table.find("<tbody>").unwrap()..table.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| text(&format!("<td{cell}")).trim().to_owned())
                .collect()
        })
        .collect()
}

/// The content of the element with `data-fact="key"`, as text.
fn fact(html: &str, key: &str) -> String {
    let at = html
        .find(&format!("data-fact=\"{key}\">"))
        .unwrap_or_else(|| panic!("fact {key}"));
    let open = html[..at].rfind('<').unwrap();
    let tag = html[open + 1..at].trim();
    let end = at + html[at..].find(&format!("</{tag}>")).unwrap();
    text(&html[open..end])
}

fn sample(t: f64, stack_id: Option<u64>, marker: Option<ProfilerMarker>) -> ProfilerSample {
    ProfilerSample {
        marker,
        stack_id,
        timestamp: t,
    }
}

fn frame(name: &str, resource_id: Option<u64>, line: u64) -> ProfilerFrame {
    ProfilerFrame {
        name: name.into(),
        resource_id,
        line: Some(line),
        column: Some(3),
    }
}

fn stack(frame_id: u64, parent_id: Option<u64>) -> ProfilerStack {
    ProfilerStack {
        frame_id,
        parent_id,
    }
}

/// seed-002: isPrime is the hottest function (7 of the 10 samples, all its own), called
/// from genPrimes (2 own, 9 total) from handleClick (0 own, all 10).
#[test]
fn seed_002_table() {
    let html = report(&profile(&[seed_trace()]), "seed-002");
    let rows = rows(&html);
    assert_eq!(rows.len(), 4);
    let columns = [
        "isPrime",
        "7",
        "70.0%",
        "7",
        "70.0%",
        "http://localhost:3000/generate.js",
        "6",
        "17",
    ];
    assert_eq!(rows[0], columns);
    assert_eq!(rows[1][..5], ["genPrimes", "2", "20.0%", "9", "90.0%"]);
    let click = rows.iter().find(|r| r[0] == "handleClick").unwrap();
    assert_eq!(
        click[1..8],
        [
            "0",
            "0.0%",
            "10",
            "100.0%",
            "http://localhost:3000/main.js",
            "5",
            "27"
        ]
    );
    // `Profiler` has no resource, line or column.
    let profiler = rows.iter().find(|r| r[0] == "Profiler").unwrap();
    assert_eq!(profiler[1..8], ["1", "10.0%", "1", "10.0%", "", "", ""]);
}

/// The facts of seed-002, from its samples: 10 samples from 2972.735 to 2980.655 ms, gaps
/// of median 0.625 ms, all with a stack.
#[test]
fn seed_002_facts() {
    let trace = seed_trace();
    let html = report(&profile(std::slice::from_ref(&trace)), "seed-002");
    assert_eq!(fact(&html, "traces"), "1");
    assert_eq!(fact(&html, "samples"), "10");
    assert_eq!(fact(&html, "interval"), "0.625 ms");
    let span = trace.samples[9].timestamp - trace.samples[0].timestamp;
    assert!((span - 7.92).abs() < 1e-6);
    assert_eq!(fact(&html, "duration"), "7.92 ms");
    assert_eq!(fact(&html, "with-stack"), "10 100.0%");
    assert_eq!(fact(&html, "empty"), "0 0.0%");
    assert_eq!(fact(&html, "idle"), "0");
}

/// Samples without a stack, by kind, over two merged traces.
#[test]
fn empty_samples_by_kind_and_merged_traces() {
    let t = ProfilerTrace {
        resources: vec![],
        frames: vec![frame("f", None, 1)],
        stacks: vec![stack(0, None)],
        samples: vec![
            sample(0.0, Some(0), Some(ProfilerMarker::Script)),
            sample(2.0, None, None),
            sample(4.0, None, Some(ProfilerMarker::Script)),
            sample(6.0, None, Some(ProfilerMarker::Gc)),
            sample(1506.0, None, None),
        ],
    };
    let html = report(&profile(&[t.clone(), t]), "two");
    assert_eq!(fact(&html, "traces"), "2");
    assert_eq!(fact(&html, "samples"), "10");
    assert_eq!(fact(&html, "interval"), "2 ms");
    assert_eq!(fact(&html, "duration"), "3,012 ms (3.01 s)");
    assert_eq!(fact(&html, "with-stack"), "2 20.0%");
    assert_eq!(fact(&html, "empty"), "8 80.0%");
    assert_eq!(fact(&html, "idle"), "4");
    assert_eq!(fact(&html, "program"), "2");
    assert_eq!(fact(&html, "gc"), "2");
    // The timeline: a first bucket of 2 with a stack and 6 without, one of 2 without 1.5 s
    // later, and nothing drawn between.
    let timeline = &html[html.find("<section class=\"timeline\">").unwrap()..];
    let timeline = &timeline[..timeline.find("</section>").unwrap()];
    assert_eq!(timeline.matches("<title>").count(), 2);
    assert!(timeline.contains("<title>0 \u{2013} 10 ms: 2 with a stack, 6 without</title>"));
    assert!(timeline.contains("<title>1500 \u{2013} 1510 ms: 0 with a stack, 2 without</title>"));
    assert_eq!(timeline.matches("class=\"tl-stack\"").count(), 1);
    assert_eq!(timeline.matches("class=\"tl-empty\"").count(), 2);
    assert!(timeline.contains(">200 ms</text>") && timeline.contains(">1.4 s</text>"));
}

/// A recursive function counts once per sample in its total, and self samples are summed
/// over all the paths a function is on.
#[test]
fn recursion_counts_once() {
    // main → f → f → g (2 samples), main → f (1), main → g (1).
    let t = ProfilerTrace {
        resources: vec!["a.js".into()],
        frames: vec![
            frame("main", Some(0), 1),
            frame("f", Some(0), 2),
            frame("g", Some(0), 3),
        ],
        stacks: vec![
            stack(0, None),
            stack(1, Some(0)),
            stack(1, Some(1)),
            stack(2, Some(2)),
            stack(2, Some(0)),
        ],
        samples: [3, 3, 1, 4]
            .into_iter()
            .enumerate()
            .map(|(i, s)| sample(i as f64, Some(s), None))
            .collect(),
    };
    let html = report(&profile(&[t]), "recursion");
    let rows = rows(&html);
    let get = |name: &str| rows.iter().find(|r| r[0] == name).unwrap()[1..5].to_vec();
    assert_eq!(get("g"), ["3", "75.0%", "3", "75.0%"]);
    assert_eq!(get("f"), ["1", "25.0%", "3", "75.0%"]);
    assert_eq!(get("main"), ["0", "0.0%", "4", "100.0%"]);
}

/// Names, URLs and the title come from web pages and users: they are text, never markup.
#[test]
fn everything_is_escaped() {
    let evil = "<img src=x onerror=alert(1)>";
    let url = "https://evil.example/\"><script>alert(2)</script>";
    let t = ProfilerTrace {
        resources: vec![url.into()],
        frames: vec![frame(evil, Some(0), 1)],
        stacks: vec![stack(0, None)],
        samples: vec![sample(0.0, Some(0), None)],
    };
    let title = "</title><script>alert(3)</script>";
    let html = report(&profile(&[t]), title);
    for raw in [evil, "<script>alert(2)", "<script>alert(3)", "\"><script>"] {
        assert!(!html.contains(raw), "{raw} is in the page unescaped");
    }
    // The only script elements are the page's and the flame graph's.
    assert_eq!(html.matches("<script").count(), 2);
    let rows = rows(&html);
    assert_eq!(rows[0][0], evil);
    assert_eq!(rows[0][5], url);
    assert!(html.contains("<h1>&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;</h1>"));
    // In the flame graph too (escaped by inferno).
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

/// Every attribute that makes a browser fetch something points inside the page.
#[test]
fn no_external_requests() {
    let html = report(&profile(&[seed_trace()]), "seed-002");
    let lower = html.to_ascii_lowercase();
    let mut found = 0;
    for attr in [
        " src=", " href=", ":href=", " action=", " srcset=", " poster=",
    ] {
        for (at, _) in lower.match_indices(attr) {
            found += 1;
            let value = lower[at + attr.len()..].trim_start_matches(['"', '\'']);
            assert!(
                !(value.starts_with("http:")
                    || value.starts_with("https:")
                    || value.starts_with("//")),
                "external reference at {}",
                &html[at..(at + 80).min(html.len())]
            );
        }
    }
    assert_eq!(found, 0, "the page needs no src or href at all");
    for tag in [
        "<link",
        "<img",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "@font-face",
    ] {
        assert!(!lower.contains(tag), "{tag}");
    }
    // CSS `url(…)` only for the flame graph's own gradient.
    for (at, _) in lower.match_indices("url(") {
        assert!(lower[at..].starts_with("url(#"), "{}", &html[at..at + 40]);
    }
    assert!(html.contains("default-src 'none'"));
    // The profiled scripts' URLs are there, as text.
    assert!(html.contains(">http://localhost:3000/generate.js</td>"));
}

/// The flame graph is inline, the first `<svg>` of the page (its script takes that one), with
/// its script and the fix for restoring a zoom in HTML; no XML prolog.
#[test]
fn the_flame_graph_is_inline() {
    let html = report(&profile(&[seed_trace()]), "seed-002");
    let first_svg = html.find("<svg").unwrap();
    assert!(html[first_svg..].starts_with("<svg version=\"1.1\""));
    assert!(html.find("id=\"frames\"").unwrap() > first_svg);
    assert!(
        html.find("<section class=\"timeline\">").unwrap() > html.find("id=\"frames\"").unwrap()
    );
    assert!(html.contains("onload=\"init(evt)\""));
    assert!(!html.contains("<?xml") && !html.contains("<!DOCTYPE svg"));
    assert!(!html.contains(RESTORE_XML));
    assert!(
        html.contains(RESTORE_HTML),
        "inferno's script changed: review RESTORE_XML"
    );
    assert!(html.contains(
        "<title>isPrime (http://localhost:3000/generate.js:6:17) (7 samples, 70.00%)</title>"
    ));
    // The page uses none of the ids and classes the flame graph's script and style use.
    let page_only = html[..first_svg].to_owned()
        + &html[html[first_svg..].find("</svg>").unwrap() + first_svg..];
    for id in [
        "frames",
        "details",
        "search",
        "matched",
        "unzoom",
        "title",
        "subtitle",
        "background",
    ] {
        assert!(!page_only.contains(&format!("id=\"{id}\"")), "{id}");
    }
    for class in ["hide", "parent", "show"] {
        assert!(!page_only.contains(&format!("class=\"{class}")), "{class}");
    }
}

#[test]
fn an_empty_profile_still_makes_a_page() {
    let html = report(&Profile::new(Keep::Counts), "");
    assert_eq!(fact(&html, "samples"), "0");
    assert_eq!(fact(&html, "interval"), "\u{2014}");
    assert!(!html.contains("<svg"));
    assert!(html.contains("No samples"));
    assert!(html.ends_with("</html>\n"));
}

#[test]
fn numbers() {
    assert_eq!(count(0), "0");
    assert_eq!(count(999), "999");
    assert_eq!(count(1000), "1,000");
    assert_eq!(count(1234567), "1,234,567");
    assert_eq!(number(0.625), "0.625");
    assert_eq!(number(10.0), "10");
    assert_eq!(number(1.0 / 3.0), "0.333");
    assert_eq!(tick_step(10.0), 10.0);
    assert_eq!(tick_step(80.0), 10.0);
    assert_eq!(tick_step(90.0), 20.0);
    assert_eq!(tick_step(1510.0), 200.0);
    assert_eq!(
        escape("<a href='x'>&\"</a>"),
        "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
    );
}
