//! MIME types as the MIME Sniffing standard parses them (<https://mimesniff.spec.whatwg.org/#parsing-a-mime-type>),
//! and the Fetch standard's header-value helpers built on the same scanning rules: *get,
//! decode, and split* (<https://fetch.spec.whatwg.org/#concept-header-list-get-decode-split>)
//! and *extract a MIME type* (<https://fetch.spec.whatwg.org/#concept-header-extract-mime-type>).
//!
//! Header values are byte sequences; they are *isomorphic decoded* (each byte one code point
//! U+0000–U+00FF) before parsing, so every function here works on `char`s.

/// A parsed MIME type: its type and subtype (ASCII lowercase) and its parameters in order
/// (names ASCII lowercase, each name once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MimeType {
    pub kind: String,
    pub subtype: String,
    pub parameters: Vec<(String, String)>,
}

/// <https://fetch.spec.whatwg.org/#http-whitespace>
fn is_http_whitespace(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\t' | ' ')
}

/// <https://fetch.spec.whatwg.org/#http-tab-or-space>
fn is_http_tab_or_space(c: char) -> bool {
    matches!(c, '\t' | ' ')
}

/// <https://mimesniff.spec.whatwg.org/#http-token-code-point>
pub(crate) fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// <https://mimesniff.spec.whatwg.org/#http-quoted-string-token-code-point>
fn is_quoted_string_token_char(c: char) -> bool {
    matches!(c, '\t' | ' '..='~' | '\u{80}'..='\u{ff}')
}

/// A position in a string of code points, as the standards' "position variable".
struct Scanner {
    chars: Vec<char>,
    pos: usize,
}

impl Scanner {
    fn new(input: &str) -> Scanner {
        Scanner {
            chars: input.chars().collect(),
            pos: 0,
        }
    }

    fn past_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// <https://infra.spec.whatwg.org/#collect-a-sequence-of-code-points>
    fn collect(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// <https://fetch.spec.whatwg.org/#collect-an-http-quoted-string>
    fn quoted_string(&mut self, extract_value: bool) -> String {
        // Step 1. Let positionStart be position.
        let start = self.pos;
        // Step 2. Let value be the empty string.
        let mut value = String::new();
        // Step 3. Assert: the code point at position is U+0022 ("). Step 4. Advance by 1.
        self.pos += 1;
        // Step 5.
        loop {
            // Step 5.1. Append the code points that are not " or \.
            value.push_str(&self.collect(|c| c != '"' && c != '\\'));
            // Step 5.2. If position is past the end of input, then break.
            let Some(quote_or_backslash) = self.peek() else {
                break;
            };
            // Steps 5.3-5.4.
            self.pos += 1;
            if quote_or_backslash == '\\' {
                // Step 5.5: an escape; a trailing backslash stands for itself.
                match self.peek() {
                    None => {
                        value.push('\\');
                        break;
                    }
                    Some(c) => {
                        value.push(c);
                        self.pos += 1;
                    }
                }
            } else {
                // Step 5.6: the closing quote.
                break;
            }
        }
        // Steps 6-7.
        if extract_value {
            value
        } else {
            let end = self.pos.min(self.chars.len());
            self.chars[start..end].iter().collect()
        }
    }
}

/// Parses a MIME type (<https://mimesniff.spec.whatwg.org/#parse-a-mime-type>); `None` is
/// failure.
pub fn parse_mime_type(input: &str) -> Option<MimeType> {
    // Step 1. Remove any leading and trailing HTTP whitespace from input.
    let input = input.trim_matches(is_http_whitespace);
    // Step 2. Let position be a position variable for input.
    let mut s = Scanner::new(input);
    // Step 3. Let type be the code points up to "/".
    let kind = s.collect(|c| c != '/');
    // Step 4. An empty type, or one that is not a token, is failure.
    if kind.is_empty() || !kind.chars().all(is_token_char) {
        return None;
    }
    // Step 5. Past the end is failure. Step 6. Skip "/".
    if s.past_end() {
        return None;
    }
    s.pos += 1;
    // Steps 7-8. Let subtype be the code points up to ";", without trailing whitespace.
    let subtype = s.collect(|c| c != ';');
    let subtype = subtype.trim_end_matches(is_http_whitespace);
    // Step 9. An empty subtype, or one that is not a token, is failure.
    if subtype.is_empty() || !subtype.chars().all(is_token_char) {
        return None;
    }
    // Step 10. The record, type and subtype in ASCII lowercase.
    let mut mime = MimeType {
        kind: kind.to_ascii_lowercase(),
        subtype: subtype.to_ascii_lowercase(),
        parameters: Vec::new(),
    };
    // Step 11. The parameters.
    while !s.past_end() {
        // Step 11.1. Advance past ";". Step 11.2. Skip HTTP whitespace.
        s.pos += 1;
        s.collect(is_http_whitespace);
        // Steps 11.3-11.4. The name, ASCII lowercase.
        let name = s.collect(|c| c != ';' && c != '=').to_ascii_lowercase();
        // Step 11.5. A name without "=" names no value.
        if s.peek() == Some(';') {
            continue;
        }
        if !s.past_end() {
            s.pos += 1;
        }
        // Step 11.6.
        if s.past_end() {
            break;
        }
        // Steps 11.7-11.9. The value: quoted, or up to ";" without trailing whitespace.
        let value = if s.peek() == Some('"') {
            let v = s.quoted_string(true);
            s.collect(|c| c != ';');
            v
        } else {
            let v = s.collect(|c| c != ';');
            let v = v.trim_end_matches(is_http_whitespace).to_owned();
            if v.is_empty() {
                continue;
            }
            v
        };
        // Step 11.10. Kept if well-formed and the first of its name.
        if !name.is_empty()
            && name.chars().all(is_token_char)
            && value.chars().all(is_quoted_string_token_char)
            && !mime.parameters.iter().any(|(n, _)| *n == name)
        {
            mime.parameters.push((name, value));
        }
    }
    // Step 12.
    Some(mime)
}

impl MimeType {
    /// <https://mimesniff.spec.whatwg.org/#mime-type-essence>
    pub fn essence(&self) -> String {
        format!("{}/{}", self.kind, self.subtype)
    }

    /// The value of parameter `name` (lowercase).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets parameter `name`, in place if it exists, else at the end.
    pub fn set_parameter(&mut self, name: &str, value: &str) {
        match self.parameters.iter_mut().find(|(n, _)| n == name) {
            Some(p) => p.1 = value.to_owned(),
            None => self.parameters.push((name.to_owned(), value.to_owned())),
        }
    }

    /// <https://mimesniff.spec.whatwg.org/#serialize-a-mime-type>
    pub fn serialize(&self) -> String {
        let mut out = self.essence();
        for (name, value) in &self.parameters {
            out.push(';');
            out.push_str(name);
            out.push('=');
            if value.is_empty() || !value.chars().all(is_token_char) {
                out.push('"');
                for c in value.chars() {
                    if c == '"' || c == '\\' {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push('"');
            } else {
                out.push_str(value);
            }
        }
        out
    }
}

/// Splits a header value as *get, decode, and split* does after getting and decoding
/// (<https://fetch.spec.whatwg.org/#header-value-get-decode-and-split>): at commas outside
/// quoted strings, each piece without leading and trailing tabs and spaces.
pub fn split_header_value(value: &str) -> Vec<String> {
    // Steps 1-3.
    let mut s = Scanner::new(value);
    let mut values = Vec::new();
    let mut temporary = String::new();
    // Step 4.
    loop {
        // Step 4.1. Everything up to a quote or a comma.
        temporary.push_str(&s.collect(|c| c != '"' && c != ','));
        // Step 4.2. A quoted string is kept whole, quotes included.
        if s.peek() == Some('"') {
            temporary.push_str(&s.quoted_string(false));
            if !s.past_end() {
                continue;
            }
        }
        // Steps 4.3-4.5.
        values.push(temporary.trim_matches(is_http_tab_or_space).to_owned());
        temporary.clear();
        // Step 4.6.
        if s.past_end() {
            return values;
        }
        // Steps 4.7-4.8. Skip the comma.
        s.pos += 1;
    }
}

/// Extracts a MIME type from the combined `Content-Type` value of a header list
/// (<https://fetch.spec.whatwg.org/#concept-header-extract-mime-type>); `None` is failure
/// (no `Content-Type`, or none that parses).
pub fn extract_mime_type(content_type: Option<&str>) -> Option<MimeType> {
    // Steps 1-3.
    let mut charset: Option<String> = None;
    let mut essence: Option<String> = None;
    let mut mime: Option<MimeType> = None;
    // Steps 4-5.
    let values = split_header_value(content_type?);
    // Step 6.
    for value in values {
        // Steps 6.1-6.2. Failures and */* are skipped.
        let Some(temporary) = parse_mime_type(&value) else {
            continue;
        };
        if temporary.essence() == "*/*" {
            continue;
        }
        // Step 6.3.
        let mut current = temporary;
        let current_essence = current.essence();
        if essence.as_deref() != Some(current_essence.as_str()) {
            // Step 6.4: a new essence takes its own charset (or none).
            charset = current.parameter("charset").map(str::to_owned);
            essence = Some(current_essence);
        } else if current.parameter("charset").is_none() {
            // Step 6.5: the same essence keeps the earlier charset.
            if let Some(c) = &charset {
                current.set_parameter("charset", c);
            }
        }
        mime = Some(current);
    }
    // Steps 7-8.
    mime
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_and_serialising() {
        let m = parse_mime_type(" Text/HTML ; Charset=\"utf-8\" ; x=\"a\\\"b\";bad;=;y=").unwrap();
        assert_eq!(m.essence(), "text/html");
        assert_eq!(m.parameter("charset"), Some("utf-8"));
        assert_eq!(m.serialize(), "text/html;charset=utf-8;x=\"a\\\"b\"");
        assert_eq!(
            parse_mime_type("text/plain;a=1;A=2").unwrap().serialize(),
            "text/plain;a=1"
        );
        for bad in [
            "",
            "text",
            "text/",
            "/plain",
            "te xt/plain",
            "text/pl ain;x=1",
            "ü/x",
        ] {
            assert_eq!(parse_mime_type(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_mime_type("a/b;c=\"\"").unwrap().serialize(),
            "a/b;c=\"\""
        );
    }

    #[test]
    fn splitting_respects_quotes() {
        assert_eq!(
            split_header_value("a, \"b,c\" ,d,,"),
            ["a", "\"b,c\"", "d", "", ""]
        );
        assert_eq!(split_header_value(""), [""]);
        assert_eq!(
            split_header_value("\"unterminated, x"),
            ["\"unterminated, x"]
        );
    }

    #[test]
    fn extracting_keeps_the_charset_of_the_same_essence() {
        let m = |v: &str| extract_mime_type(Some(v)).map(|m| m.serialize());
        assert_eq!(
            m("text/plain;charset=gbk, text/plain").as_deref(),
            Some("text/plain;charset=gbk")
        );
        assert_eq!(
            m("text/plain;charset=gbk, text/html").as_deref(),
            Some("text/html")
        );
        assert_eq!(m("text/html, */*").as_deref(), Some("text/html"));
        assert_eq!(m("bogus"), None);
        assert_eq!(extract_mime_type(None), None);
    }
}
