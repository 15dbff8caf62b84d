//! Response headers, a request's header list, and the `.headers` sidecar files that give
//! `file:` resources headers (the web-platform-tests convention: `NAME.headers` for one file,
//! `__dir__.headers` for every file in its folder, one `Name: value` per line).

use std::fs;
use std::io;
use std::path::Path;

/// An ordered list of headers with case-insensitive lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    pub fn append(&mut self, name: &str, value: &str) {
        self.0.push((name.to_owned(), value.trim().to_owned()));
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All values of `name`, joined with ", " (how HTTP combines repeated fields).
    pub fn get_combined(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .0
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Parses `Name: value` lines; blank lines are skipped.
    pub fn parse(text: &str) -> Result<Headers, String> {
        let mut h = Headers::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("line {}: expected 'Name: value'", i + 1))?;
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(format!("line {}: bad header name '{name}'", i + 1));
            }
            h.append(name, value);
        }
        Ok(h)
    }
}

/// A request's header list (<https://fetch.spec.whatwg.org/#concept-header-list>): names as
/// given, values as bytes, in order. What an API put there was validated by its `Headers`
/// object; the loader still refuses (never panics on) a name or value HTTP cannot carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderList(Vec<(String, Vec<u8>)>);

impl HeaderList {
    pub fn append(&mut self, name: &str, value: &[u8]) {
        self.0.push((name.to_owned(), value.to_vec()));
    }

    /// Whether the list contains `name` (in any case).
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The values of `name`, combined with ", " (<https://fetch.spec.whatwg.org/#concept-header-list-get>).
    pub fn get(&self, name: &str) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        for (_, v) in self.0.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)) {
            match &mut out {
                None => out = Some(v.clone()),
                Some(o) => {
                    o.extend_from_slice(b", ");
                    o.extend_from_slice(v);
                }
            }
        }
        out
    }

    /// Removes every header named `name` (in any case).
    pub fn delete(&mut self, name: &str) {
        self.0.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses the lines `name:value` the prelude sends (one header a line; a name is a
    /// token and a value holds no LF, so neither can hide a line or a colon). The value is
    /// a byte string: each char one byte, U+0000-U+00FF. A malformed line is an error.
    pub fn from_lines(lines: &[u8]) -> Result<HeaderList, String> {
        let mut list = HeaderList::default();
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let colon = line
                .iter()
                .position(|&b| b == b':')
                .ok_or("a header line without ':'")?;
            let name = std::str::from_utf8(&line[..colon])
                .ok()
                .filter(|n| crate::cors::is_header_name(n.as_bytes()))
                .ok_or("a header name that is not a token")?;
            list.append(name, &line[colon + 1..]);
        }
        Ok(list)
    }
}

/// The sidecar headers of the file at `path`: its folder's `__dir__.headers`, then its own
/// `NAME.headers`.
pub fn sidecar_headers(path: &Path) -> io::Result<Headers> {
    let mut headers = Headers::default();
    let mut sidecars = Vec::new();
    if let Some(dir) = path.parent() {
        sidecars.push(dir.join("__dir__.headers"));
    }
    let mut own = path.as_os_str().to_owned();
    own.push(".headers");
    sidecars.push(own.into());
    for sidecar in sidecars {
        match fs::read_to_string(&sidecar) {
            Ok(text) => {
                let parsed = Headers::parse(&text).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: {e}", sidecar.display()),
                    )
                })?;
                headers.0.extend(parsed.0);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_and_lookup() {
        let h = Headers::parse("Document-Policy: js-profiling\n\nX-A: 1\nx-a:  2 \n").unwrap();
        assert_eq!(h.get("document-policy"), Some("js-profiling"));
        assert_eq!(h.get_combined("X-A").as_deref(), Some("1, 2"));
        assert!(Headers::parse("no colon").is_err());
        assert!(Headers::parse("bad name: x").is_err());
    }
}
