//! The URL standard's API (<https://url.spec.whatwg.org/#api>) for the prelude's `URL` and
//! `Location`: parsing against a base, the setters and the getters, through the `url`
//! crate's `quirks` module, which implements exactly those algorithms; and the
//! `application/x-www-form-urlencoded` parser and serializer of `URLSearchParams`, through
//! its `form_urlencoded` module.

use url::{quirks, Url};

/// The components of `input` (parsed against `base`) as JSON, after applying `setter` (a
/// component name: `href`, `protocol`, …) with `value`. A setter the URL standard ignores
/// for this URL leaves it as it was; only `href` can fail, as `new URL` does.
pub fn url_parts(
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
        // The setters that refuse a value (Err) leave the URL as it was.
        match setter {
            "href" => quirks::set_href(&mut url, value).map_err(|e| invalid(&e))?,
            "protocol" => quirks::set_protocol(&mut url, value).unwrap_or(()),
            "username" => quirks::set_username(&mut url, value).unwrap_or(()),
            "password" => quirks::set_password(&mut url, value).unwrap_or(()),
            "host" => quirks::set_host(&mut url, value).unwrap_or(()),
            "hostname" => quirks::set_hostname(&mut url, value).unwrap_or(()),
            "port" => quirks::set_port(&mut url, value).unwrap_or(()),
            "pathname" => quirks::set_pathname(&mut url, value),
            "search" | "query" => quirks::set_search(&mut url, value),
            "hash" => quirks::set_hash(&mut url, value),
            _ => {}
        }
    }
    Ok(serde_json::json!({
        "href": quirks::href(&url),
        "protocol": quirks::protocol(&url),
        "username": quirks::username(&url),
        "password": quirks::password(&url),
        "host": quirks::host(&url),
        "hostname": quirks::hostname(&url),
        "port": quirks::port(&url),
        "pathname": quirks::pathname(&url),
        "search": quirks::search(&url),
        "hash": quirks::hash(&url),
        "origin": quirks::origin(&url),
    })
    .to_string())
}

/// The `application/x-www-form-urlencoded` parser
/// (<https://url.spec.whatwg.org/#concept-urlencoded-parser>): `input`'s name-value pairs
/// as JSON, `[[name, value], …]` (empty sequences dropped, `+` a space, percent-decoded,
/// invalid UTF-8 replaced by U+FFFD).
pub fn form_parse(input: &str) -> String {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(input.as_bytes())
        .into_owned()
        .collect();
    serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into())
}

/// One name or value serialised as the `application/x-www-form-urlencoded` serializer does
/// (<https://url.spec.whatwg.org/#concept-urlencoded-serializer>): UTF-8, percent-encoded
/// but for ASCII alphanumerics and `*-._`, spaces as `+`.
pub fn form_encode(input: &str) -> String {
    url::form_urlencoded::byte_serialize(input.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(input: &str, setter: &str, value: &str) -> serde_json::Value {
        serde_json::from_str(&url_parts(input, None, Some(setter), Some(value)).unwrap()).unwrap()
    }

    #[test]
    fn setters_follow_the_url_standard() {
        // `host` takes a port with it; `hostname` does not.
        let u = after("http://a.test/", "host", "b.test:81");
        assert_eq!(
            (u["host"].as_str(), u["port"].as_str()),
            (Some("b.test:81"), Some("81"))
        );
        let u = after("http://a.test:90/", "hostname", "b.test:81");
        assert_eq!(u["host"], "a.test:90");
        // `port` takes the leading digits and ignores the rest; the default port is elided.
        assert_eq!(after("http://a.test/", "port", "81x")["port"], "81");
        assert_eq!(after("http://a.test:81/", "port", "80")["host"], "a.test");
        assert_eq!(after("http://a.test:81/", "port", "")["port"], "");
        assert_eq!(after("http://a.test:81/", "port", "x")["port"], "81");
        // `search` and `hash` add their prefix once, and empty clears.
        assert_eq!(after("http://a.test/", "search", "??q")["search"], "??q");
        assert_eq!(
            after("http://a.test/?x", "search", "")["href"],
            "http://a.test/"
        );
        assert_eq!(after("http://a.test/", "hash", "#f")["hash"], "#f");
        // A special scheme cannot become a non-special one.
        assert_eq!(
            after("http://a.test/", "protocol", "foo")["protocol"],
            "http:"
        );
        assert_eq!(
            after("http://a.test/", "protocol", "https:")["protocol"],
            "https:"
        );
        // `href` must parse.
        assert!(url_parts("http://a.test/", None, Some("href"), Some("::")).is_err());
    }

    #[test]
    fn relative_inputs_use_the_base_and_bad_ones_say_why() {
        let u: serde_json::Value = serde_json::from_str(
            &url_parts("../x?y#z", Some("http://a.test/b/c"), None, None).unwrap(),
        )
        .unwrap();
        assert_eq!(u["href"], "http://a.test/x?y#z");
        assert_eq!(u["origin"], "http://a.test");
        let e = url_parts("x", None, None, None).unwrap_err();
        assert!(e.starts_with("Invalid URL 'x'"), "{e}");
    }

    #[test]
    fn form_urlencoded_follows_the_url_standard() {
        let pairs: Vec<(String, String)> =
            serde_json::from_str(&form_parse("a=1&&b=x+y%20z&c&=d&%FF=%e2%82%ac")).unwrap();
        let expected = [
            ("a", "1"),
            ("b", "x y z"),
            ("c", ""),
            ("", "d"),
            ("\u{fffd}", "€"),
        ];
        assert_eq!(pairs, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert_eq!(form_parse(""), "[]");
        assert_eq!(
            form_encode("a b&c=d/é*-._~!"),
            "a+b%26c%3Dd%2F%C3%A9*-._%7E%21"
        );
    }
}
