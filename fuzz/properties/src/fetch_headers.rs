//! The Fetch standard's header rules and MIME types (`jsprof_net::cors`, `jsprof_net::mime`),
//! which see what a page sets (`Headers`, `setRequestHeader`, a `Content-Type`) and what a
//! server answers (`Content-Type`, a preflight's `Access-Control-Allow-*` and `-Max-Age`).
//!
//! The input is a header: its name up to the first newline, its value (bytes) after it.

use std::time::Duration;

use jsprof_net::cors;
use jsprof_net::mime::{extract_mime_type, parse_mime_type, split_header_value, MimeType};

/// Header values are byte sequences: decoded one code point a byte, as Fetch does.
fn isomorphic(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

pub fn fetch_headers(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n');
    let (name, value) = match split {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&data[..0], data),
    };
    let text = isomorphic(value);
    mime(&text);
    splitting(&text);
    rules(name, value);
    preflight_answer(&text);
}

/// A parsed MIME type is well formed, and serialising then parsing gives it back.
fn mime(text: &str) {
    let parsed = parse_mime_type(text);
    assert_eq!(parsed, parse_mime_type(text), "deterministic");
    if let Some(m) = &parsed {
        well_formed(m);
        let again = parse_mime_type(&m.serialize())
            .unwrap_or_else(|| panic!("{:?} does not parse again", m.serialize()));
        assert_eq!(&again, m, "{text:?} -> {:?}", m.serialize());
    }
    if let Some(m) = extract_mime_type(Some(text)) {
        well_formed(&m);
        assert_ne!(m.essence(), "*/*", "*/* is skipped");
    }
}

fn well_formed(m: &MimeType) {
    let token = |s: &str| !s.is_empty() && cors::is_token(s.as_bytes());
    assert!(token(&m.kind) && token(&m.subtype), "{m:?}");
    assert_eq!(m.essence(), m.essence().to_ascii_lowercase());
    for (i, (name, value)) in m.parameters.iter().enumerate() {
        assert!(token(name) && *name == name.to_ascii_lowercase(), "{m:?}");
        assert!(
            value
                .chars()
                .all(|c| matches!(c, '\t' | ' '..='~' | '\u{80}'..='\u{ff}')),
            "{m:?}"
        );
        assert!(
            !m.parameters[..i].iter().any(|(n, _)| n == name),
            "each name once: {m:?}"
        );
    }
}

/// Splitting at commas outside quotes: trimmed pieces, and without quotes exactly `split(',')`.
fn splitting(text: &str) {
    let pieces = split_header_value(text);
    assert!(!pieces.is_empty());
    for p in &pieces {
        assert_eq!(p.as_str(), p.trim_matches([' ', '\t']), "{text:?}");
    }
    if !text.contains('"') {
        let plain: Vec<&str> = text
            .split(',')
            .map(|p| p.trim_matches([' ', '\t']))
            .collect();
        assert_eq!(pieces, plain, "{text:?}");
    }
}

/// The request-header rules agree with each other.
fn rules(name: &[u8], value: &[u8]) {
    let normalized = cors::normalize_header_value(value);
    assert_eq!(
        cors::normalize_header_value(normalized),
        normalized,
        "idempotent"
    );
    let is_ws = |b: Option<&u8>| b.is_some_and(|b| b"\t\n\r ".contains(b));
    assert!(!is_ws(normalized.first()) && !is_ws(normalized.last()));
    assert_eq!(
        cors::is_header_value(normalized),
        !normalized.iter().any(|b| b"\0\n\r".contains(b))
    );
    let safelisted = cors::is_cors_safelisted_request_header(name, value);
    if safelisted {
        assert!(value.len() <= 128);
        let lower = name.to_ascii_lowercase();
        assert!(
            [
                &b"accept"[..],
                b"accept-language",
                b"content-language",
                b"content-type",
                b"range"
            ]
            .contains(&lower.as_slice()),
            "{name:?}"
        );
    }
    if cors::is_no_cors_safelisted_request_header(name, value) {
        assert!(safelisted);
    }
    let upper = name.to_ascii_uppercase();
    assert_eq!(
        cors::is_forbidden_method(name),
        [&b"CONNECT"[..], b"TRACE", b"TRACK"].contains(&upper.as_slice())
    );
    if let Ok(method) = std::str::from_utf8(name) {
        let normalized = cors::normalize_method(method);
        assert!(normalized.eq_ignore_ascii_case(method));
    }
    // The names a preflight asks for: sorted, once each, lowercase, from the list.
    if let Ok(n) = std::str::from_utf8(name) {
        let list = [(n, value), ("X-Other", &b"1"[..]), (n, &b"*/*"[..])];
        let names = cors::cors_unsafe_request_header_names(list);
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        for u in &names {
            assert_eq!(*u, u.to_ascii_lowercase());
            assert!(list.iter().any(|(n, _)| n.eq_ignore_ascii_case(u)));
        }
        assert!(names.iter().any(|u| u == "x-other"));
    }
}

/// A preflight's answer: token lists, and a max-age that never passes the cap.
fn preflight_answer(text: &str) {
    match cors::extract_token_list(Some(text.to_owned())) {
        Ok(Some(items)) => {
            for item in items {
                assert!(cors::is_token(item.as_bytes()), "{item:?}");
            }
        }
        Ok(None) => panic!("a value is a list"),
        Err(_) => assert!(
            text.split(',')
                .map(|p| p.trim_matches([' ', '\t']))
                .any(|p| !p.is_empty() && !cors::is_token(p.as_bytes())),
            "refused {text:?}"
        ),
    }
    let age = cors::max_age(&[text]);
    assert!(age <= cors::MAX_AGE_LIMIT);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        assert_eq!(age, cors::DEFAULT_MAX_AGE, "{text:?}");
    } else if text.len() < 5 {
        assert_eq!(
            age,
            Duration::from_secs(text.parse().unwrap_or(0)).min(cors::MAX_AGE_LIMIT)
        );
    }
}
