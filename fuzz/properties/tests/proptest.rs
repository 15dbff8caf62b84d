//! The fuzz targets' properties under proptest, so that `./mach test` checks them on every
//! run: for each target, arbitrary bytes and structured text likely to reach the interesting
//! paths (sfv-ish dictionaries, header lines, HTML-ish tags, JS-ish code, sample streams).

use jsprof_fuzz_properties::trace_builder::{self, Event, Frame, Stream};
use jsprof_fuzz_properties::{
    document_policy, fetch_headers, headers_sidecar, html_document, scope_request, symbolizer,
};
use proptest::prelude::*;
use proptest::sample::select;

/// Text made of `pieces` (some of them repeated), joined with nothing.
fn joined(pieces: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(select(pieces), 0..max).prop_map(|v| v.concat())
}

// Pieces of the profiler service's requests.
const SCOPE_PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"command\"",
    "\"tag\"",
    "\"payload\"",
    "\"GetEvents\"",
    "\"StartProfiler\"",
    "3",
    "1",
    "0",
    "-1",
    "4294967296",
    "1.5",
    "null",
    "\"sessionID\"",
    "\"timelineID\"",
    "\"mode\"",
    "\"REDUCE_ALL\"",
    "\"eventID\"",
    "\"maxDepth\"",
    "\"eventTypeList\"",
    "\"interval\"",
    "\"start\"",
    "\"end\"",
    "\"THREAD_EVALUATION\"",
    "\"windowID\"",
    "\"startMode\"",
];

// Document-Policy members and COOP/COEP values.
const POLICY_PIECES: &[&str] = &[
    "js-profiling",
    "js-profiling-mode",
    "JS-Profiling",
    "other-feature",
    "*k",
    "=",
    "?1",
    "?0",
    "eager",
    "lazy",
    "\"eager\"",
    "sometimes",
    "1",
    "1.5",
    ":aGk=:",
    "@1700000000",
    "%\"caf%c3%a9\"",
    "(eager lazy)",
    "()",
    ";",
    ";a=1",
    ";report-to=\"x\"",
    ", ",
    ",",
    " ",
    "\t",
    "same-origin",
    "Same-Origin",
    "same-origin-allow-popups",
    "require-corp",
    "credentialless",
    "unsafe-none",
    "\n",
    "é",
];

const HEADER_NAMES: &[&str] = &[
    "Document-Policy",
    "document-policy",
    "Cross-Origin-Opener-Policy",
    "X-A",
    "x-a",
    "",
    " ",
    "bad name",
    "\tX-Tab",
    "Ünï",
];
const HEADER_VALUES: &[&str] = &[
    "js-profiling",
    " js-profiling-mode=lazy ",
    "",
    "  ",
    "a:b",
    "same-origin; report-to=\"x\"",
    "é😀",
    "\u{a0}nbsp\u{a0}",
    "x\ry",
];
const LINE_ENDS: &[&str] = &["\n", "\r\n", "\n\n", "\r", ""];

// A header name, "\n", then a value: MIME types, lists, ranges, methods.
const FETCH_NAMES: &[&str] = &[
    "Content-Type",
    "accept",
    "Accept-Language",
    "content-language",
    "Range",
    "X-Custom",
    "Authorization",
    "X-HTTP-Method-Override",
    "TRACE",
    "get",
    "patch",
    "",
];
const FETCH_PIECES: &[&str] = &[
    "text/plain",
    "Text/HTML",
    "multipart/form-data",
    "application/x-www-form-urlencoded",
    "*/*",
    "/",
    ";",
    ";charset=utf-8",
    "; charset=\"gbk\"",
    "=",
    "\"",
    "\\",
    ",",
    ", ",
    "\t",
    " ",
    "\r",
    "\n",
    "\0",
    "bytes=",
    "0",
    "-",
    "12",
    "PUT",
    "*",
    "x-a",
    "é",
    "\u{ff}",
    "a b",
    "\u{1}",
    "@",
    "(",
    ")",
];

fn header_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => (select(HEADER_NAMES), select(&[":", ": ", " :", "::"][..]), select(HEADER_VALUES))
            .prop_map(|(n, c, v)| format!("{n}{c}{v}")),
        1 => select(&["no colon", "   ", "", ":value only"][..]).prop_map(str::to_owned),
    ];
    proptest::collection::vec((line, select(LINE_ENDS)), 0..8)
        .prop_map(|lines| lines.into_iter().map(|(l, e)| l + e).collect())
}

const HTML_PIECES: &[&str] = &[
    "<!doctype html>",
    "<html>",
    "<head>",
    "<body>",
    "<script>",
    "</script>",
    "<script type=module>",
    "<script type=\"text/plain\">",
    "<script src=\"a.js\" async defer>",
    "<SCRIPT>",
    "</script >",
    "<template>",
    "</template>",
    "<svg>",
    "</svg>",
    "<math>",
    "<!-- ",
    " -->",
    "<!-->",
    "<textarea>",
    "</textarea>",
    "<title>",
    "</title>",
    "<style>",
    "</style>",
    "<noscript>",
    "</noscript>",
    "<iframe>",
    "<xmp>",
    "<plaintext>",
    "<div>",
    "</div>",
    "<p>",
    "<table>",
    "<tr>",
    "<select>",
    "<a title='<script>'>",
    "<![CDATA[",
    "]]>",
    "<?pi",
    ">",
    "\"",
    "'",
    "f(1);",
    "é😀",
    "\n",
    "\r\n",
    "\0",
    " ",
];

const JS_PIECES: &[&str] = &[
    "function f(a) {",
    "function () {",
    "}",
    "{",
    "const g = ",
    "let h = ",
    "x = ",
    "o.p = ",
    "() => ",
    "async (a, b) => ",
    "a => ",
    "class K {",
    "constructor() {}",
    "get x() {}",
    "set x(v) {}",
    "static m() {}",
    "export default ",
    "export const z = ",
    "({ m() {}, 'é': function () {}, [k]: () => 1 })",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "\n",
    "\r\n",
    "\u{2028}",
    "é😀",
    "`${",
    "`",
    "/re/g",
    "// c\n",
    "/* c */",
    "return 1;",
    "1",
    " ",
];

fn frame() -> impl Strategy<Value = Frame> {
    (
        0u8..4,
        any::<bool>(),
        0u8..8,
        0u8..8,
        0u8..16,
        0u8..48,
        0u8..4,
    )
        .prop_map(|(realm, hidden, kind, script, line, column, name)| Frame {
            realm,
            hidden,
            kind,
            script,
            line,
            column,
            name,
        })
}

fn event() -> impl Strategy<Value = Event> {
    let time = || (0u8..4, any::<u8>());
    prop_oneof![
        1 => time().prop_map(|(scale, dt)| Event::Idle { scale, dt }),
        2 => (time(), proptest::collection::vec(frame(), 0..10))
            .prop_map(|((scale, dt), frames)| Event::Stack { scale, dt, frames }),
        2 => (time(), any::<u8>(), any::<bool>())
            .prop_map(|((scale, dt), index, copy)| Event::Again { scale, dt, index, copy }),
    ]
}

fn stream() -> impl Strategy<Value = Stream> {
    (
        any::<bool>(),
        prop_oneof![Just(0u8), 1u8..20, any::<u8>()],
        any::<u8>(),
        proptest::collection::vec(event(), 0..60),
    )
        .prop_map(|(isolated, max_samples, origin_ms, events)| Stream {
            isolated,
            max_samples,
            origin_ms,
            events,
        })
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

proptest! {
    #[test]
    fn document_policy_bytes(data in bytes(256)) {
        document_policy(&data);
    }

    #[test]
    fn document_policy_structured(text in joined(POLICY_PIECES, 12)) {
        document_policy(text.as_bytes());
    }

    #[test]
    fn fetch_headers_bytes(data in bytes(256)) {
        fetch_headers(&data);
    }

    #[test]
    fn fetch_headers_structured(name in select(FETCH_NAMES), value in joined(FETCH_PIECES, 16)) {
        // The value's chars as bytes (isomorphic): what a ByteString carries.
        let mut data: Vec<u8> = name.as_bytes().to_vec();
        data.push(b'\n');
        data.extend(value.chars().filter_map(|c| u8::try_from(u32::from(c)).ok()));
        fetch_headers(&data);
    }

    #[test]
    fn scope_request_bytes(data in bytes(256)) {
        scope_request(&data);
    }

    #[test]
    fn scope_request_structured(text in joined(SCOPE_PIECES, 24)) {
        scope_request(text.as_bytes());
    }

    #[test]
    fn headers_sidecar_bytes(data in bytes(256)) {
        headers_sidecar(&data);
    }

    #[test]
    fn headers_sidecar_structured(text in header_text()) {
        headers_sidecar(text.as_bytes());
    }

    #[test]
    fn trace_builder_bytes(data in bytes(512)) {
        trace_builder::trace_builder(&data);
    }

    #[test]
    fn trace_builder_structured(stream in stream()) {
        // The encoding reads back as the stream it encodes, and both check alike.
        let data = trace_builder::encode(&stream);
        let decoded = trace_builder::decode(&data);
        prop_assert_eq!(&decoded, &stream);
        prop_assert_eq!(trace_builder::encode(&decoded), data.clone());
        trace_builder::check_stream(&stream);
        trace_builder::trace_builder(&data);
    }
}

proptest! {
    // html5ever and oxc (on a fresh 64 MB thread) are the slow ones: still under a second
    // for the 256 cases of all four in a debug build.

    #[test]
    fn html_document_bytes(data in bytes(512)) {
        html_document(&data);
    }

    #[test]
    fn html_document_structured(text in joined(HTML_PIECES, 40)) {
        html_document(text.as_bytes());
    }

    #[test]
    fn symbolizer_bytes(data in bytes(256)) {
        symbolizer(&data);
    }

    #[test]
    fn symbolizer_structured(text in joined(JS_PIECES, 30)) {
        symbolizer(text.as_bytes());
    }
}
