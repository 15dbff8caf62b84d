//! Origins (<https://html.spec.whatwg.org/#concept-origin>), the one place jsprof decides
//! whether two things are same-origin.
//!
//! An origin is either a *tuple* (scheme, host, port) of a parsed URL — the host as the URL
//! parser normalised it, the port made explicit with the scheme's default — or *opaque*: an
//! identity with no parts, equal only to itself. `data:` URLs and documents, sandboxed
//! documents and anything without a network scheme get a fresh opaque origin. A `blob:` URL
//! has the origin of the URL it was made for (its path).
//!
//! `file:` URLs are opaque too ("left as an exercise to the reader" in the URL standard), and
//! serialise as `null`; jsprof gives every `file:` URL of the process the **same** opaque
//! origin, [`Origin::local_files`]. That is the local-development policy of the shell (a
//! `file:` page can load its own scripts, modules, iframes and workers), and it is the only
//! origin allowed to load `file:` URLs at all (see [`crate::Request`]): a web page can never
//! read a local file.
//!
//! Every check — loads, CORS, response tainting, muted errors, worker creation, frame access,
//! `postMessage` targets — goes through [`Origin::same_origin`].

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use url::{Host, Url};

/// An origin. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// An opaque origin: equal only to itself (by identity number).
    Opaque(OpaqueId),
    /// A tuple origin.
    Tuple {
        scheme: String,
        host: Host<String>,
        port: u16,
    },
}

/// The identity of an opaque origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpaqueId(u64);

/// Identity 0 is the one opaque origin of all `file:` URLs.
const LOCAL_FILES: OpaqueId = OpaqueId(0);
static NEXT_OPAQUE: AtomicU64 = AtomicU64::new(1);

impl Origin {
    /// The origin of `url` (<https://url.spec.whatwg.org/#concept-url-origin>), with jsprof's
    /// one origin for every `file:` URL.
    pub fn of(url: &Url) -> Origin {
        match url.scheme() {
            "file" => Origin::local_files(),
            // The URL standard: a blob: URL's origin is that of its path, if that parses as
            // an http(s) URL (or is itself a file: URL here, made by a local page).
            "blob" => match Url::parse(url.path()) {
                Ok(inner) if matches!(inner.scheme(), "http" | "https" | "file") => {
                    Origin::of(&inner)
                }
                _ => Origin::new_opaque(),
            },
            "http" | "https" | "ws" | "wss" | "ftp" => {
                match (url.host(), url.port_or_known_default()) {
                    (Some(host), Some(port)) => Origin::Tuple {
                        scheme: url.scheme().to_owned(),
                        host: host.to_owned(),
                        port,
                    },
                    _ => Origin::new_opaque(),
                }
            }
            _ => Origin::new_opaque(),
        }
    }

    /// A fresh opaque origin, same-origin with nothing but itself.
    pub fn new_opaque() -> Origin {
        Origin::Opaque(OpaqueId(NEXT_OPAQUE.fetch_add(1, Ordering::Relaxed)))
    }

    /// The opaque origin every `file:` URL has in this process.
    pub fn local_files() -> Origin {
        Origin::Opaque(LOCAL_FILES)
    }

    /// Whether this is the origin of `file:` URLs (the only one that may load them).
    pub fn is_local_files(&self) -> bool {
        *self == Origin::Opaque(LOCAL_FILES)
    }

    pub fn is_opaque(&self) -> bool {
        matches!(self, Origin::Opaque(_))
    }

    /// <https://html.spec.whatwg.org/#same-origin>: two opaque origins are the same if they
    /// are the same identity; two tuples if scheme, host and port are identical.
    pub fn same_origin(&self, other: &Origin) -> bool {
        self == other
    }

    /// Whether `url` is same-origin with this origin.
    pub fn same_origin_url(&self, url: &Url) -> bool {
        self.same_origin(&Origin::of(url))
    }

    /// The ASCII serialisation (<https://html.spec.whatwg.org/#ascii-serialisation-of-an-origin>):
    /// `scheme://host[:port]` with the port only when it is not the scheme's default, or
    /// `null` for an opaque origin. This is what `Origin` request headers carry and what
    /// `Access-Control-Allow-Origin` is compared with.
    pub fn serialize(&self) -> String {
        match self {
            Origin::Opaque(_) => "null".to_owned(),
            Origin::Tuple { scheme, host, port } => {
                let default = match scheme.as_str() {
                    "http" | "ws" => Some(80),
                    "https" | "wss" => Some(443),
                    "ftp" => Some(21),
                    _ => None,
                };
                if default == Some(*port) {
                    format!("{scheme}://{host}")
                } else {
                    format!("{scheme}://{host}:{port}")
                }
            }
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serialize())
    }
}

/// Whether two URLs are same-origin (by [`Origin::of`]).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    Origin::of(a).same_origin(&Origin::of(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> Origin {
        Origin::of(&Url::parse(s).unwrap())
    }

    #[test]
    fn tuples_compare_scheme_host_and_port() {
        assert!(o("http://a.test/x").same_origin(&o("http://a.test:80/y?z#w")));
        assert!(!o("http://a.test/").same_origin(&o("https://a.test/")));
        assert!(!o("http://a.test/").same_origin(&o("http://a.test:8080/")));
        assert!(!o("http://a.test/").same_origin(&o("http://b.a.test/")));
        assert!(o("https://a.test/").same_origin(&o("https://a.test:443/")));
    }

    #[test]
    fn hosts_are_compared_as_parsed_not_as_written() {
        // Case and IPv4 spellings are normalised by the URL parser...
        assert!(o("http://A.TEST/").same_origin(&o("http://a.test/")));
        assert!(o("http://127.0.0.1:8000/").same_origin(&o("http://2130706433:8000/")));
        assert!(o("http://127.0.0.1:8000/").same_origin(&o("http://0x7f.1:8000/")));
        // ...but different hosts that resolve to the same address stay different origins.
        assert!(!o("http://localhost:8000/").same_origin(&o("http://127.0.0.1:8000/")));
        assert!(!o("http://127.0.0.1:8000/").same_origin(&o("http://[::1]:8000/")));
        assert!(!o("http://web-platform.test/").same_origin(&o("http://www.web-platform.test/")));
    }

    #[test]
    fn userinfo_paths_queries_and_fragments_do_not_matter() {
        assert!(o("http://user:pw@a.test:81/p?q#f").same_origin(&o("http://a.test:81/")));
    }

    #[test]
    fn ipv6_and_idna() {
        assert!(o("http://[::1]:9/").same_origin(&o("http://[0:0:0:0:0:0:0:1]:9/")));
        assert_eq!(o("http://[::1]:9/").serialize(), "http://[::1]:9");
        // IDNA: the Unicode and the punycode spelling are one host.
        assert!(o("http://bücher.test/").same_origin(&o("http://xn--bcher-kva.test/")));
        assert_eq!(
            o("http://BÜCHER.test/").serialize(),
            "http://xn--bcher-kva.test"
        );
    }

    #[test]
    fn serialisation_omits_default_ports() {
        assert_eq!(o("http://a.test:80/x").serialize(), "http://a.test");
        assert_eq!(o("https://a.test:8443/").serialize(), "https://a.test:8443");
        assert_eq!(o("data:text/plain,x").serialize(), "null");
        assert_eq!(o("file:///etc/passwd").serialize(), "null");
    }

    #[test]
    fn opaque_origins_are_equal_only_to_themselves() {
        let a = o("data:text/html,a");
        let b = o("data:text/html,a");
        assert!(a.is_opaque() && b.is_opaque());
        assert!(a.same_origin(&a.clone()));
        assert!(!a.same_origin(&b));
        assert!(!a.same_origin(&o("http://a.test/")));
        assert!(!o("about:blank").same_origin(&o("about:blank")));
        assert!(!o("javascript:1").same_origin(&Origin::local_files()));
    }

    #[test]
    fn file_urls_share_the_one_local_files_origin() {
        assert!(o("file:///a/b.html").same_origin(&o("file:///etc/passwd")));
        assert!(o("file:///a").is_local_files());
        assert!(!o("http://a.test/").is_local_files());
        assert!(!o("file:///a").same_origin(&o("http://localhost/")));
    }

    #[test]
    fn blob_urls_have_their_creators_origin() {
        assert!(o("blob:http://a.test:81/uuid").same_origin(&o("http://a.test:81/")));
        assert!(!o("blob:http://a.test/uuid").same_origin(&o("http://b.test/")));
        assert!(o("blob:null/uuid").is_opaque());
        assert!(!o("blob:null/uuid").is_local_files());
    }
}
