//! `--source-maps` for the query commands: a frame of a minified or bundled script (name,
//! URL, line, column) mapped back to its original function, with the mapping `jsprof
//! convert --source-maps` uses ([`jsprof_export::sourcemap::Mapped`]). One entry point,
//! [`SourceMaps::map`], cached per script URL, so that every command that shows frames
//! (`top` now) can call it.
//!
//! On a server the traces, and so the URLs they name, are untrusted: a page may name any
//! URL as its script, and a script any URL as its map. So, unlike `jsprof convert` (which
//! runs on the user's own traces), scripts and maps are fetched only under [`Policy`]:
//! - **an allow-list of origins** (`sourcemaps.allowed_origins`, as Sentry's "allowed
//!   domains"): a script or map, and every redirect hop, must be of one of them (exact
//!   origin: scheme, host, port); none by default, so nothing is fetched until some are
//!   named;
//! - **http and https only**: never `file:` (a trace must not read the server's disk); a
//!   map may be a `data:` URL, which is decoded, not fetched;
//! - **no loopback, private, link-local (or unspecified, shared, multicast) address**
//!   unless `sourcemaps.allow_private_addresses=true`: checked on the addresses a host
//!   *resolves to* (the connection then goes to those checked addresses, so a second lookup
//!   cannot swap them), on IP-literal hosts, and again on every redirect hop;
//! - **limits**: `sourcemaps.max_bytes` per response (16 MiB), `sourcemaps.timeout_ms` per
//!   fetch, body included (10 s), 5 redirects; no proxy from the environment (it would
//!   resolve names itself).
//!
//! A refusal or a failure is one warning per script ([`SourceMaps::warnings`]) and leaves
//! its frames as they are, as in `jsprof convert`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::RecordBatch;
use jsprof_export::model::Frame;
use jsprof_export::sourcemap::{map_reference_of, Mapped};
use url::Url;

use crate::batches::FrameColumns;

/// What may be fetched, and how much.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `sourcemaps.allowed_origins`: origins (`https://cdn.example.com`) scripts and maps
    /// may come from.
    pub allowed_origins: Vec<String>,
    /// `sourcemaps.allow_private_addresses`: loopback, private and link-local addresses too.
    pub allow_private: bool,
    /// `sourcemaps.max_bytes`: the largest script or map.
    pub max_bytes: usize,
    /// `sourcemaps.timeout_ms`: one fetch, from connecting to the body's end.
    pub timeout: Duration,
    pub max_redirects: usize,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            allowed_origins: Vec::new(),
            allow_private: false,
            max_bytes: 16 << 20,
            timeout: Duration::from_secs(10),
            max_redirects: 5,
        }
    }
}

impl Policy {
    /// Sets pref `name` (`sourcemaps.*`) to `value`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let num = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("--pref {name}: {value} is not a whole number"))
        };
        match name {
            "sourcemaps.allowed_origins" => {
                self.allowed_origins = value
                    .split(',')
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .map(|o| {
                        Url::parse(o)
                            .ok()
                            .filter(|u| matches!(u.scheme(), "http" | "https"))
                            .map(|u| u.origin().ascii_serialization())
                            .ok_or_else(|| format!("--pref {name}: {o} is not an http(s) origin"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "sourcemaps.allow_private_addresses" => {
                self.allow_private = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("--pref {name}: true or false, not {value}")),
                }
            }
            "sourcemaps.max_bytes" => self.max_bytes = num()? as usize,
            "sourcemaps.timeout_ms" => self.timeout = Duration::from_millis(num()?),
            _ => return Err(format!("--pref {name}: no such pref")),
        }
        Ok(())
    }

    /// Whether `url` may be fetched: scheme, origin, and an IP-literal host's address.
    fn check(&self, url: &Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "{url}: {}: is not fetched (http and https only)",
                url.scheme()
            ));
        }
        let origin = url.origin().ascii_serialization();
        if !self.allowed_origins.contains(&origin) {
            return Err(format!(
                "{origin} is not an allowed origin (pref sourcemaps.allowed_origins)"
            ));
        }
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal {
            if !self.allow_private && !public(ip) {
                return Err(format!("{url}: {ip} is {}", not_public()));
            }
        }
        Ok(())
    }
}

fn not_public() -> &'static str {
    "a loopback, private or link-local address (pref sourcemaps.allow_private_addresses)"
}

/// Not loopback, private, link-local, unspecified, shared (100.64/10), broadcast or
/// multicast; an IPv4-mapped IPv6 address is judged as its IPv4 address.
pub fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (a == 100 && (64..128).contains(&b))
                || a == 0)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

/// The resolver the client connects through: a name's addresses, without the ones the
/// policy refuses; none left is an error, so nothing is connected to.
#[derive(Debug)]
struct Resolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| allow_private || public(a.ip()))
                .collect();
            if kept.is_empty() {
                let shown: Vec<String> = all.iter().map(|a| a.ip().to_string()).collect();
                return Err(format!(
                    "{host} resolves to {} only: {}",
                    shown.join(", "),
                    not_public()
                )
                .into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

/// Scripts' maps, loaded under a [`Policy`], each script once.
#[derive(Debug)]
pub struct SourceMaps {
    policy: Arc<Policy>,
    client: reqwest::Client,
    scripts: HashMap<String, Option<Arc<Mapped>>>,
    warnings: Vec<String>,
}

struct Fetched {
    url: Url,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl SourceMaps {
    pub fn new(policy: Policy) -> Result<SourceMaps, String> {
        let policy = Arc::new(policy);
        let hops = policy.clone();
        let redirect = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > hops.max_redirects {
                let max = hops.max_redirects;
                return attempt.error(format!("more than {max} redirects"));
            }
            match hops.check(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(why) => attempt.error(format!("redirect refused: {why}")),
            }
        });
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirect)
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout)
            .dns_resolver(Arc::new(Resolver {
                allow_private: policy.allow_private,
            }))
            .build()
            .map_err(|e| format!("cannot make the HTTP client: {e}"))?;
        Ok(SourceMaps {
            policy,
            client,
            scripts: HashMap::new(),
            warnings: Vec::new(),
        })
    }

    /// The original of `frame` (name, script URL, 1-based line and column), or the frame
    /// as it is when its script has no map, or the map no mapping there, or the script or
    /// map may not or cannot be loaded (a warning, once per script).
    pub async fn map(&mut self, frame: Frame) -> Frame {
        let Some(resource) = frame.resource.clone() else {
            return frame;
        };
        if frame.line.is_none() || frame.column.is_none() {
            return frame;
        }
        let mapped = match self.scripts.get(&resource) {
            Some(known) => known.clone(),
            None => {
                let mapped = match self.load(&resource).await {
                    Ok(m) => m.map(Arc::new),
                    Err(why) => {
                        self.warnings.push(format!(
                            "{resource}: source map not used ({why}); its frames are left as they are"
                        ));
                        None
                    }
                };
                self.scripts.insert(resource, mapped.clone());
                mapped
            }
        };
        match mapped {
            Some(m) => m.original(&frame).unwrap_or(frame),
            None => frame,
        }
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    async fn load(&self, resource: &str) -> Result<Option<Mapped>, String> {
        let url = Url::parse(resource).map_err(|e| format!("not a URL: {e}"))?;
        let script = self.fetch(&url).await?;
        let text = String::from_utf8_lossy(&script.body);
        let header = |name: &str| script.headers.get(name).and_then(|v| v.to_str().ok());
        let Some(reference) = map_reference_of(header, &text) else {
            return Ok(None);
        };
        let map_url = script
            .url
            .join(&reference)
            .map_err(|e| format!("bad source map URL '{reference}': {e}"))?;
        let body = if map_url.scheme() == "data" {
            let data = data_url::DataUrl::process(map_url.as_str())
                .map_err(|e| format!("bad data: URL: {e:?}"))?;
            let (body, _) = data
                .decode_to_vec()
                .map_err(|e| format!("bad data: URL: {e:?}"))?;
            body
        } else {
            self.fetch(&map_url).await?.body
        };
        Mapped::parse(&body, &map_url, &script.url).map(Some)
    }

    async fn fetch(&self, url: &Url) -> Result<Fetched, String> {
        self.policy.check(url)?;
        let max = self.policy.max_bytes;
        let mut response = self
            .client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| error_chain(&e))?;
        if !response.status().is_success() {
            return Err(format!(
                "{}: HTTP status {}",
                response.url(),
                response.status()
            ));
        }
        if response.content_length().is_some_and(|n| n > max as u64) {
            return Err(format!("{}: over {max} bytes", response.url()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
            if body.len() + chunk.len() > max {
                return Err(format!("{}: over {max} bytes", response.url()));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            url: response.url().clone(),
            headers: response.headers().clone(),
            body,
        })
    }
}

/// An error with its causes (reqwest's own message alone says "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// `top`'s rows with their frames mapped: the `function`, `resource`, `line` and `column`
/// columns replaced by the original's. A frame an uploaded map (`uploaded`: the store's,
/// and the release asked for) maps is not fetched for.
pub async fn map_rows(
    batches: Vec<RecordBatch>,
    maps: &mut SourceMaps,
    uploaded: Option<(&crate::symbols::Resolver, Option<&str>)>,
) -> Result<Vec<RecordBatch>, String> {
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        let (columns, frames) = FrameColumns::read(&batch)?;
        let mut mapped = Vec::with_capacity(frames.len());
        for frame in frames {
            mapped.push(
                match uploaded.and_then(|(u, release)| u.original(release, &frame)) {
                    Some(m) => m,
                    None => maps.map(frame).await,
                },
            );
        }
        out.push(columns.replace(&batch, mapped)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(!public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "172.32.0.1"] {
            assert!(public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn origins_are_checked_exactly_and_file_is_never_fetched() {
        let mut p = Policy::default();
        p.set(
            "sourcemaps.allowed_origins",
            "https://cdn.example.com, http://static.example.com:8080/",
        )
        .unwrap();
        let ok = |u: &str| p.check(&Url::parse(u).unwrap());
        assert!(ok("https://cdn.example.com/app.js").is_ok());
        assert!(ok("https://cdn.example.com:443/app.js").is_ok());
        assert!(ok("http://static.example.com:8080/a.js").is_ok());
        assert!(ok("http://cdn.example.com/app.js").is_err());
        assert!(ok("https://cdn.example.com.evil.test/app.js").is_err());
        assert!(ok("http://static.example.com/a.js").is_err());
        assert!(ok("file:///etc/passwd")
            .unwrap_err()
            .contains("http and https only"));
        assert!(p.set("sourcemaps.allowed_origins", "file:///").is_err());
        // An allowed origin that is a private address is still refused without the pref.
        p.set("sourcemaps.allowed_origins", "http://10.0.0.8")
            .unwrap();
        let url = Url::parse("http://10.0.0.8/a.js").unwrap();
        assert!(p.check(&url).unwrap_err().contains("private"));
        p.set("sourcemaps.allow_private_addresses", "true").unwrap();
        assert!(p.check(&url).is_ok());
    }
}
