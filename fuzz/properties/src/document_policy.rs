//! `Document-Policy` (`js-profiling`, `js-profiling-mode`) and `Cross-Origin-Opener-Policy` /
//! `Cross-Origin-Embedder-Policy`: header values a server chooses, all Structured Fields.

use jsprof_page_model::policy::{cross_origin_isolated, js_profiling, Init, ProfilingPolicy};
use sfv::{BareItem, Dictionary, FieldType, Item, ListEntry, Parser};

use ProfilingPolicy::{Allowed, Disallowed};

/// The input is one `Document-Policy` value; split at its first line break, it is also a
/// COOP value and a COEP value (tried in both orders, and each alone).
pub fn document_policy(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_js_profiling(&text);
    let (a, b) = text.split_once('\n').unwrap_or((&text, ""));
    for (coop, coep) in [(a, b), (b, a), (&text, &text)] {
        check_isolation(coop, coep);
    }
}

/// What RFC 9651 and the spec say the policy of `header` is: the value of
/// `js-profiling-mode` when the member is there (the token `eager` or `lazy`, anything else
/// disables), else `js-profiling` as a boolean; a value that is not a Dictionary disables.
fn expected_policy(header: &str) -> ProfilingPolicy {
    let Ok(dict) = Parser::new(header).parse::<Dictionary>() else {
        return Disallowed;
    };
    policy_of(&dict)
}

fn policy_of(dict: &Dictionary) -> ProfilingPolicy {
    match dict.get("js-profiling-mode") {
        Some(ListEntry::Item(Item {
            bare_item: BareItem::Token(t),
            ..
        })) => match t.as_str() {
            "eager" => Allowed(Init::Eager),
            "lazy" => Allowed(Init::Lazy),
            _ => Disallowed,
        },
        Some(_) => Disallowed,
        None => match dict.get("js-profiling") {
            Some(ListEntry::Item(Item {
                bare_item: BareItem::Boolean(true),
                ..
            })) => Allowed(Init::Eager),
            _ => Disallowed,
        },
    }
}

fn check_js_profiling(text: &str) {
    let policy = js_profiling(Some(text));
    assert_eq!(policy, js_profiling(Some(text)), "deterministic: {text:?}");
    assert_eq!(js_profiling(None), Disallowed);
    assert_eq!(policy, expected_policy(text), "the policy of {text:?}");

    // Leading and trailing spaces are not part of a field value (RFC 9651, 4.2).
    assert_eq!(
        js_profiling(Some(&format!("  {text} "))),
        policy,
        "{text:?}"
    );

    let Ok(dict) = Parser::new(text).parse::<Dictionary>() else {
        return;
    };
    // The same dictionary, serialised and parsed again, gives the same policy.
    let serialized = dict.serialize().unwrap_or_default();
    assert_eq!(
        js_profiling(Some(&serialized)),
        policy,
        "{text:?} serialised as {serialized:?}"
    );
    if dict.is_empty() {
        assert_eq!(policy, Disallowed);
        return;
    }
    // Another field line, combined with ", ": an unrelated member changes nothing, and a
    // later `js-profiling-mode` wins (the last of duplicate keys does).
    let more = |member: &str| js_profiling(Some(&format!("{text}, {member}")));
    assert_eq!(more("x-fuzz-unrelated=?0"), policy, "{text:?}");
    assert_eq!(
        more("js-profiling-mode=lazy"),
        Allowed(Init::Lazy),
        "{text:?}"
    );
    assert_eq!(
        more("js-profiling-mode=eager"),
        Allowed(Init::Eager),
        "{text:?}"
    );
    assert_eq!(more("js-profiling-mode=\"lazy\""), Disallowed, "{text:?}");
    if !dict.contains_key("js-profiling-mode") {
        assert_eq!(more("js-profiling"), Allowed(Init::Eager), "{text:?}");
        assert_eq!(more("js-profiling=?0"), Disallowed, "{text:?}");
    }
    // Keys are lowercase: the same header in uppercase is not a policy that allows.
    if policy.allows() {
        assert_eq!(
            js_profiling(Some(&text.to_ascii_uppercase())),
            Disallowed,
            "{text:?}"
        );
    }
}

/// The token of an Item-typed field value, if it is one.
fn item_token(value: &str) -> Option<String> {
    let item = Parser::new(value).parse::<Item>().ok()?;
    item.bare_item.as_token().map(|t| t.as_str().to_owned())
}

fn check_isolation(coop: &str, coep: &str) {
    let isolated = cross_origin_isolated(Some(coop), Some(coep));
    assert_eq!(
        isolated,
        cross_origin_isolated(Some(coop), Some(coep)),
        "deterministic"
    );
    let expected = item_token(coop).as_deref() == Some("same-origin")
        && matches!(
            item_token(coep).as_deref(),
            Some("require-corp" | "credentialless")
        );
    assert_eq!(isolated, expected, "COOP {coop:?}, COEP {coep:?}");
    // Both headers are needed.
    assert!(!cross_origin_isolated(None, Some(coep)));
    assert!(!cross_origin_isolated(Some(coop), None));
    if !isolated {
        return;
    }
    // An accepted value is the token, then parameters, between optional spaces.
    for (value, token) in [
        (coop, "same-origin"),
        (coep, item_token(coep).unwrap().as_str()),
    ] {
        let first = value.split(';').next().unwrap_or_default();
        assert_eq!(first.trim_matches(' '), token, "{value:?}");
    }
    // Tokens and parameter keys are case-sensitive.
    assert!(!cross_origin_isolated(
        Some(&coop.to_ascii_uppercase()),
        Some(coep)
    ));
    assert!(!cross_origin_isolated(
        Some(coop),
        Some(&coep.to_ascii_uppercase())
    ));
    // Two field lines make a List, not an Item.
    assert!(!cross_origin_isolated(
        Some(&format!("{coop}, same-origin")),
        Some(coep)
    ));
    // More parameters are allowed.
    let with_report = format!("{};report-to=\"fuzz\"", coop.trim_end_matches(' '));
    assert!(
        cross_origin_isolated(Some(&with_report), Some(coep)),
        "{with_report:?}"
    );
}
