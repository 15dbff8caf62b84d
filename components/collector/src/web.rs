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
//! - `/api/regressions?…`: each release compared with the one before it
//!   (regressions.rs): `{"project", "method", "alpha", "min_samples", "releases": [],
//!   "pairs": [], "findings": [], "note"}`; no `release` filter (every release is
//!   compared); with fewer than two releases, no pairs and a `note` that says so.
//!
//! Filters (`…`): `release`, `url` and `user_agent` (substrings), `since` and `until` (ms
//! since the epoch), `during` (`long-task`, `loaf` or `interaction`: only samples inside
//! such an event of their trace); an empty value is no filter. A parameter that is not one of these, a
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

use crate::aggregate::{self, During};
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

/// The filter and the route's own numbers from the query's parameters.
fn filter(
    params: &[(String, String)],
    extra: Option<&str>,
) -> Result<(TopFilter, Option<usize>), String> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (k, v) in params {
        let known = matches!(
            k.as_str(),
            "release" | "url" | "user_agent" | "since" | "until" | "during"
        ) || Some(k.as_str()) == extra;
        if !known {
            let mut names = "release, url, user_agent, since, until, during".to_owned();
            if let Some(e) = extra {
                names.push_str(", ");
                names.push_str(e);
            }
            return Err(format!("unknown parameter {k:?} (parameters: {names})"));
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
    let number = extra
        .and_then(|e| value(e).map(|v| (e, v)))
        .map(|(e, v)| match v.parse::<usize>() {
            Ok(n) if (1..=MAX_ROWS).contains(&n) => Ok(n),
            _ => Err(format!(
                "{e}={v}: expected a whole number from 1 to {MAX_ROWS}"
            )),
        })
        .transpose()?;
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
        limit: 0,
    };
    Ok((f, number))
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
    let extra = match path {
        "/api/top" => Some("limit"),
        "/api/timeline" => Some("buckets"),
        _ => None,
    };
    let (mut f, number) = match filter(params, extra) {
        Ok(v) => v,
        Err(reason) => return text(400, reason),
    };
    if path == "/api/regressions" && f.release.is_some() {
        return text(
            400,
            "release: regressions compare every release with the one before it; no release filter",
        );
    }
    let ctx = match query::context(&config.store, Some(&project)).await {
        Ok(c) => c,
        Err(e) => return text(500, format!("the store cannot be read: {e}")),
    };
    let json = |v: serde_json::Value| respond(200, "application/json", v.to_string());
    let result = match path {
        "/api/top" => {
            f.limit = number.unwrap_or(50);
            aggregate::top_rows(&ctx, &f)
                .await
                .map(|rows| json(serde_json::json!({ "functions": rows })))
        }
        "/api/timeline" => aggregate::timeline(&ctx, &f, number.unwrap_or(100))
            .await
            .map(|t| json(serde_json::json!(t))),
        "/api/regressions" => regressions::report(&ctx, &project, &f, config.regressions)
            .await
            .map(|r| json(serde_json::json!(r))),
        _ => aggregate::profile(&ctx, &f, false).await.map(|p| {
            let mut r = respond(
                200,
                "image/svg+xml",
                crate::flame::svg(&p, &format!("Flame graph of {project}")),
            );
            r.headers_mut()
                .insert("content-security-policy", HeaderValue::from_static(SVG_CSP));
            r
        }),
    };
    result.unwrap_or_else(|e| text(500, format!("the query failed: {e}")))
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
        let (f, n) = filter(
            &p(&[
                ("release", "2.0"),
                ("url", ""),
                ("since", "5"),
                ("limit", "7"),
            ]),
            Some("limit"),
        )
        .unwrap();
        assert_eq!(f.release.as_deref(), Some("2.0"));
        assert_eq!(f.url, None);
        assert_eq!(f.since_ms, Some(5.0));
        assert_eq!(n, Some(7));
        for (bad, why) in [
            (p(&[("since", "soon")]), "since=soon"),
            (p(&[("until", "inf")]), "until=inf"),
            (p(&[("limit", "0")]), "limit=0"),
            (p(&[("limit", "1001")]), "limit=1001"),
            (p(&[("buckets", "3")]), "unknown parameter \"buckets\""),
            (p(&[("release", "1"), ("release", "2")]), "given twice"),
            (
                p(&[("during", "frame")]),
                "during=frame: expected long-task",
            ),
        ] {
            let err = filter(&bad, Some("limit")).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
