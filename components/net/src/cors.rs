//! The CORS protocol's vocabulary (<https://fetch.spec.whatwg.org/#http-cors-protocol>):
//! methods and request headers a page may send without asking, the ones it may never set,
//! and the CORS-preflight cache (<https://fetch.spec.whatwg.org/#cors-preflight-cache>).
//!
//! The predicates are the one implementation of these rules: main fetch uses them to decide on
//! a preflight, and the prelude's `Headers` guards reach them through `JsprofHost.headerInfo`.
//! Names and values are byte sequences (WebIDL `ByteString`s).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use url::Url;

use crate::mime::parse_mime_type;

/// <https://fetch.spec.whatwg.org/#http-whitespace-byte>
fn is_http_whitespace_byte(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | b' ')
}

/// A token (<https://httpwg.org/specs/rfc9110.html#tokens>): what a method and a header
/// name are.
pub fn is_token(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// <https://fetch.spec.whatwg.org/#header-name>
pub fn is_header_name(name: &[u8]) -> bool {
    is_token(name)
}

/// <https://fetch.spec.whatwg.org/#header-value>: no leading or trailing tab or space, no
/// NUL, LF or CR.
pub fn is_header_value(value: &[u8]) -> bool {
    let edge = |b: Option<&u8>| b.is_some_and(|&b| b == b'\t' || b == b' ');
    !edge(value.first())
        && !edge(value.last())
        && !value.iter().any(|&b| matches!(b, 0 | b'\n' | b'\r'))
}

/// Normalises a header value (<https://fetch.spec.whatwg.org/#concept-header-value-normalize>):
/// without leading and trailing HTTP whitespace bytes.
pub fn normalize_header_value(value: &[u8]) -> &[u8] {
    let start = value
        .iter()
        .position(|&b| !is_http_whitespace_byte(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|&b| !is_http_whitespace_byte(b))
        .map_or(start, |i| i + 1);
    &value[start..end]
}

/// <https://fetch.spec.whatwg.org/#forbidden-method>: `CONNECT`, `TRACE`, `TRACK`, in any case.
pub fn is_forbidden_method(method: &[u8]) -> bool {
    [&b"CONNECT"[..], b"TRACE", b"TRACK"]
        .iter()
        .any(|m| m.eq_ignore_ascii_case(method))
}

/// Normalises a method (<https://fetch.spec.whatwg.org/#concept-method-normalize>): the six
/// common ones in uppercase, any other as it is.
pub fn normalize_method(method: &str) -> String {
    for m in ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"] {
        if m.eq_ignore_ascii_case(method) {
            return m.to_owned();
        }
    }
    method.to_owned()
}

/// <https://fetch.spec.whatwg.org/#cors-safelisted-method>: exactly `GET`, `HEAD` or `POST`.
pub fn is_cors_safelisted_method(method: &str) -> bool {
    matches!(method, "GET" | "HEAD" | "POST")
}

fn name_is(name: &[u8], list: &[&str]) -> bool {
    list.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name))
}

/// <https://fetch.spec.whatwg.org/#forbidden-request-header>
pub fn is_forbidden_request_header(name: &[u8], value: &[u8]) -> bool {
    // Step 1. A name of the list.
    const FORBIDDEN: [&str; 21] = [
        "Accept-Charset",
        "Accept-Encoding",
        "Access-Control-Request-Headers",
        "Access-Control-Request-Method",
        "Connection",
        "Content-Length",
        "Cookie",
        "Cookie2",
        "Date",
        "DNT",
        "Expect",
        "Host",
        "Keep-Alive",
        "Origin",
        "Referer",
        "Set-Cookie",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Via",
    ];
    if name_is(name, &FORBIDDEN) {
        return true;
    }
    // Step 2. `proxy-` and `sec-` names.
    let lower = name.to_ascii_lowercase();
    if lower.starts_with(b"proxy-") || lower.starts_with(b"sec-") {
        return true;
    }
    // Step 3. A method override naming a forbidden method.
    if name_is(
        name,
        &[
            "X-HTTP-Method",
            "X-HTTP-Method-Override",
            "X-Method-Override",
        ],
    ) {
        let decoded: String = value.iter().map(|&b| char::from(b)).collect();
        return crate::mime::split_header_value(&decoded).iter().any(|m| {
            let bytes: Vec<u8> = m.chars().map(|c| c as u8).collect();
            is_forbidden_method(&bytes)
        });
    }
    // Step 4.
    false
}

/// <https://fetch.spec.whatwg.org/#forbidden-response-header-name>
pub fn is_forbidden_response_header_name(name: &[u8]) -> bool {
    name_is(name, &["Set-Cookie", "Set-Cookie2"])
}

/// <https://fetch.spec.whatwg.org/#cors-unsafe-request-header-byte>
fn is_cors_unsafe_byte(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b"\"():<>?@[\\]{}\x7f".contains(&b)
}

/// <https://fetch.spec.whatwg.org/#cors-safelisted-request-header>
pub fn is_cors_safelisted_request_header(name: &[u8], value: &[u8]) -> bool {
    // Step 1. A value longer than 128 bytes is not safelisted.
    if value.len() > 128 {
        return false;
    }
    // Step 2. By the name, in lowercase.
    match name.to_ascii_lowercase().as_slice() {
        b"accept" => !value.iter().copied().any(is_cors_unsafe_byte),
        b"accept-language" | b"content-language" => value
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b" *,-.;=".contains(&b)),
        b"content-type" => {
            if value.iter().copied().any(is_cors_unsafe_byte) {
                return false;
            }
            let decoded: String = value.iter().map(|&b| char::from(b)).collect();
            parse_mime_type(&decoded).is_some_and(|m| {
                matches!(
                    m.essence().as_str(),
                    "application/x-www-form-urlencoded" | "multipart/form-data" | "text/plain"
                )
            })
        }
        // A single range with a first position (a suffix range is not safelisted).
        b"range" => parse_single_range(value).is_some_and(|(start, _)| start.is_some()),
        _ => false,
    }
}

/// Parses a single range header value (<https://fetch.spec.whatwg.org/#simple-range-header-value>),
/// whitespace not allowed: `bytes=START-END`, either part optional but not both.
fn parse_single_range(value: &[u8]) -> Option<(Option<u64>, Option<u64>)> {
    // Steps 1-7. "bytes=".
    let rest = value.strip_prefix(b"bytes=")?;
    // Steps 8-15. Digits, "-", digits, and nothing after.
    let dash = rest.iter().position(|&b| b == b'-')?;
    let (start, end) = (&rest[..dash], &rest[dash + 1..]);
    let number = |digits: &[u8]| -> Option<Option<u64>> {
        if digits.is_empty() {
            return Some(None);
        }
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // Too large for u64: still a number; saturate.
        Some(Some(
            std::str::from_utf8(digits)
                .ok()?
                .parse()
                .unwrap_or(u64::MAX),
        ))
    };
    let (start, end) = (number(start)?, number(end)?);
    // Steps 16-18.
    match (start, end) {
        (None, None) => None,
        (Some(s), Some(e)) if s > e => None,
        range => Some(range),
    }
}

/// <https://fetch.spec.whatwg.org/#no-cors-safelisted-request-header-name>
pub fn is_no_cors_safelisted_request_header_name(name: &[u8]) -> bool {
    name_is(
        name,
        &[
            "Accept",
            "Accept-Language",
            "Content-Language",
            "Content-Type",
        ],
    )
}

/// <https://fetch.spec.whatwg.org/#no-cors-safelisted-request-header>
pub fn is_no_cors_safelisted_request_header(name: &[u8], value: &[u8]) -> bool {
    is_no_cors_safelisted_request_header_name(name)
        && is_cors_safelisted_request_header(name, value)
}

/// <https://fetch.spec.whatwg.org/#privileged-no-cors-request-header-name>
pub fn is_privileged_no_cors_request_header_name(name: &[u8]) -> bool {
    name_is(name, &["Range"])
}

/// <https://fetch.spec.whatwg.org/#cors-non-wildcard-request-header-name>: `Authorization`,
/// which `Access-Control-Allow-Headers: *` never covers.
pub fn is_cors_non_wildcard_request_header_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("Authorization")
}

/// The CORS-unsafe request-header names of a header list
/// (<https://fetch.spec.whatwg.org/#cors-unsafe-request-header-names>), lowercase, sorted,
/// each once: what a preflight asks the server to allow.
pub fn cors_unsafe_request_header_names<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Vec<String> {
    // Steps 1-2.
    let mut unsafe_names = Vec::new();
    let mut potentially_unsafe = Vec::new();
    let mut safelist_value_size = 0usize;
    for (name, value) in headers {
        if is_cors_safelisted_request_header(name.as_bytes(), value) {
            potentially_unsafe.push(name.to_ascii_lowercase());
            safelist_value_size += value.len();
        } else {
            unsafe_names.push(name.to_ascii_lowercase());
        }
    }
    // Step 3. More than 1024 bytes of safelisted values make them all unsafe.
    if safelist_value_size > 1024 {
        unsafe_names.extend(potentially_unsafe);
    }
    // Step 4. Convert to a sorted-lowercase set.
    unsafe_names.sort();
    unsafe_names.dedup();
    unsafe_names
}

/// The values of a list-valued header (`#method`, `#field-name`) as *extracting header list
/// values* gives them (<https://fetch.spec.whatwg.org/#extract-header-list-values>): `Ok(None)`
/// without the header, `Err` if an element is not a token. Empty elements are allowed (the
/// `#rule`) and skipped.
pub fn extract_token_list(value: Option<String>) -> Result<Option<Vec<String>>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    let mut items = Vec::new();
    for item in value.split(',') {
        let item = item.trim_matches([' ', '\t']);
        if item.is_empty() {
            continue;
        }
        if !is_token(item.as_bytes()) {
            return Err(format!("'{item}' is not a valid method or header name"));
        }
        items.push(item.to_owned());
    }
    Ok(Some(items))
}

/// The default max-age of a preflight's cache entries, when the response gives none
/// (<https://fetch.spec.whatwg.org/#http-access-control-max-age>).
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(5);

/// The longest a preflight's answer is cached, whatever `Access-Control-Max-Age` says: two
/// hours, Chromium's limit (Firefox's is a day).
pub const MAX_AGE_LIMIT: Duration = Duration::from_secs(7200);

/// How many entries the cache keeps at most: a page that preflights without end (a new URL
/// each time, a year of max-age) replaces its oldest entries instead of growing the process.
const MAX_ENTRIES: usize = 4096;

/// The max-age a preflight response gives (<https://fetch.spec.whatwg.org/#cors-preflight-fetch-0>,
/// steps 7.8-7.10): `Access-Control-Max-Age` if it is one `delta-seconds`, capped at
/// [`MAX_AGE_LIMIT`]; [`DEFAULT_MAX_AGE`] if it is absent or not a number.
pub fn max_age(values: &[&str]) -> Duration {
    match values {
        [one] if !one.is_empty() && one.bytes().all(|b| b.is_ascii_digit()) => {
            // A number too large for u64 is over the limit anyway.
            let secs = one.parse::<u64>().unwrap_or(u64::MAX);
            Duration::from_secs(secs).min(MAX_AGE_LIMIT)
        }
        _ => DEFAULT_MAX_AGE,
    }
}

/// A cache entry (<https://fetch.spec.whatwg.org/#concept-cache>): one method or one header
/// name a server allowed for (origin, URL, credentials), until `expires`.
#[derive(Debug)]
struct Entry {
    origin: String,
    url: Url,
    credentials: bool,
    expires: Instant,
    method: Option<String>,
    header: Option<String>,
}

/// The CORS-preflight cache. jsprof has one network partition (the process), so entries are
/// keyed by the byte-serialised request origin, the URL and the credentials flag.
#[derive(Debug, Default)]
pub struct PreflightCache {
    entries: Mutex<Vec<Entry>>,
}

/// What a request is looked up by: its serialised origin, current URL and whether its
/// credentials mode is `include`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheKey<'a> {
    pub origin: &'a str,
    pub url: &'a Url,
    pub credentials: bool,
}

impl Entry {
    fn matches(&self, key: CacheKey<'_>, now: Instant) -> bool {
        self.expires > now
            && self.origin == key.origin
            && self.url == *key.url
            && self.credentials == key.credentials
    }
}

impl PreflightCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // A panic while holding the lock leaves a list of plain values: still usable.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A method cache entry match (<https://fetch.spec.whatwg.org/#concept-cache-match-method>):
    /// an entry for `method`, or for `*` when the request is without credentials.
    pub(crate) fn method_match(&self, key: CacheKey<'_>, method: &str) -> bool {
        let now = Instant::now();
        self.lock().iter().any(|e| {
            e.matches(key, now)
                && e.method
                    .as_deref()
                    .is_some_and(|m| m == method || (m == "*" && !key.credentials))
        })
    }

    /// A header-name cache entry match (<https://fetch.spec.whatwg.org/#concept-cache-match-header>):
    /// an entry for `name` in any case, or for `*` when the request is without credentials
    /// and `name` is not `Authorization`.
    pub(crate) fn header_match(&self, key: CacheKey<'_>, name: &str) -> bool {
        let now = Instant::now();
        self.lock().iter().any(|e| {
            e.matches(key, now)
                && e.header.as_deref().is_some_and(|h| {
                    h.eq_ignore_ascii_case(name)
                        || (h == "*"
                            && !key.credentials
                            && !is_cors_non_wildcard_request_header_name(name))
                })
        })
    }

    /// Records what a preflight allowed (steps 7.12-7.15 of the CORS-preflight fetch): each
    /// method and header name, for `max_age` from now (a matching entry gets the new max-age).
    pub(crate) fn store(
        &self,
        key: CacheKey<'_>,
        max_age: Duration,
        methods: &[String],
        headers: &[String],
    ) {
        let now = Instant::now();
        let expires = now + max_age;
        let mut entries = self.lock();
        entries.retain(|e| e.expires > now);
        let items = methods
            .iter()
            .map(|m| (Some(m.clone()), None))
            .chain(headers.iter().map(|h| (None, Some(h.clone()))));
        for (method, header) in items {
            let existing = entries.iter_mut().find(|e| {
                e.matches(key, now)
                    && match (&method, &header) {
                        (Some(m), _) => e.method.as_ref() == Some(m),
                        (_, Some(h)) => {
                            e.header.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(h))
                        }
                        _ => false,
                    }
            });
            match existing {
                Some(e) => e.expires = expires,
                None => entries.push(Entry {
                    origin: key.origin.to_owned(),
                    url: key.url.clone(),
                    credentials: key.credentials,
                    expires,
                    method,
                    header,
                }),
            }
        }
        if entries.len() > MAX_ENTRIES {
            let excess = entries.len() - MAX_ENTRIES;
            entries.drain(..excess);
        }
    }

    /// Clears the cache entries of a request (<https://fetch.spec.whatwg.org/#concept-cache-clear>):
    /// after a CORS request with a preflight failed.
    pub(crate) fn clear(&self, key: CacheKey<'_>) {
        self.lock()
            .retain(|e| !(e.origin == key.origin && e.url == *key.url));
    }

    /// How many live entries the cache holds (for tests).
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.lock().iter().filter(|e| e.expires > now).count()
    }

    /// Whether it holds no live entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safelisted_headers() {
        let ok = |n: &str, v: &str| is_cors_safelisted_request_header(n.as_bytes(), v.as_bytes());
        assert!(ok("Accept", "*/*"));
        assert!(!ok("accept", "\""));
        assert!(!ok("accept", &"0".repeat(129)));
        assert!(ok("Accept-Language", "fr, en;q=0.5"));
        assert!(!ok("accept-language", "@"));
        assert!(!ok("content-language", "\u{1}"));
        assert!(ok("Content-Type", "Text/Plain;charset=utf-8"));
        assert!(ok("content-type", "multipart/form-data; boundary=x"));
        assert!(!ok("content-type", "text/html"));
        assert!(!ok("content-type", "text/plain; x=\"a\""));
        assert!(ok("range", "bytes=0-"));
        assert!(ok("range", "bytes=5-10"));
        assert!(!ok("range", "bytes=-5"));
        assert!(!ok("range", "bytes 0-"));
        assert!(!ok("range", "bytes=10-5"));
        assert!(!ok("range", "bytes=0-1,3-4"));
        assert!(!ok("x-custom", "1"));
        assert!(!ok("authorization", "basics"));
    }

    #[test]
    fn unsafe_names_are_sorted_lowercase_and_include_big_safelisted_values() {
        let h = [
            ("X-B", &b"1"[..]),
            ("accept", b"*/*"),
            ("x-a", b"2"),
            ("X-a", b"3"),
        ];
        assert_eq!(cors_unsafe_request_header_names(h), ["x-a", "x-b"]);
        let long = [b'a'; 128];
        let many: Vec<(&str, &[u8])> = (0..9).map(|_| ("accept", &long[..])).collect();
        assert_eq!(cors_unsafe_request_header_names(many), ["accept"]);
    }

    #[test]
    fn forbidden_requests() {
        assert!(is_forbidden_request_header(b"Content-Length", b"1"));
        assert!(is_forbidden_request_header(b"sec-foo", b""));
        assert!(is_forbidden_request_header(b"Proxy-X", b""));
        assert!(is_forbidden_request_header(
            b"x-http-method-override",
            b"get, trace"
        ));
        assert!(!is_forbidden_request_header(
            b"x-http-method-override",
            b"PUT"
        ));
        assert!(!is_forbidden_request_header(b"x-custom", b"1"));
        assert!(is_forbidden_method(b"track"));
        assert!(!is_forbidden_method(b"GET"));
        assert_eq!(normalize_method("pOsT"), "POST");
        assert_eq!(normalize_method("patch"), "patch");
        assert!(is_forbidden_response_header_name(b"set-cookie2"));
    }

    #[test]
    fn values_and_names() {
        assert!(is_header_value(b"a b"));
        assert!(is_header_value(b""));
        assert!(!is_header_value(b" a"));
        assert!(!is_header_value(b"a\0"));
        assert!(!is_header_name(b"a b"));
        assert!(!is_header_name(b""));
        assert_eq!(normalize_header_value(b"\r\n a \t"), b"a");
        assert_eq!(normalize_header_value(b" \n "), b"");
    }

    #[test]
    fn max_ages_and_lists() {
        assert_eq!(max_age(&["600"]), Duration::from_secs(600));
        assert_eq!(max_age(&["999999999999999999999999"]), MAX_AGE_LIMIT);
        assert_eq!(max_age(&[]), DEFAULT_MAX_AGE);
        assert_eq!(max_age(&["1", "2"]), DEFAULT_MAX_AGE);
        assert_eq!(max_age(&["-1"]), DEFAULT_MAX_AGE);
        assert_eq!(
            extract_token_list(Some("PUT, ,patch".into())),
            Ok(Some(vec!["PUT".to_owned(), "patch".to_owned()]))
        );
        assert!(extract_token_list(Some("Bad method name".into())).is_err());
        assert_eq!(extract_token_list(None), Ok(None));
    }

    #[test]
    fn the_cache_matches_by_origin_url_credentials_and_wildcards() {
        let cache = PreflightCache::default();
        let url = Url::parse("http://a.test/x").unwrap();
        let other = Url::parse("http://a.test/y").unwrap();
        let key = CacheKey {
            origin: "http://b.test",
            url: &url,
            credentials: false,
        };
        let with_credentials = CacheKey {
            credentials: true,
            ..key
        };
        cache.store(
            key,
            Duration::from_secs(60),
            &["PUT".into(), "*".into()],
            &["X-Test".into(), "*".into()],
        );
        assert!(cache.method_match(key, "PUT"));
        assert!(cache.method_match(key, "DELETE"), "* without credentials");
        assert!(!cache.method_match(with_credentials, "PUT"));
        assert!(cache.header_match(key, "x-test"));
        assert!(cache.header_match(key, "x-other"), "* without credentials");
        assert!(
            !cache.header_match(key, "Authorization"),
            "never covered by *"
        );
        assert!(!cache.method_match(CacheKey { url: &other, ..key }, "PUT"));
        assert!(!cache.method_match(
            CacheKey {
                origin: "null",
                ..key
            },
            "PUT"
        ));
        cache.clear(key);
        assert!(cache.is_empty());
        // A max-age of 0 caches nothing usable.
        cache.store(key, Duration::ZERO, &["PUT".into()], &[]);
        assert!(!cache.method_match(key, "PUT"));
    }
}
