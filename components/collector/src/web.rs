//! The page at `/` of `jsprof collect`: the flame graph, the top functions and the samples
//! over time of one project's store, filterable by release, page URL, user agent and time
//! range, and the JSON API behind it. Everything comes from the one aggregation of
//! `top` and `flame` (aggregate.rs); the page's HTML, script and style are in the binary
//! (`web/`), and it loads nothing from elsewhere (its Content-Security-Policy says so).
//!
//! Routes (GET or HEAD):
//! - `/`, `/page.js`, `/regressions.js`, `/page.css` (and `/favicon.ico`, empty): the page;
//! - `/api/top?…&limit=N`: `{"functions": [top's rows]}`;
//! - `/api/flame?…`: the flame graph, the SVG `jsprof flame -o out.svg` writes;
//! - `/api/timeline?…&buckets=N`: `{"from_ms", "bucket_ms", "with_stack": [], "empty": [],
//!   "marks": []}`, samples per bucket of a round width, at most about N buckets, and the
//!   long tasks, long animation frames and slow interactions of their traces
//!   (`{"kind", "name", "start_ms", "duration_ms"}`), which the page marks on its timeline;
//! - `/api/labels`: each label's values and the releases, `{"release": [], "view": [], …}`;
//! - `/api/groups?…&by=LABEL`: `{"by", "groups": [{"value", "traces", "samples",
//!   "with_stack", "top_function", "top_self"}]}`, the samples by the label's value;
//! - `/api/traces?…&limit=N`: `{"traces": [{"id", "release", "page_url", "view", …,
//!   "samples", "start_ms", "end_ms", "events"}]}`, the latest first;
//! - `/api/trace?…&id=ID`: one trace in time order, `{"trace", "samples": [{"t", "w",
//!   "stack"}], "stacks": [{"id", "parent", "function", …}], "marks"}` (404: no such trace);
//! - `/api/diff?…&base=R1&head=R2`: the diff flame graph, `{"base", "head", "root"}`, each
//!   call path with both releases' samples and the change of its share (flame.rs,
//!   [`crate::flame::diff_tree`]); `"root": null` and `"empty": reason` where a release
//!   has no samples with a stack;
//! - `/api/regressions?…`: each release compared with the one before it
//!   (regressions.rs): `{"project", "method", "alpha", "min_samples", "releases": [],
//!   "pairs": [], "findings": [], "note"}`; no `release` filter (every release is
//!   compared); with fewer than two releases, no pairs and a `note` that says so.
//!
//! Filters (`…`): `release`, `url` and `user_agent` (substrings), `since` and `until` (ms
//! since the epoch), `during` (`long-task`, `loaf` or `interaction`: only samples inside
//! such an event of their trace), `view`, `environment` and `browser` (the trace's label
//! equals it, [`Label`]); an empty value is no filter. A parameter that is not one of these, a
//! repeated one, or a bad number is a 400 with the reason.
//!
//! Reading is per project, with a *read* key: `--read-key PROJECT=KEY` (repeatable), sent as
//! `Authorization: Bearer KEY` or in the cookie `jsprof_key` (the page sets it). Ingest
//! keys cannot serve: they are public, in every page that sends traces. The project comes
//! from the key alone, so a key shows its project's traces and no other's. With neither
//! ingest nor read keys (a developer's machine) the one project, `default`, is open; with
//! ingest keys but no read key, nothing is. The API answers no CORS: another site's page
//! cannot read it.

use std::collections::HashMap;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Response, StatusCode};

use crate::aggregate::{self, During, Label};
use crate::browse;
use crate::config::Config;
use crate::params::percent_decode;
use crate::query::{self, TopFilter};
use crate::regressions;

const INDEX: &str = include_str!("web/index.html");
const SCRIPT: &str = include_str!("web/page.js");
/// The regressions section's script, apart from page.js.
const REGRESSIONS_SCRIPT: &str = include_str!("web/regressions.js");
const STYLE: &str = include_str!("web/page.css");

/// The page's policy: its own script, style and API, nothing else.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; frame-src 'self'; img-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";
/// The flame graph's: inferno's inline script and style, framed by the page only.
const SVG_CSP: &str =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'self'";

/// The largest `limit` and `buckets`.
const MAX_ROWS: usize = 1000;

/// Whether `path` is the page's or its API's (answered without CORS).
pub fn is_page_route(path: &str) -> bool {
    matches!(
        path,
        "/" | "/page.js"
            | "/regressions.js"
            | "/page.css"
            | "/favicon.ico"
            | "/api/top"
            | "/api/flame"
            | "/api/timeline"
            | "/api/labels"
            | "/api/groups"
            | "/api/traces"
            | "/api/trace"
            | "/api/diff"
            | "/api/regressions"
    )
}

type Answer = Response<Full<Bytes>>;

fn respond(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static(content_type));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("cache-control", HeaderValue::from_static("no-store"));
    r
}

fn text(status: u16, reason: impl Into<String>) -> Answer {
    respond(
        status,
        "text/plain; charset=utf-8",
        format!("{}\n", reason.into()),
    )
}

/// The project whose data the request may read, or why none (a 401).
fn reader(config: &Config, headers: &HeaderMap) -> Result<String, &'static str> {
    if config.read_keys.is_empty() {
        if config.keys.is_empty() {
            return Ok("default".into());
        }
        return Err(
            "this collector has ingest keys and no read key: start it with --read-key PROJECT=KEY",
        );
    }
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|k| k.trim().to_owned());
    let cookie = headers
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix("jsprof_key=").map(percent_decode));
    match bearer.or(cookie) {
        None => Err("missing read key"),
        Some(k) => config.read_keys.get(&k).cloned().ok_or("unknown read key"),
    }
}

/// The filter parameters every API route takes.
const FILTERS: [&str; 9] = [
    "release",
    "url",
    "user_agent",
    "since",
    "until",
    "during",
    "view",
    "environment",
    "browser",
];

/// The filter from the query's parameters, and the values of the route's own parameters
/// (`extra`; an empty value is none).
fn filter(
    params: &[(String, String)],
    extra: &[&str],
) -> Result<(TopFilter, HashMap<String, String>), String> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (k, v) in params {
        let known = FILTERS.contains(&k.as_str()) || extra.contains(&k.as_str());
        if !known {
            let names: Vec<&str> = FILTERS.iter().chain(extra).copied().collect();
            return Err(format!(
                "unknown parameter {k:?} (parameters: {})",
                names.join(", ")
            ));
        }
        if seen.insert(k, v).is_some() {
            return Err(format!("parameter {k} given twice"));
        }
    }
    let value = |k: &str| seen.get(k).filter(|v| !v.is_empty()).map(|v| v.to_string());
    let time = |k: &str| -> Result<Option<f64>, String> {
        value(k)
            .map(|v| match v.parse::<f64>() {
                Ok(t) if t.is_finite() => Ok(t),
                _ => Err(format!("{k}={v}: expected a time in ms since the epoch")),
            })
            .transpose()
    };
    let during = value("during")
        .map(|v| During::parse(&v).map_err(|e| format!("during={e}")))
        .transpose()?;
    let f = TopFilter {
        release: value("release"),
        url: value("url"),
        user_agent: value("user_agent"),
        since_ms: time("since")?,
        until_ms: time("until")?,
        during,
        labels: Label::ALL
            .into_iter()
            .filter_map(|l| value(l.name()).map(|v| (l, v)))
            .collect(),
        trace_id: None,
        limit: 0,
    };
    let extras = extra
        .iter()
        .filter_map(|e| value(e).map(|v| (e.to_string(), v)))
        .collect();
    Ok((f, extras))
}

/// A route's count parameter `name` (`limit`, `buckets`): 1 to [`MAX_ROWS`], `default` if
/// not given.
fn rows(extras: &HashMap<String, String>, name: &str, default: usize) -> Result<usize, String> {
    match extras.get(name) {
        None => Ok(default),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=MAX_ROWS).contains(&n) => Ok(n),
            _ => Err(format!(
                "{name}={v}: expected a whole number from 1 to {MAX_ROWS}"
            )),
        },
    }
}

/// Answers the page's routes; `None` for any other path.
pub async fn route(
    config: &Config,
    method: &Method,
    path: &str,
    params: &[(String, String)],
    headers: &HeaderMap,
) -> Option<Answer> {
    if !is_page_route(path) {
        return None;
    }
    if method != Method::GET && method != Method::HEAD {
        let mut r = text(405, "GET only");
        r.headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return Some(r);
    }
    let mut page = match path {
        "/" => respond(200, "text/html; charset=utf-8", INDEX),
        "/page.js" => respond(200, "text/javascript; charset=utf-8", SCRIPT),
        "/regressions.js" => respond(200, "text/javascript; charset=utf-8", REGRESSIONS_SCRIPT),
        "/page.css" => respond(200, "text/css; charset=utf-8", STYLE),
        // No icon: an empty answer rather than a 404 in the console.
        "/favicon.ico" => respond(204, "image/x-icon", Bytes::new()),
        _ => return Some(api(config, path, params, headers).await),
    };
    page.headers_mut().insert(
        "content-security-policy",
        HeaderValue::from_static(PAGE_CSP),
    );
    Some(page)
}

async fn api(
    config: &Config,
    path: &str,
    params: &[(String, String)],
    headers: &HeaderMap,
) -> Answer {
    let project = match reader(config, headers) {
        Ok(p) => p,
        Err(reason) => return text(401, reason),
    };
    let extra: &[&str] = match path {
        "/api/top" | "/api/traces" => &["limit"],
        "/api/timeline" => &["buckets"],
        "/api/groups" => &["by"],
        "/api/trace" => &["id"],
        "/api/diff" => &["base", "head"],
        _ => &[],
    };
    let (f, extras) = match filter(params, extra) {
        Ok(v) => v,
        Err(reason) => return text(400, reason),
    };
    if path == "/api/regressions" && f.release.is_some() {
        return text(
            400,
            "release: regressions compare every release with the one before it; no release filter",
        );
    }
    let ctx = match query::context(&config.location(), Some(&project)).await {
        Ok(c) => c,
        Err(e) => return text(500, format!("the store cannot be read: {e}")),
    };
    match answer(&ctx, &project, path, f, &extras, config.regressions).await {
        Ok(a) => a,
        Err(Failure::Input(reason)) => text(400, reason),
        Err(Failure::NotFound(reason)) => text(404, reason),
        Err(Failure::Query(e)) => text(500, format!("the query failed: {e}")),
    }
}

/// Why an API request got no answer: its input (400), nothing there (404), or the query.
enum Failure {
    Input(String),
    NotFound(String),
    Query(String),
}

fn json(v: impl serde::Serialize) -> Answer {
    match serde_json::to_string(&v) {
        Ok(body) => respond(200, "application/json", body),
        Err(e) => text(500, format!("the answer does not serialise: {e}")),
    }
}

async fn answer(
    ctx: &datafusion::prelude::SessionContext,
    project: &str,
    path: &str,
    mut f: TopFilter,
    extras: &HashMap<String, String>,
    settings: regressions::Settings,
) -> Result<Answer, Failure> {
    use serde_json::json as j;
    let input = |r: Result<usize, String>| r.map_err(Failure::Input);
    Ok(match path {
        "/api/top" => {
            f.limit = input(rows(extras, "limit", 50))?;
            let rows = aggregate::top_rows(ctx, &f).await.map_err(Failure::Query)?;
            json(j!({ "functions": rows }))
        }
        "/api/timeline" => {
            let n = input(rows(extras, "buckets", 100))?;
            json(
                aggregate::timeline(ctx, &f, n)
                    .await
                    .map_err(Failure::Query)?,
            )
        }
        "/api/regressions" => json(
            regressions::report(ctx, project, &f, settings)
                .await
                .map_err(Failure::Query)?,
        ),
        "/api/labels" => json(browse::label_values(ctx).await.map_err(Failure::Query)?),
        "/api/groups" => {
            let by = extras
                .get("by")
                .ok_or_else(|| Failure::Input(format!("by: missing (one of {})", Label::NAMES)))?;
            let label = Label::parse(by).map_err(|e| Failure::Input(format!("by={e}")))?;
            let groups = browse::groups(ctx, &f, label)
                .await
                .map_err(Failure::Query)?;
            json(j!({ "by": label.name(), "groups": groups }))
        }
        "/api/traces" => {
            let n = input(rows(extras, "limit", 100))?;
            let traces = browse::traces(ctx, &f, n).await.map_err(Failure::Query)?;
            json(j!({ "traces": traces }))
        }
        "/api/trace" => {
            let id = extras
                .get("id")
                .ok_or_else(|| Failure::Input("id: missing".into()))?;
            let id: i64 = id
                .parse()
                .map_err(|_| Failure::Input(format!("id={id}: expected a trace's id")))?;
            match browse::trace(ctx, &f, id).await.map_err(Failure::Query)? {
                Some(t) => json(t),
                None => {
                    return Err(Failure::NotFound(format!(
                        "no trace {id} with samples (with these filters)"
                    )))
                }
            }
        }
        "/api/diff" => json(diff_flame(ctx, f, extras).await?),
        _ => {
            let p = aggregate::profile(ctx, &f, false)
                .await
                .map_err(Failure::Query)?;
            let mut r = respond(
                200,
                "image/svg+xml",
                crate::flame::svg(&p, &format!("Flame graph of {project}")),
            );
            r.headers_mut()
                .insert("content-security-policy", HeaderValue::from_static(SVG_CSP));
            r
        }
    })
}

/// A path of the diff flame graph below this share in both releases is left out.
const DIFF_MIN_SHARE: f64 = 0.001;

/// `/api/diff`: the flame graphs of releases `base` and `head` (with the other filters)
/// merged by call path, each path with both counts and the change of its share.
async fn diff_flame(
    ctx: &datafusion::prelude::SessionContext,
    f: TopFilter,
    extras: &HashMap<String, String>,
) -> Result<serde_json::Value, Failure> {
    let release = |k: &str| {
        extras
            .get(k)
            .cloned()
            .ok_or_else(|| Failure::Input(format!("{k}: missing (a release)")))
    };
    let (base, head) = (release("base")?, release("head")?);
    if f.release.is_some() {
        return Err(Failure::Input(
            "release: not with base and head (they are the releases)".into(),
        ));
    }
    if base == head {
        return Err(Failure::Input(format!("base and head are both {base}")));
    }
    let mut profiles = Vec::new();
    for r in [&base, &head] {
        let one = TopFilter {
            release: Some(r.clone()),
            ..f.clone()
        };
        let p = aggregate::profile(ctx, &one, false)
            .await
            .map_err(Failure::Query)?;
        if p.sample_count() == p.empty_total() {
            // An answer, not an error: the page asks for the last two releases by itself.
            return Ok(serde_json::json!({
                "base": base,
                "head": head,
                "root": null,
                "empty": format!("release {r} has no samples with a stack (with these filters)"),
            }));
        }
        profiles.push(p);
    }
    let root = crate::flame::diff_tree(&profiles[0], &profiles[1], DIFF_MIN_SHARE);
    Ok(serde_json::json!({
        "base": base,
        "head": head,
        "min_share": DIFF_MIN_SHARE,
        "root": root,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn filters_from_parameters() {
        let (f, extras) = filter(
            &p(&[
                ("release", "2.0"),
                ("url", ""),
                ("since", "5"),
                ("limit", "7"),
                ("browser", "Firefox"),
                ("view", "/cart"),
            ]),
            &["limit"],
        )
        .unwrap();
        assert_eq!(f.release.as_deref(), Some("2.0"));
        assert_eq!(f.url, None);
        assert_eq!(f.since_ms, Some(5.0));
        assert_eq!(
            f.labels,
            [
                (Label::View, "/cart".to_owned()),
                (Label::Browser, "Firefox".to_owned())
            ]
        );
        assert_eq!(rows(&extras, "limit", 50), Ok(7));
        assert_eq!(rows(&HashMap::new(), "limit", 50), Ok(50));
        for (bad, why) in [
            (p(&[("since", "soon")]), "since=soon"),
            (p(&[("until", "inf")]), "until=inf"),
            (p(&[("buckets", "3")]), "unknown parameter \"buckets\""),
            (p(&[("release", "1"), ("release", "2")]), "given twice"),
            (
                p(&[("during", "frame")]),
                "during=frame: expected long-task",
            ),
        ] {
            let err = filter(&bad, &["limit"]).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        for bad in ["0", "1001", "many"] {
            let extras = HashMap::from([("limit".to_owned(), bad.to_owned())]);
            let err = rows(&extras, "limit", 50).unwrap_err();
            assert!(err.starts_with(&format!("limit={bad}: expected")), "{err}");
        }
    }
}
