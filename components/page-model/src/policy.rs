//! Document-Policy for the JS Self-Profiling API (BRIEF decision 2).
//!
//! <https://wicg.github.io/js-self-profiling/#document-policy>: the `Document-Policy` response
//! header is a Structured Field Dictionary (RFC 9651), parsed with the `sfv` crate.
//! `js-profiling` bare or `?1` enables profiling, `?0` disables it; `js-profiling-mode=eager`
//! or `=lazy` enables it and takes precedence; any other mode, or a header that does not
//! parse, means disabled. Eager initialises sampling support when the document is created,
//! lazy when the first `Profiler` is constructed; the deprecated boolean is eager.

use sfv::{BareItem, Dictionary, ListEntry, Parser};

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
}
