//! A URL's query parameters, percent-decoded: the intakes' keys and options, and the
//! page's filters.

/// The query's parameters, percent-decoded.
pub fn query_params(query: &str) -> Vec<(String, String)> {
    form_urlencoded_parse(query)
}

fn form_urlencoded_parse(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

pub fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%2Fb+c%zz%4"), "a/b c%zz%4");
        let q = query_params(
            "ddforward=%2Fapi%2Fv2%2Fprofile%3Fddsource%3Dbrowser%26dd-api-key%3Dpub123",
        );
        let fwd = param(&q, "ddforward").unwrap();
        let inner = query_params(fwd.split_once('?').unwrap().1);
        assert_eq!(param(&inner, "dd-api-key"), Some("pub123"));
    }
}
