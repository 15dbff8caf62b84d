//! A self-contained HTML report: one file that opens offline in any browser, with no request
//! to anything outside it (its Content-Security-Policy forbids them: `default-src 'none'`).
//!
//! It shows, from a [`Keep::Counts`](crate::model::Keep) profile (no per-sample timeline is
//! needed):
//! - the session's facts: traces, samples, sampling interval, sampled duration, samples
//!   without a stack by kind;
//! - the flame graph of [`crate::flamegraph`], as an inline `<svg>`, with inferno's script for
//!   zoom and search working in the page (see `inline_flame_graph`);
//! - a samples-per-10-ms timeline, stacked with-stack and empty samples, as an inline `<svg>`;
//! - the top functions: the 50 with the most self samples and the 50 with the most total
//!   samples, aggregated by function over all call paths (a recursive function counts once
//!   per sample in its total), with their resource and 1-based line and column; percentages
//!   are of all samples, those without a stack included, as in the flame graph. The table
//!   sorts by a click on a header.
//!
//! Everything that comes from a trace (function names, URLs) or from the caller (`title`) is
//! HTML-escaped: it shows as text, and URLs are never links.
//!
//! The traces are the [JS Self-Profiling API](https://wicg.github.io/js-self-profiling/)'s;
//! the flame graph is inline rather than in an `<iframe srcdoc>` because its script works
//! there (an `about:srcdoc` frame could not keep the zoom in the page's URL either). Its
//! Ctrl-F search takes the key only while the pointer is over the graph, so the browser's
//! find works in the rest of the page. The page is built in memory: its size is mostly the
//! flame graph's, which grows with the number of call paths, not of samples.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::model::{Empty, Frame, Profile, BUCKET_MS};

/// How many functions the table ranks by each of self and total samples.
const TOP: usize = 50;
/// Above this many buckets, the timeline merges neighbouring ones, so that a long profile
/// stays a light page.
const MAX_BARS: usize = 1500;

const CSS: &str = include_str!("report/report.css");
const JS: &str = include_str!("report/report.js");

/// inferno's script restores a zoom from the page's URL with the XML selector
/// `[*|x="…"]`, meant for its `fg:x` attribute in the `fg` namespace. In an HTML document
/// the attribute is named `fg:x` in no namespace, the selector matches nothing, and the
/// script would throw on `null`: in the page, the lookup is by that name, and a miss is
/// ignored.
const RESTORE_XML: &str = r#"zoom(find_group(document.querySelector('[*|x="' + params.x + '"][y="' + params.y + '"]')));"#;
const RESTORE_HTML: &str = r#"{ var at = document.querySelector('[fg\\:x="' + params.x + '"][y="' + params.y + '"]'); if (at) zoom(find_group(at)); }"#;

/// Writes the HTML report of `profile`, titled `title`.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let mut html = String::with_capacity(64 * 1024);
    let title = if title.is_empty() { "Profile" } else { title };
    head(&mut html, title);
    facts(&mut html, profile);

    html.push_str("<section>\n<h2>Flame graph</h2>\n");
    if profile.sample_count() == 0 {
        html.push_str("<p class=\"note\">No samples.</p>\n");
    } else {
        html.push_str("<div class=\"flame\">");
        html.push_str(&inline_flame_graph(profile, title)?);
        html.push_str("</div>\n<p class=\"note\">Click a frame to zoom, \"Reset Zoom\" to go back; \
             Ctrl-F over the graph, or \"Search\", highlights functions by regular expression.</p>\n");
    }
    html.push_str("</section>\n");

    timeline(&mut html, profile);
    top_functions(&mut html, profile);

    html.push_str("<footer>Written by jsprof from traces of the JS Self-Profiling API.</footer>\n");
    let _ = write!(html, "<script>\n{JS}</script>\n</body>\n</html>\n");
    out.write_all(html.as_bytes())
}

fn head(html: &mut String, title: &str) {
    let t = escape(title);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t} \u{2014} jsprof report</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header>\n<h1>{t}</h1>\n<div class=\"sub\">JS Self-Profiling report</div>\n</header>\n"
    );
}

/// The session's facts, each value in an element with a `data-fact` name.
fn facts(html: &mut String, p: &Profile) {
    let samples = p.sample_count();
    let empty = p.empty_total();
    let of = |n: u64| format!(" <small>{}</small>", percent(n, samples));
    // The kinds of samples without a stack: short name, what it means.
    let mut split = String::new();
    for (key, name, kind, means) in [
        ("idle", "idle", Empty::Idle, "no script running"),
        (
            "program",
            "program",
            Empty::Program,
            "script ran, but every frame was filtered out (cross-origin scripts, other realms)",
        ),
        (
            "gc",
            "GC",
            Empty::GarbageCollector,
            "garbage collection outside script",
        ),
    ] {
        let _ = write!(
            split,
            "{}<span title=\"{}: {means}\">{name} <b data-fact=\"{key}\">{}</b></span>",
            if split.is_empty() { "" } else { " \u{b7} " },
            kind.label(),
            count(p.empty_count(kind)),
        );
    }
    let facts = [
        ("traces", "Traces", count(p.trace_count()), String::new()),
        ("samples", "Samples", count(samples), String::new()),
        (
            "interval",
            "Sampling interval",
            p.interval_ms().map_or("\u{2014}".to_owned(), milliseconds),
            String::new(),
        ),
        (
            "duration",
            "Sampled duration",
            milliseconds(p.duration_ms()),
            String::new(),
        ),
        (
            "with-stack",
            "With a stack",
            count(samples - empty) + &of(samples - empty),
            String::new(),
        ),
        (
            "empty",
            "Without a stack",
            count(empty) + &of(empty),
            format!("<dd class=\"split\">{split}</dd>"),
        ),
    ];
    html.push_str("<section>\n<dl class=\"facts\">\n");
    for (key, name, value, more) in facts {
        let _ = writeln!(
            html,
            "<div><dt>{name}</dt><dd data-fact=\"{key}\">{value}</dd>{more}</div>"
        );
    }
    html.push_str("</dl>\n");
    if p.trace_count() > 1 {
        html.push_str(
            "<p class=\"note\">Traces are merged by function; the duration is the sum of \
             their sampled spans, the interval the median of their own.</p>\n",
        );
    }
    html.push_str("</section>\n");
}

/// The flame graph's SVG, ready to sit inline in the page's `<body>`.
///
/// inferno's script finds its parts by id (`frames`, `details`, `search`, `matched`,
/// `unzoom`, `title`; the page uses none of them), takes the page's *first* `<svg>` as its
/// own (the flame graph comes before the timeline's), runs from the `<svg>`'s `onload`,
/// which fires inline too, and sizes the graph to its container. Its `<![CDATA[` script
/// parses the same in HTML's foreign content. Only its zoom restore needs a change
/// ([`RESTORE_XML`]). The XML prolog and doctype are dropped.
fn inline_flame_graph(profile: &Profile, title: &str) -> io::Result<String> {
    let mut svg = Vec::new();
    crate::flamegraph::write(profile, title, &mut svg)?;
    let svg = String::from_utf8(svg).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let start = svg.find("<svg").unwrap_or(0);
    Ok(svg[start..].replacen(RESTORE_XML, RESTORE_HTML, 1))
}

/// Samples per [`BUCKET_MS`] (merged into wider buckets past [`MAX_BARS`]), stacked bars.
fn timeline(html: &mut String, p: &Profile) {
    html.push_str("<section class=\"timeline\">\n<h2>Timeline</h2>\n");
    let buckets = p.timeline();
    if buckets.is_empty() {
        html.push_str("<p class=\"note\">No samples.</p>\n</section>\n");
        return;
    }
    let per = buckets.len().div_ceil(MAX_BARS);
    let bars: Vec<(u64, u64)> = buckets
        .chunks(per)
        .map(|c| {
            c.iter()
                .fold((0, 0), |(s, e), b| (s + b.with_stack, e + b.empty))
        })
        .collect();
    let width_ms = BUCKET_MS * per as f64;
    let max = bars.iter().map(|(s, e)| s + e).max().unwrap_or(0).max(1);

    let (w, h, left, top, bottom) = (1200.0, 190.0, 48.0, 10.0, 26.0);
    let plot_h = h - top - bottom;
    let bar_w = ((w - left - 10.0) / bars.len() as f64).min(40.0);
    let axis_w = bar_w * bars.len() as f64;
    let y = |v: u64| top + plot_h * (1.0 - v as f64 / max as f64);

    let _ = writeln!(
        html,
        "<div class=\"legend\"><span><i class=\"k-stack\"></i>with a stack</span>\
         <span><i class=\"k-empty\"></i>without a stack (idle, program, GC)</span>\
         <span>samples per {} ms{}</span></div>",
        number(width_ms),
        if p.trace_count() > 1 {
            ", traces summed from each one's first sample"
        } else {
            ""
        }
    );
    let _ = writeln!(
        html,
        "<svg viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"Samples over time\" \
         shape-rendering=\"crispEdges\">"
    );
    // Horizontal grid and the count axis.
    for v in [max, max / 2] {
        if v == 0 || (v == max / 2 && max < 2) {
            continue;
        }
        let _ = writeln!(
            html,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{x2:.1}\" y1=\"{yv:.1}\" y2=\"{yv:.1}\"/>\
             <text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{v}</text>",
            x2 = left + axis_w,
            yv = y(v),
            tx = left - 6.0,
            ty = y(v) + 4.0,
        );
    }
    for (i, (s, e)) in bars.iter().enumerate() {
        if s + e == 0 {
            continue;
        }
        let x = left + bar_w * i as f64;
        let from = width_ms * i as f64;
        let _ = write!(
            html,
            "<g><title>{} \u{2013} {} ms: {s} with a stack, {e} without</title>",
            number(from),
            number(from + width_ms)
        );
        let gap = if bar_w > 3.0 { 1.0 } else { 0.0 };
        for (class, lo, hi) in [("tl-stack", 0, *s), ("tl-empty", *s, s + e)] {
            if hi > lo {
                let _ = write!(
                    html,
                    "<rect class=\"{class}\" x=\"{x:.2}\" width=\"{bw:.2}\" y=\"{y0:.2}\" \
                     height=\"{bh:.2}\"/>",
                    bw = bar_w - gap,
                    y0 = y(hi),
                    bh = y(lo) - y(hi),
                );
            }
        }
        html.push_str("</g>\n");
    }
    // The time axis, with about eight ticks at round times.
    let base = top + plot_h;
    let _ = writeln!(
        html,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{x2:.1}\" y1=\"{base}\" y2=\"{base}\"/>",
        x2 = left + axis_w
    );
    let span = width_ms * bars.len() as f64;
    let step = tick_step(span);
    let mut t = 0.0;
    while t <= span + 1e-9 {
        let x = left + axis_w * t / span;
        let _ = writeln!(
            html,
            "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{base}\" y2=\"{y2}\"/>\
             <text x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"middle\">{}</text>",
            time_label(t),
            y2 = base + 4.0,
            ty = base + 18.0,
        );
        t += step;
    }
    html.push_str("</svg>\n</section>\n");
}

/// A round step (1, 2 or 5 times a power of ten, in ms) giving at most about eight ticks.
fn tick_step(span_ms: f64) -> f64 {
    let mut step = BUCKET_MS;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if span_ms / (step * m) <= 8.0 {
                return step * m;
            }
        }
        step *= 10.0;
    }
}

fn time_label(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", number(ms / 1000.0))
    } else {
        format!("{} ms", number(ms))
    }
}

/// One function's samples, over all its call paths.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    own: u64,
    total: u64,
}

/// Self and total samples of every function (indexed by frame id). A sample counts once in
/// the total of each function on its stack, however many times the function is there.
fn function_counts(p: &Profile) -> Vec<Counts> {
    let mut counts = vec![Counts::default(); p.frames().len()];
    // The last leaf node that counted each frame, to count a recursive frame once.
    let mut seen = vec![u32::MAX; p.frames().len()];
    for node in 0..p.nodes().len() as u32 {
        let n = p.self_count(node);
        if n == 0 {
            continue;
        }
        counts[p.node(node).frame as usize].own += n;
        let mut at = Some(node);
        while let Some(id) = at {
            let this = p.node(id);
            let f = this.frame as usize;
            if seen[f] != node {
                seen[f] = node;
                counts[f].total += n;
            }
            at = this.parent;
        }
    }
    counts
}

fn top_functions(html: &mut String, p: &Profile) {
    html.push_str("<section>\n<h2>Top functions</h2>\n");
    let counts = function_counts(p);
    let mut by_self: Vec<usize> = (0..counts.len()).filter(|&f| counts[f].total > 0).collect();
    let order = |a: &usize, b: &usize, first: fn(&Counts) -> u64, second: fn(&Counts) -> u64| {
        let (x, y) = (&counts[*a], &counts[*b]);
        (first(y), second(y))
            .cmp(&(first(x), second(x)))
            .then_with(|| p.frames()[*a].cmp(&p.frames()[*b]))
    };
    by_self.sort_by(|a, b| order(a, b, |c| c.own, |c| c.total));
    let mut by_total = by_self.clone();
    by_total.sort_by(|a, b| order(a, b, |c| c.total, |c| c.own));
    let mut rows: Vec<usize> = by_self.iter().take(TOP).copied().collect();
    for f in by_total.iter().take(TOP) {
        if !rows.contains(f) {
            rows.push(*f);
        }
    }
    rows.sort_by(|a, b| order(a, b, |c| c.own, |c| c.total));
    if rows.is_empty() {
        html.push_str("<p class=\"note\">No samples with a stack.</p>\n</section>\n");
        return;
    }
    let samples = p.sample_count();
    let _ = writeln!(
        html,
        "<p class=\"note\">Functions, summed over all their call paths: the {TOP} with the \
         most self samples and the {TOP} with the most total samples ({}). Percentages are of \
         all {} samples. Click a header to sort.</p>",
        if rows.len() == by_self.len() {
            format!("here all {}", rows.len())
        } else {
            format!("{} of {}", rows.len(), by_self.len())
        },
        count(samples)
    );
    html.push_str(
        "<table class=\"top\">\n<thead><tr>\
         <th><button type=\"button\">Function</button></th>\
         <th class=\"num\" data-sort=\"num\" aria-sort=\"descending\"><button type=\"button\">Self</button></th>\
         <th class=\"num\" data-sort=\"num\"><button type=\"button\">Self %</button></th>\
         <th class=\"num\" data-sort=\"num\"><button type=\"button\">Total</button></th>\
         <th class=\"num\" data-sort=\"num\"><button type=\"button\">Total %</button></th>\
         <th><button type=\"button\">Resource</button></th>\
         <th class=\"num\" data-sort=\"num\"><button type=\"button\">Line</button></th>\
         <th class=\"num\" data-sort=\"num\"><button type=\"button\">Column</button></th>\
         </tr></thead>\n<tbody>\n",
    );
    for (rank, f) in rows.iter().enumerate() {
        let frame: &Frame = &p.frames()[*f];
        let c = counts[*f];
        let _ = writeln!(
            html,
            "<tr data-rank=\"{rank}\"><td class=\"fn\" title=\"{label}\">{name}</td>\
             <td class=\"num\" data-v=\"{own}\">{own_s}</td>{own_pct}\
             <td class=\"num\" data-v=\"{total}\">{total_s}</td>{total_pct}\
             <td class=\"url\">{url}</td>\
             <td class=\"num\" data-v=\"{line}\">{line_s}</td>\
             <td class=\"num\" data-v=\"{column}\">{column_s}</td></tr>",
            label = escape(&frame.label()),
            name = escape(frame.display_name()),
            own = c.own,
            own_s = count(c.own),
            own_pct = percent_cell(c.own, samples),
            total = c.total,
            total_s = count(c.total),
            total_pct = percent_cell(c.total, samples),
            url = escape(frame.resource.as_deref().unwrap_or("")),
            line = frame.line.unwrap_or(0),
            line_s = frame.line.map_or(String::new(), |l| l.to_string()),
            column = frame.column.unwrap_or(0),
            column_s = frame.column.map_or(String::new(), |c| c.to_string()),
        );
    }
    html.push_str("</tbody>\n</table>\n</section>\n");
}

/// A percentage cell with a bar behind its number.
fn percent_cell(n: u64, of: u64) -> String {
    let v = if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    };
    format!(
        "<td class=\"num pct\" data-v=\"{v:.4}\"><span style=\"width:{v:.1}%\"></span><b>{}</b></td>",
        percent(n, of)
    )
}

fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        return "\u{2014}".to_owned();
    }
    format!("{:.1}%", 100.0 * n as f64 / of as f64)
}

/// An integer with thousands separators.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number with at most three decimals, without trailing zeros.
fn number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// Milliseconds, with seconds beside them from one second on.
fn milliseconds(ms: f64) -> String {
    if ms >= 1000.0 {
        format!(
            "{} ms <small>({:.2} s)</small>",
            count(ms.round() as u64),
            ms / 1000.0
        )
    } else {
        format!("{} ms", number(ms))
    }
}

/// Text made safe for HTML text and quoted attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
