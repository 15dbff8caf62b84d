//! The page at `/` of `jsprof collect` for a person who investigates, in headless Chromium
//! (tests/page/investigate.mjs): over three traces of two releases with known labels, the
//! diff flame graph of the releases the page picks (and of those picked in it, either way
//! round) has each call path's counts in both and red where a share grew, blue where it
//! shrank, grey where the change is not significant, and a legend; the samples by view and
//! by browser family are the known counts; a group's button filters the top table, the
//! traces and the groups to it; and the trace with a long task opens in time order: a tick
//! per sample, its stacks below as boxes over the samples that share a call path, and the
//! long task where it was. The API's answers to bad input are 4xx with the reason.

mod common;

use common::{drive_page, field_trace, function_samples, http, post_envelope, Collector, DAY};
use serde_json::{json, Value};

const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

/// Posts `field_trace(leaves, idle)` as jsprof's envelope with these labels and entries.
fn post(
    c: &Collector,
    leaves: [usize; 3],
    idle: usize,
    meta: (&str, &str, f64),
    labels: Value,
    entries: Value,
) {
    let (release, ua, origin) = meta;
    post_envelope(
        c.addr,
        &json!({
            "trace": field_trace(leaves, idle),
            "release": release,
            "pageUrl": "https://shop.test/",
            "userAgent": ua,
            "timeOrigin": origin,
            "labels": labels,
            "entries": entries,
        }),
    );
}

fn rgb(fill: &Value) -> [u8; 3] {
    let s = fill.as_str().unwrap();
    let inner = s
        .strip_prefix("rgb(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap();
    let v: Vec<u8> = inner
        .split(',')
        .map(|p| p.trim().parse().unwrap())
        .collect();
    [v[0], v[1], v[2]]
}

fn node<'a>(diff: &'a Value, function: &str) -> &'a Value {
    diff["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["function"] == function)
        .unwrap_or_else(|| panic!("no {function} in {diff}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_page_diffs_releases_lists_traces_opens_one_and_groups_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    // A, 1.0, /cart, prod, Chrome: layout 30, paint 10 (interleaved first), 5 idle; a long
    // task from 100 to 250 ms. B, 2.0, /home, staging, Firefox: layout 5, paint 30, style 4.
    // C, 2.0, /cart, prod, Chrome: layout 5, paint 30.
    let cart = json!({"view": "/cart", "environment": "prod"});
    post(
        &c,
        [30, 10, 0],
        5,
        ("1.0", CHROME, DAY),
        cart.clone(),
        json!([{"entryType": "longtask", "name": "self", "startTime": 100, "duration": 150}]),
    );
    post(
        &c,
        [5, 30, 4],
        0,
        ("2.0", FIREFOX, DAY + 60_000.0),
        json!({"view": "/home", "environment": "staging"}),
        json!([]),
    );
    post(
        &c,
        [5, 30, 0],
        0,
        ("2.0", CHROME, DAY + 120_000.0),
        cart,
        json!([]),
    );

    let read = drive_page("investigate.mjs", &[&format!("http://{}/", c.addr)]);
    assert_eq!(read["errors"], json!([]), "{read}");
    assert_eq!(read["outside"], json!([]), "{read}");
    let first = &read["first"];

    // The filters suggest each label's values; the diff offers the releases and picks the
    // last two.
    let s = &first["suggestions"];
    assert_eq!(s["values-view"], json!(["/cart", "/home"]), "{read}");
    assert_eq!(s["values-environment"], json!(["prod", "staging"]));
    assert_eq!(s["values-browser"], json!(["Chrome", "Firefox"]));
    assert_eq!(first["releases"], json!(["1.0", "2.0"]));
    assert_eq!(first["diff_chosen"], json!(["1.0", "2.0"]));

    // Samples by view (the default group): /cart is A and C (45 + 35), most self samples in
    // paint (10 + 30 against layout's 35); /home is B.
    assert_eq!(first["by"], "view");
    let g = &first["groups"];
    assert_eq!(g.as_array().unwrap().len(), 2, "{g}");
    assert_eq!(
        (
            &g[0]["value"],
            &g[0]["traces"],
            &g[0]["samples"],
            &g[0]["top"]
        ),
        (&json!("/cart"), &json!(2), &json!(80), &json!("paint (40)")),
        "{g}"
    );
    assert_eq!(
        (
            &g[1]["value"],
            &g[1]["traces"],
            &g[1]["samples"],
            &g[1]["top"]
        ),
        (&json!("/home"), &json!(1), &json!(39), &json!("paint (30)")),
        "{g}"
    );

    // The traces, the latest first, with their labels and events.
    let t = first["traces"].as_array().unwrap();
    let rows: Vec<_> = t
        .iter()
        .map(|r| {
            (
                r["release"].as_str().unwrap(),
                r["view"].as_str().unwrap(),
                r["environment"].as_str().unwrap(),
                r["browser"].as_str().unwrap(),
                r["samples"].as_u64().unwrap(),
                r["events"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("2.0", "/cart", "prod", "Chrome", 35, 0),
            ("2.0", "/home", "staging", "Firefox", 39, 0),
            ("1.0", "/cart", "prod", "Chrome", 45, 1),
        ]
    );

    // The diff flame graph of 1.0 → 2.0: base 40 samples with a stack (layout 30, paint
    // 10), head 74 (layout 10, paint 60, style 4). Shares: layout 75% → 13.5% (blue, the
    // largest change, so full strength), paint 25% → 81% (red), style 0 → 5.4% (not
    // significant on 40 and 74 samples: grey); main and render 100% in both (grey).
    for d in [&first["diff"], &read["diffed"]] {
        let all = node(d, "all");
        assert_eq!((f(&all["base"]), f(&all["head"])), (40.0, 74.0), "{d}");
        assert_eq!((f(&all["x"]), f(&all["width"])), (0.0, 1200.0));
        let layout = node(d, "layout");
        assert_eq!((f(&layout["base"]), f(&layout["head"])), (30.0, 10.0));
        assert!(layout["significant"].as_bool().unwrap());
        assert_eq!(rgb(&layout["fill"]), [31, 119, 180], "{layout}");
        let want = 1200.0 * (30.0 / 40.0 + 10.0 / 74.0) / 2.0;
        assert!((f(&layout["width"]) - want).abs() < 1e-6, "{layout}");
        let paint = node(d, "paint");
        assert_eq!((f(&paint["base"]), f(&paint["head"])), (10.0, 60.0));
        let [r, _, b] = rgb(&paint["fill"]);
        assert!(r > 200 && b < 150, "{paint}");
        assert!(
            paint["title"]
                .as_str()
                .unwrap()
                .contains("base 10 samples (25.00%), head 60 (81.08%), +56.08 points"),
            "{paint}"
        );
        let style = node(d, "style");
        assert_eq!((f(&style["base"]), f(&style["head"])), (0.0, 4.0));
        assert!(!style["significant"].as_bool().unwrap());
        assert_eq!(rgb(&style["fill"]), [220, 220, 220]);
        for grey in ["main", "render"] {
            let n = node(d, grey);
            assert_eq!((f(&n["base"]), f(&n["head"])), (40.0, 74.0));
            assert_eq!(rgb(&n["fill"]), [220, 220, 220], "{n}");
            assert_eq!(f(&n["width"]), 1200.0);
        }
        // Children under their parent: layout, paint and style side by side under render.
        let render = node(d, "render");
        assert_eq!(f(&layout["y"]), f(&render["y"]) + 18.0);
        assert_eq!(f(&layout["x"]), 0.0);
        assert!((f(&paint["x"]) - f(&layout["width"])).abs() < 1e-6);
        let legend = &d["legend"];
        assert_eq!(legend["hidden"], false);
        let text = legend["text"].as_str().unwrap();
        for want in [
            "share shrank",
            "colour up to ±61.49 points of share",
            "share grew",
            "no significant change",
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
    }
    // The other way round, what grew shrank.
    let swapped = &read["swapped"];
    assert_eq!(f(&node(swapped, "all")["base"]), 74.0);
    let [r, _, b] = rgb(&node(swapped, "layout")["fill"]);
    assert!(r > 200 && b < 100, "{swapped}");
    let [r, _, b] = rgb(&node(swapped, "paint")["fill"]);
    assert!(b > r, "{swapped}");

    // By browser family, then the group Firefox's button: B only, in the top table, the
    // traces and the groups; the diff says 1.0 has no Firefox samples (and draws nothing).
    let g = &read["by_browser"];
    let by: Vec<_> = g
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["value"].as_str().unwrap(),
                r["traces"].as_u64().unwrap(),
                r["samples"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by, [("Chrome", 2, 80), ("Firefox", 1, 39)]);
    let ff = &read["firefox"];
    assert!(
        ff["location"]
            .as_str()
            .unwrap()
            .ends_with("/?browser=Firefox"),
        "{ff}"
    );
    let top = function_samples(&ff["top"]);
    assert_eq!(top[0], ("paint".to_owned(), 30), "{ff}");
    assert!(top.contains(&("style".to_owned(), 4)), "{ff}");
    assert!(top.contains(&("layout".to_owned(), 5)), "{ff}");
    let traces = ff["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "{ff}");
    assert_eq!(
        (&traces[0]["release"], &traces[0]["view"]),
        (&json!("2.0"), &json!("/home"))
    );
    assert_eq!(ff["groups"].as_array().unwrap().len(), 1, "{ff}");
    assert_eq!(ff["groups"][0]["value"], "Firefox");
    assert!(
        ff["diff"]["status"]
            .as_str()
            .unwrap()
            .contains("release 1.0 has no samples with a stack (with these filters)"),
        "{ff}"
    );
    assert_eq!(ff["diff"]["nodes"], json!([]));

    // Trace A in time order: 45 ticks from 50 ms (5 without a stack, the last), main and
    // render once over the 40 samples with a stack, layout and paint alternating for 20
    // samples then layout over 20; the long task from 100 ms for 150 ms, where it was.
    let o = &read["opened"];
    assert_eq!(o["id"], t[2]["id"], "{o}");
    assert!(o["title"].as_str().unwrap().contains("(1.0,"), "{o}");
    assert!(
        o["status"]
            .as_str()
            .unwrap()
            .starts_with("45 samples, 1 events"),
        "{o}"
    );
    let ticks = o["ticks"].as_array().unwrap();
    assert_eq!(ticks.len(), 45);
    assert_eq!(ticks.iter().filter(|t| t["empty"] == true).count(), 5);
    assert_eq!(f(&ticks[0]["t"]), DAY + 50.0);
    assert!(ticks[40..].iter().all(|t| t["empty"] == true), "{o}");
    let (from, to, left, width) = (f(&o["from"]), f(&o["to"]), f(&o["left"]), f(&o["width"]));
    let x = |ms: f64| left + (ms - from) / (to - from) * width;
    assert_eq!(from, DAY + 50.0);
    assert!(to > DAY + 490.0, "{o}");
    for t in ticks {
        assert!((f(&t["x"]) - x(f(&t["t"]))).abs() < 1e-6, "{t}");
    }
    let boxes = o["boxes"].as_array().unwrap();
    let at = |depth: u64| -> Vec<(&str, u64)> {
        boxes
            .iter()
            .filter(|b| b["depth"] == depth)
            .map(|b| {
                (
                    b["function"].as_str().unwrap(),
                    b["samples"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(at(0), [("main", 40)]);
    assert_eq!(at(1), [("render", 40)]);
    let mut leaves = Vec::new();
    for _ in 0..10 {
        leaves.extend([("layout", 1), ("paint", 1)]);
    }
    leaves.push(("layout", 20));
    assert_eq!(at(2), leaves);
    let main = &boxes[0];
    assert_eq!(
        (f(&main["start"]), f(&main["end"])),
        (DAY + 50.0, DAY + 450.0)
    );
    assert!((f(&main["x"]) - x(DAY + 50.0)).abs() < 1e-6);
    assert!((f(&main["width"]) - (x(DAY + 450.0) - x(DAY + 50.0))).abs() < 1e-6);
    let marks = o["marks"].as_array().unwrap();
    assert_eq!(marks.len(), 1, "{o}");
    let m = &marks[0];
    assert_eq!(
        (&m["kind"], &m["class"]),
        (&json!("long-task"), &json!("mk-long-task"))
    );
    assert_eq!(
        (f(&m["start_ms"]), f(&m["duration_ms"])),
        (DAY + 100.0, 150.0)
    );
    assert!((f(&m["x"]) - x(DAY + 100.0)).abs() < 1e-6, "{m}");
    assert!(
        (f(&m["width"]) - (x(DAY + 250.0) - x(DAY + 100.0))).abs() < 1e-6,
        "{m}"
    );
}

#[test]
fn the_investigating_routes_refuse_bad_input_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    post(&c, [3, 1, 0], 0, ("1.0", CHROME, DAY), json!({}), json!([]));
    for (target, status, reason) in [
        (
            "/api/groups",
            400,
            "by: missing (one of view, environment or browser)",
        ),
        (
            "/api/groups?by=os",
            400,
            "by=os: expected view, environment or browser",
        ),
        ("/api/trace", 400, "id: missing"),
        ("/api/trace?id=x", 400, "id=x: expected a trace's id"),
        (
            "/api/trace?id=12",
            404,
            "no trace 12 with samples (with these filters)",
        ),
        (
            "/api/traces?limit=0",
            400,
            "limit=0: expected a whole number from 1 to 1000",
        ),
        ("/api/diff?base=1.0", 400, "head: missing (a release)"),
        (
            "/api/diff?base=1.0&head=1.0",
            400,
            "base and head are both 1.0",
        ),
        (
            "/api/diff?base=1.0&head=2.0&release=1.0",
            400,
            "release: not with base and head",
        ),
        ("/api/labels?by=view", 400, "unknown parameter \"by\""),
        (
            "/api/top?browser=Chrome&browser=Firefox",
            400,
            "parameter browser given twice",
        ),
    ] {
        let (got, _, body) = http(c.addr, "GET", target, &[], b"");
        assert_eq!(got, status, "{target}: {body}");
        assert!(body.starts_with(reason), "{target}: {body}");
    }
    // A release without samples is an answer that says so (the page asks for the last two
    // releases by itself).
    let (got, _, body) = http(c.addr, "GET", "/api/diff?base=1.0&head=9", &[], b"");
    assert_eq!(got, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["root"], Value::Null, "{v}");
    assert_eq!(
        v["empty"],
        "release 9 has no samples with a stack (with these filters)"
    );
    // A label's value with JSON escapes is matched as it was sent.
    post(
        &c,
        [2, 0, 0],
        0,
        ("1.0", FIREFOX, DAY + 1000.0),
        json!({"view": "a \"quoted\" \\ view"}),
        json!([]),
    );
    let (got, _, body) = http(
        c.addr,
        "GET",
        "/api/traces?view=a%20%22quoted%22%20%5C%20view",
        &[],
        b"",
    );
    assert_eq!(got, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["traces"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["traces"][0]["view"], "a \"quoted\" \\ view");
    assert_eq!(v["traces"][0]["browser"], "Firefox");
}
