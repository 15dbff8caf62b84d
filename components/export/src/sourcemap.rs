//! Source maps: frames of minified or bundled scripts turned back into the functions of the
//! original sources, with the [`sourcemap`](https://docs.rs/sourcemap) crate.
//!
//! Format: Source Map revision 3, standardised as ECMA-426
//! (<https://tc39.es/ecma426/>). [`SourceMaps::map`] is the `map` closure of
//! [`Profile::add_trace`](crate::Profile::add_trace):
//!
//! ```no_run
//! # use jsprof_export::{sourcemap::SourceMaps, Keep, Profile};
//! # let trace = jsprof_profiler::ProfilerTrace::default();
//! let mut maps = SourceMaps::new();
//! let mut profile = Profile::new(Keep::Counts);
//! profile.add_trace("page", &trace, &mut |f| maps.map(f)).unwrap();
//! for warning in maps.warnings() {
//!     eprintln!("jsprof: {warning}");
//! }
//! ```
//!
//! Decisions:
//! - **Finding a script's map**, in order: its response's `SourceMap` header, then the legacy
//!   `X-SourceMap` header, then the *last* `//# sourceMappingURL=` (or legacy `//@`) comment
//!   of its text. The URL is resolved against the script's URL (after redirects). Scripts and
//!   maps are loaded with [`jsprof_net::Loader`]: `file:` from disk (with its `.headers`
//!   sidecar, so a `SourceMap` header works there too), `http(s):` over the network, `data:`
//!   decoded in memory.
//! - **A map reaches no further than its script could.** The scripts are the trace's
//!   resources, loaded as the user's own request (as the shell loads a page named on its
//!   command line). A map is named by the script's content, which its server wrote: it is
//!   loaded as a *same-origin* request of the script's origin (Fetch's main fetch, in
//!   `jsprof-net`, every redirect hop checked), so it must be a `data:` URL or same-origin
//!   with the script — for an `http(s):` script another scheme, host or port is refused, and
//!   so is a redirect that leaves the origin — and a `file:` map is loaded only for a `file:`
//!   script (a web page may not read local files). A refused map is a warning, like one that
//!   cannot be loaded.
//! - **Each resource is looked up once** per [`SourceMaps`], failures included. A script
//!   that cannot be loaded, a map that cannot be loaded or does not parse, is one line in
//!   [`SourceMaps::warnings`] and its frames are kept as they are; a script without any map
//!   is not a warning. Nothing here panics on input, and the trace itself is never changed.
//! - **Positions**: a trace's `line`/`column` are 1-based and in UTF-16 code units, a map's
//!   are 0-based (also UTF-16). They are where the function is *defined*: in SpiderMonkey,
//!   the `(` of its parameter list. The frame is looked up as the last mapping at or before
//!   that position **on the same generated line** (for `function a(b){…}` that is the
//!   mapping of the name `a`); no mapping there, or one without a source, keeps the frame.
//! - **Name**: the mapping's `name` when it has one (a bundler records it where it renamed
//!   an identifier), otherwise the name in the trace. A function the minifier made anonymous
//!   (`function nextRandom(){}` written as `function(){}`) so keeps the empty name, with its
//!   original file and line.
//! - **File, line, column**: the mapping's original source and position (1-based), so for
//!   a function declaration the position of its name in the original source. The source is
//!   `sourceRoot` + `/` + the `sources` entry (an absolute source URL is taken as it is),
//!   resolved against the map's URL — against the script's URL for a `data:` map, which
//!   cannot be a base.

use std::rc::Rc;

use ::sourcemap::{DecodedMap, SourceMap};
use jsprof_net::{Credentials, Loader, LoaderConfig, Mode, Origin, Request, Response, Url};
use rustc_hash::FxHashMap;

use crate::model::Frame;

/// Resolves frames through their scripts' source maps, loading each script and map once.
#[derive(Debug, Default)]
pub struct SourceMaps {
    /// Made on the first load, unless given.
    loader: Option<Loader>,
    /// Every resource looked up: its map, or `None` (no map, or it failed).
    scripts: FxHashMap<String, Option<Rc<Mapped>>>,
    warnings: Vec<String>,
}

/// A parsed map with its sources resolved to URLs: what [`SourceMaps`] looks frames up
/// in, public for callers that load scripts and maps under a policy of their own (the
/// collector's `--source-maps`, which may not fetch what an untrusted trace names as freely).
#[derive(Debug)]
pub struct Mapped {
    map: SourceMap,
    /// Indexed like the map's `sources`.
    sources: Vec<String>,
}

impl SourceMaps {
    /// Loads with a default [`Loader`], made when the first resource is looked up.
    pub fn new() -> SourceMaps {
        SourceMaps::default()
    }

    /// Loads with `loader` (a test CA, host overrides, a deadline).
    pub fn with_loader(loader: Loader) -> SourceMaps {
        SourceMaps {
            loader: Some(loader),
            ..SourceMaps::default()
        }
    }

    /// The original function of `frame`, or `frame` unchanged when its resource has no
    /// usable map or the map has nothing at its position.
    pub fn map(&mut self, frame: Frame) -> Frame {
        let (Some(resource), Some(line), Some(column)) =
            (frame.resource.as_deref(), frame.line, frame.column)
        else {
            return frame;
        };
        let Some(mapped) = self.lookup(resource) else {
            return frame;
        };
        mapped.original_at(&frame, line, column).unwrap_or(frame)
    }

    /// One line per script whose map could not be used, in the order they were met.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The map of `resource`, loaded on its first lookup.
    fn lookup(&mut self, resource: &str) -> Option<Rc<Mapped>> {
        if let Some(known) = self.scripts.get(resource) {
            return known.clone();
        }
        let mapped = match self.load(resource) {
            Ok(mapped) => mapped.map(Rc::new),
            Err(why) => {
                self.warnings.push(format!(
                    "{resource}: source map not used ({why}); its frames are left as they are"
                ));
                None
            }
        };
        self.scripts.insert(resource.to_owned(), mapped.clone());
        mapped
    }

    /// The map of the script at `resource`: `Ok(None)` when it names none.
    fn load(&mut self, resource: &str) -> Result<Option<Mapped>, String> {
        let url = Url::parse(resource).map_err(|e| format!("not a URL: {e}"))?;
        // The trace's resource: the user's request.
        let script = self.fetch(&Request::navigate(url, None))?;
        let Some(reference) = map_reference(&script) else {
            return Ok(None);
        };
        let map_url = script
            .url
            .join(&reference)
            .map_err(|e| format!("bad source map URL '{reference}': {e}"))?;
        // The map: a request of the script's origin that may not leave it (but for data:).
        let origin = Origin::of(&script.url);
        let request = Request::new(map_url.clone(), origin, Mode::SameOrigin, Credentials::Omit);
        let body = self.fetch(&request)?.body;
        Mapped::parse(&body, &map_url, &script.url).map(Some)
    }

    fn fetch(&mut self, request: &Request) -> Result<Response, String> {
        let loader = match self.loader.take() {
            Some(loader) => loader,
            None => Loader::new(&LoaderConfig::default()).map_err(|e| e.to_string())?,
        };
        let loader = self.loader.insert(loader);
        let response = loader.fetch_request(request).map_err(|e| e.to_string())?;
        if !response.ok() {
            return Err(format!(
                "{}: HTTP status {}",
                shorten(request.url.as_str()),
                response.status
            ));
        }
        Ok(response)
    }
}

impl Mapped {
    /// Parses the map `body` loaded from `map_url` for the script at `script_url` (the
    /// base of a `data:` map's sources).
    pub fn parse(body: &[u8], map_url: &Url, script_url: &Url) -> Result<Mapped, String> {
        let shown = shorten(map_url.as_str());
        let mut map = match ::sourcemap::decode_slice(body) {
            Ok(DecodedMap::Regular(map)) => map,
            Ok(DecodedMap::Index(index)) => index
                .flatten()
                .map_err(|e| format!("{shown}: bad index map: {e}"))?,
            Ok(DecodedMap::Hermes(hermes)) => SourceMap::clone(&hermes),
            Err(e) => return Err(format!("{shown}: not a source map: {e}")),
        };
        // Sources are resolved here, as ECMA-426 says, not as the crate prefixes them.
        let root = map.get_source_root().unwrap_or_default().to_owned();
        map.set_source_root(None::<String>);
        // A data: URL cannot be a base: its sources resolve against the script.
        let base = if map_url.scheme() == "data" {
            script_url
        } else {
            map_url
        };
        let sources = (0..map.get_source_count())
            .map(|i| resolve_source(base, &root, map.get_source(i).unwrap_or_default()))
            .collect();
        Ok(Mapped { map, sources })
    }

    /// The original of `frame` (a frame of the map's script), if the map has one there.
    pub fn original(&self, frame: &Frame) -> Option<Frame> {
        self.original_at(frame, frame.line?, frame.column?)
    }

    /// The original of `frame`, at 1-based `line` and `column` of the generated script.
    fn original_at(&self, frame: &Frame, line: u64, column: u64) -> Option<Frame> {
        let line = u32::try_from(line.checked_sub(1)?).ok()?;
        let column = u32::try_from(column.checked_sub(1)?).ok()?;
        let token = self.map.lookup_token(line, column)?;
        if token.get_dst_line() != line || !token.has_source() {
            return None;
        }
        let source = self.sources.get(token.get_src_id() as usize)?;
        let name = token
            .get_name()
            .filter(|n| !n.is_empty())
            .unwrap_or(&frame.name);
        Some(Frame {
            name: name.to_owned(),
            resource: Some(source.clone()),
            line: Some(u64::from(token.get_src_line()) + 1),
            column: Some(u64::from(token.get_src_col()) + 1),
        })
    }
}

/// Where the script's map is, as written: its `SourceMap` (or `X-SourceMap`) header, else
/// its last `sourceMappingURL` comment.
fn map_reference(script: &Response) -> Option<String> {
    map_reference_of(|h| script.headers.get(h), &script.text())
}

/// Where a script's map is, as written: its `SourceMap` header, then `X-SourceMap`
/// (`header` looks a response header up by name), then its last `sourceMappingURL` comment.
pub fn map_reference_of<'a>(
    header: impl Fn(&str) -> Option<&'a str>,
    text: &str,
) -> Option<String> {
    if let Some(url) = ["SourceMap", "X-SourceMap"]
        .iter()
        .find_map(|h| header(h))
        .filter(|u| !u.is_empty())
    {
        return Some(url.to_owned());
    }
    last_comment(text)
}

/// The URL of the last `//# sourceMappingURL=` (or `//@ sourceMappingURL=`) comment that
/// starts a line (leading whitespace allowed).
fn last_comment(text: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        let rest = line.trim_start();
        let rest = rest
            .strip_prefix("//#")
            .or_else(|| rest.strip_prefix("//@"))?;
        let url = rest.trim_start().strip_prefix("sourceMappingURL=")?;
        let url = url.split_whitespace().next()?;
        Some(url.to_owned())
    })
}

/// A `sources` entry as a URL: `root` prepended (ECMA-426 "resolving sources"), then
/// resolved against `base`; as written if that fails.
fn resolve_source(base: &Url, root: &str, source: &str) -> String {
    if Url::parse(source).is_ok() {
        return source.to_owned();
    }
    let joined = match root {
        "" => source.to_owned(),
        r if r.ends_with('/') => format!("{r}{source}"),
        r => format!("{r}/{source}"),
    };
    base.join(&joined).map_or(joined, |u| u.to_string())
}

/// A URL as a warning shows it: a `data:` URL cut after its first 40 characters.
fn shorten(url: &str) -> String {
    if url.starts_with("data:") && url.len() > 40 {
        let end = (40..url.len())
            .find(|&i| url.is_char_boundary(i))
            .unwrap_or(url.len());
        format!("{}…", &url[..end])
    } else {
        url.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_comment_wins_and_legacy_comments_count() {
        let text = "//# sourceMappingURL=first.map\nf();\n  //@ sourceMappingURL=last.map  \n";
        assert_eq!(last_comment(text).as_deref(), Some("last.map"));
        assert_eq!(last_comment("f(); // sourceMappingURL=x.map"), None);
        assert_eq!(last_comment("f();"), None);
    }

    #[test]
    fn sources_resolve_against_the_root_and_the_map() {
        let base = Url::parse("https://example.test/dist/app.js.map").unwrap();
        let cases = [
            ("", "../src/a.js", "https://example.test/src/a.js"),
            ("lib", "a.js", "https://example.test/dist/lib/a.js"),
            ("/root/", "a.js", "https://example.test/root/a.js"),
            ("https://cdn.test/s", "a.js", "https://cdn.test/s/a.js"),
            ("lib", "webpack://app/a.js", "webpack://app/a.js"),
        ];
        for (root, source, want) in cases {
            assert_eq!(resolve_source(&base, root, source), want, "{root} {source}");
        }
    }

    #[test]
    fn long_data_urls_are_cut_in_warnings() {
        let url = format!("data:application/json;base64,{}", "A".repeat(100));
        assert_eq!(shorten(&url).chars().count(), 41);
        assert_eq!(shorten("file:///a.map"), "file:///a.map");
    }
}
