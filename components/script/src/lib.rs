//! The SpiderMonkey host of jsprof: it loads an HTML page, gives it a Window realm with the
//! DOM pages and testharness.js need, runs its scripts in the order the HTML standard gives,
//! and turns the event loop until nothing is left to do.
//!
//! - [`document`]: html5ever parsing and the script elements of a page.
//! - `glue`: every `unsafe` SpiderMonkey call (the only such module).
//! - `prelude.js`: the DOM surface, in JavaScript, over the glue's natives.
//! - [`page`]: the event loop and the script processing model.
//! - [`prefs`]: the `--pref` registry.
//! - [`policy`]: `Document-Policy` for `js-profiling`.
//! - [`symbols`]: the script registry and the resolution of positions to spec names.

// Architecture invariant: `unsafe` lives in `glue` only.
#![deny(unsafe_code)]

pub mod document;
#[allow(unsafe_code)]
mod glue;
pub mod page;
pub mod policy;
pub mod prefs;
pub mod symbols;

pub use glue::{shutdown, SamplingStats};
pub use page::{run_page, PageError, RunOptions, RunReport};
pub use prefs::{PrefError, Prefs};

use url::Url;

/// The components of a URL as JSON, for the prelude's `URL` and `Location`, after applying
/// `setter` (a component name) with `value`.
pub(crate) fn url_parts(
    input: &str,
    base: Option<&str>,
    setter: Option<&str>,
    value: Option<&str>,
) -> Result<String, String> {
    let invalid = |e: &dyn std::fmt::Display| format!("Invalid URL '{input}': {e}");
    let mut url = match base {
        Some(base) => Url::parse(base)
            .map_err(|e| invalid(&e))?
            .join(input)
            .map_err(|e| invalid(&e))?,
        None => Url::parse(input).map_err(|e| invalid(&e))?,
    };
    if let (Some(setter), Some(value)) = (setter, value) {
        // Setters that fail leave the URL as it was, as the URL standard's setters do.
        let _ = match setter {
            "href" => {
                url = Url::parse(value).map_err(|e| invalid(&e))?;
                Ok(())
            }
            "protocol" => url.set_scheme(value.trim_end_matches(':')),
            "username" => url.set_username(value),
            "password" => url.set_password(Some(value)),
            "host" => url.set_host(Some(value)).map_err(|_| ()),
            "hostname" => url.set_host(Some(value)).map_err(|_| ()),
            "port" => url.set_port(value.parse().ok()),
            "pathname" => {
                url.set_path(value);
                Ok(())
            }
            "search" | "query" => {
                let q = value.trim_start_matches('?');
                url.set_query((!q.is_empty()).then_some(q));
                Ok(())
            }
            "hash" => {
                let f = value.trim_start_matches('#');
                url.set_fragment((!f.is_empty()).then_some(f));
                Ok(())
            }
            _ => Err(()),
        };
    }
    let with_prefix = |p: &str, s: Option<&str>| {
        s.filter(|s| !s.is_empty())
            .map(|s| format!("{p}{s}"))
            .unwrap_or_default()
    };
    Ok(serde_json::json!({
        "href": url.as_str(),
        "protocol": format!("{}:", url.scheme()),
        "username": url.username(),
        "password": url.password().unwrap_or(""),
        "host": match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            _ => String::new(),
        },
        "hostname": url.host_str().unwrap_or(""),
        "port": url.port().map(|p| p.to_string()).unwrap_or_default(),
        "pathname": url.path(),
        "search": with_prefix("?", url.query()),
        "hash": with_prefix("#", url.fragment()),
        "origin": url.origin().ascii_serialization(),
    })
    .to_string())
}
