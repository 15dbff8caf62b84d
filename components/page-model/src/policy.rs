//! Document-Policy for the JS Self-Profiling API (BRIEF decision 2).
//!
//! <https://wicg.github.io/js-self-profiling/#document-policy>: the `Document-Policy` response
//! header is a Structured Field Dictionary (RFC 9651), parsed with the `sfv` crate.
//! `js-profiling` bare or `?1` enables profiling, `?0` disables it; `js-profiling-mode=eager`
//! or `=lazy` enables it and takes precedence; any other mode, or a header that does not
//! parse, means disabled. Eager initialises sampling support when the document is created,
//! lazy when the first `Profiler` is constructed; the deprecated boolean is eager.
//!
//! Also the `Cross-Origin-Opener-Policy` / `Cross-Origin-Embedder-Policy` pair that decides
//! whether a document is cross-origin isolated (and so gets 5 µs timestamps): both are
//! Structured Field Items, parsed here with the same crate.

use sfv::{BareItem, Dictionary, Item, ListEntry, Parser};

/// When sampling support is initialised for a document that allows profiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    Eager,
    Lazy,
}

/// The document's policy for `js-profiling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfilingPolicy {
    Disallowed,
    Allowed(Init),
}

impl ProfilingPolicy {
    pub fn allows(self) -> bool {
        matches!(self, ProfilingPolicy::Allowed(_))
    }
}

/// The policy given by a `Document-Policy` header value (all fields combined with ", "), or
/// by no header at all.
pub fn js_profiling(header: Option<&str>) -> ProfilingPolicy {
    let Some(header) = header else {
        return ProfilingPolicy::Disallowed;
    };
    let Ok(dict) = Parser::new(header).parse::<Dictionary>() else {
        return ProfilingPolicy::Disallowed;
    };
    let item = |name: &str| {
        dict.iter()
            .find(|(k, _)| k.as_str() == name)
            .and_then(|(_, v)| match v {
                ListEntry::Item(item) => Some(&item.bare_item),
                ListEntry::InnerList(_) => None,
            })
    };
    let present = |name: &str| dict.iter().any(|(k, _)| k.as_str() == name);
    if present("js-profiling-mode") {
        return match item("js-profiling-mode")
            .and_then(BareItem::as_token)
            .map(|t| t.as_str())
        {
            Some("eager") => ProfilingPolicy::Allowed(Init::Eager),
            Some("lazy") => ProfilingPolicy::Allowed(Init::Lazy),
            _ => ProfilingPolicy::Disallowed,
        };
    }
    match item("js-profiling").and_then(BareItem::as_boolean) {
        Some(true) => ProfilingPolicy::Allowed(Init::Eager),
        _ => ProfilingPolicy::Disallowed,
    }
}

/// Whether a response's `Cross-Origin-Opener-Policy` and `Cross-Origin-Embedder-Policy`
/// header values (each all fields combined with ", ", or `None` when absent) make its
/// document cross-origin isolated
/// (<https://html.spec.whatwg.org/#concept-settings-object-cross-origin-isolated-capability>;
/// the secure-context half of that test is the caller's).
///
/// Both headers are Structured Field Items (RFC 9651): a token with optional parameters
/// (`same-origin; report-to="coop"`). Tokens are case-sensitive, so `Same-Origin` is not
/// `same-origin`; a value that does not parse as an Item (two combined fields, a string, an
/// inner list) is as if the header were absent
/// (<https://html.spec.whatwg.org/#obtain-coop>,
/// <https://html.spec.whatwg.org/#obtain-an-embedder-policy>).
pub fn cross_origin_isolated(coop: Option<&str>, coep: Option<&str>) -> bool {
    fn token(value: Option<&str>) -> Option<String> {
        let item = Parser::new(value?).parse::<Item>().ok()?;
        item.bare_item.as_token().map(|t| t.as_str().to_owned())
    }
    token(coop).as_deref() == Some("same-origin")
        && matches!(
            token(coep).as_deref(),
            Some("require-corp" | "credentialless")
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProfilingPolicy::*;

    #[test]
    fn the_policy_follows_decision_2() {
        assert_eq!(js_profiling(None), Disallowed);
        assert_eq!(js_profiling(Some("js-profiling")), Allowed(Init::Eager));
        assert_eq!(js_profiling(Some("js-profiling=?1")), Allowed(Init::Eager));
        assert_eq!(js_profiling(Some("js-profiling=?0")), Disallowed);
        assert_eq!(
            js_profiling(Some("js-profiling-mode=eager")),
            Allowed(Init::Eager)
        );
        assert_eq!(
            js_profiling(Some("js-profiling-mode=lazy")),
            Allowed(Init::Lazy)
        );
        // The mode takes precedence over the boolean, both ways.
        assert_eq!(
            js_profiling(Some("js-profiling=?0, js-profiling-mode=lazy")),
            Allowed(Init::Lazy)
        );
        assert_eq!(
            js_profiling(Some("js-profiling, js-profiling-mode=sometimes")),
            Disallowed
        );
        assert_eq!(
            js_profiling(Some("js-profiling-mode=\"eager\"")),
            Disallowed
        );
        assert_eq!(
            js_profiling(Some("other-feature=?1, js-profiling")),
            Allowed(Init::Eager)
        );
        assert_eq!(js_profiling(Some("js-profiling=1")), Disallowed);
        // A header that does not parse as a dictionary disables.
        assert_eq!(js_profiling(Some("js-profiling, ,")), Disallowed);
        assert_eq!(js_profiling(Some("JS-PROFILING")), Disallowed);
        assert_eq!(js_profiling(Some("")), Disallowed);
    }

    #[test]
    fn cross_origin_isolation_needs_both_structured_tokens() {
        let isolated = |coop, coep| cross_origin_isolated(Some(coop), Some(coep));
        assert!(isolated("same-origin", "require-corp"));
        assert!(isolated("same-origin", "credentialless"));
        // Parameters are allowed, and so is surrounding whitespace.
        assert!(isolated(
            "same-origin; report-to=\"coop\"",
            "require-corp;report-to=\"coep\""
        ));
        assert!(isolated("  same-origin  ", " credentialless"));
        // Either header missing.
        assert!(!cross_origin_isolated(None, Some("require-corp")));
        assert!(!cross_origin_isolated(Some("same-origin"), None));
        assert!(!cross_origin_isolated(None, None));
        // Other values.
        assert!(!isolated("same-origin-allow-popups", "require-corp"));
        assert!(!isolated("unsafe-none", "require-corp"));
        assert!(!isolated("same-origin", "unsafe-none"));
        // Tokens are case-sensitive.
        assert!(!isolated("Same-Origin", "require-corp"));
        assert!(!isolated("same-origin", "Require-Corp"));
        assert!(!isolated("SAME-ORIGIN", "CREDENTIALLESS"));
        // Not an Item: a string, an inner list, two combined fields, garbage.
        assert!(!isolated("\"same-origin\"", "require-corp"));
        assert!(!isolated("(same-origin)", "require-corp"));
        assert!(!isolated("same-origin, same-origin", "require-corp"));
        assert!(!isolated("same-origin", "require-corp, require-corp"));
        assert!(!isolated("same-origin;", "require-corp"));
        assert!(!isolated("same-origin ;a", "require-corp"));
        assert!(!isolated("same-origin;A=1", "require-corp"));
        assert!(!isolated("same-origin\u{0}", "require-corp"));
        assert!(!isolated("", "require-corp"));
        assert!(!isolated("sámé-origin", "require-corp"));
        assert!(!isolated("same-origin", "require-corp=?1"));
    }
}
