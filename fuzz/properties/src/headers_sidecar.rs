//! `.headers` sidecar files (`Name: value` per line), which give `file:` pages their
//! response headers: `Document-Policy`, COOP/COEP, CORS.

use jsprof_net::Headers;

/// The input is a sidecar file's text.
pub fn headers_sidecar(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = Headers::parse(&text);
    assert_eq!(parsed, Headers::parse(&text), "deterministic: {text:?}");
    // The lines as `str::lines` splits them (at "\n", dropping one "\r" before it), and the
    // ones with something on them.
    let lines: Vec<&str> = text.lines().collect();
    let filled: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, *l))
        .collect();
    match parsed {
        Ok(headers) => check_ok(&headers, &filled),
        Err(e) => check_err(&text, &e, &lines),
    }
}

fn check_ok(headers: &Headers, filled: &[(usize, &str)]) {
    let entries: Vec<(&str, &str)> = headers.iter().collect();
    assert_eq!(entries.len(), filled.len(), "one header per non-blank line");
    for (&(name, value), &(_, line)) in entries.iter().zip(filled) {
        assert!(!name.is_empty(), "empty name from {line:?}");
        assert!(
            !name.contains(char::is_whitespace),
            "whitespace in name {name:?}"
        );
        assert!(!name.contains(':'), "a name ends at the first colon");
        assert_eq!(value, value.trim(), "values are trimmed");
        assert!(!value.contains('\n'));
        // The header is the line's text around its first colon.
        let (n, v) = line.split_once(':').expect("an accepted line has a colon");
        assert_eq!(n.trim(), name);
        assert_eq!(v.trim(), value);
    }
    for &(name, _) in &entries {
        // Lookup is ASCII case-insensitive and gives the first value; all values combine
        // with ", " in order.
        let same: Vec<&str> = entries
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| v)
            .collect();
        for variant in [
            name.to_owned(),
            name.to_ascii_lowercase(),
            name.to_ascii_uppercase(),
        ] {
            assert_eq!(headers.get(&variant), Some(same[0]), "get({variant:?})");
            assert_eq!(
                headers.get_combined(&variant),
                Some(same.join(", ")),
                "get_combined({variant:?})"
            );
        }
    }
    // Written back one per line, the headers parse to themselves.
    let written: String = entries.iter().map(|(n, v)| format!("{n}: {v}\n")).collect();
    assert_eq!(
        Headers::parse(&written).as_ref(),
        Ok(headers),
        "round trip through {written:?}"
    );
}

fn check_err(text: &str, error: &str, lines: &[&str]) {
    // The error names the first bad line, 1-based, and every line before it is good.
    let n: usize = error
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("an error names its line: {error:?}"));
    assert!(
        (1..=lines.len()).contains(&n),
        "line {n} of {}",
        lines.len()
    );
    let bad = lines[n - 1];
    let name = bad.split_once(':').map(|(name, _)| name.trim());
    assert!(
        name.is_none_or(|name| name.is_empty() || name.contains(char::is_whitespace)),
        "line {n} ({bad:?}) is good, yet: {error}"
    );
    let good: String = lines[..n - 1].iter().map(|l| format!("{l}\n")).collect();
    assert!(
        Headers::parse(&good).is_ok(),
        "the lines before line {n} of {text:?} are good"
    );
}
