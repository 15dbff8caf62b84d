// Engine-internal: the calls the prelude (components/script/src/prelude/) makes into the
// engine, on the `host` object each realm's prelude receives. Never on a global: see
// `hidden` in webidl/Bindings.toml. This namespace is the embedder's host interface
// (`host = true` there): each operation is a method of the script crate's `PageHost`,
// given the caller's window (the caller's realm's) first. Windows are numbered per page.
//
// The engine's intrinsics that take or return JS objects, or run script in the caller's
// realm (promiseResult, whenSettled, windowFor, callerWindow, runScript, importScript and
// the structured-clone natives), are not here: they are JSAPI calls on values, written in
// components/script_bindings/src/glue/natives.rs and clone.rs.

[Exposed=(Window,Worker)]
namespace JsprofHost {
  // Console output; `toStderr` for errors and warnings.
  undefined print(boolean toStderr, DOMString text);
  // performance.now() and performance.timeOrigin, in ms.
  double now();
  double timeOrigin();

  // Timers: `setTimer` arms timer `id` (re-arming it when `repeat`), `clearTimer` disarms it.
  undefined setTimer(unsigned long id, unrestricted double delay, boolean repeat);
  undefined clearTimer(unsigned long id);

  // The WHATWG URL parser: the parts of `input` (against `base`), after `setter` = `value`
  // if given, as JSON, or {"error": message}.
  DOMString parseURL(DOMString input, optional DOMString? base, optional DOMString? setter,
                     optional DOMString? value);

  // application/x-www-form-urlencoded (https://url.spec.whatwg.org/#application/x-www-form-urlencoded),
  // for URLSearchParams: the name-value pairs `input` parses to, as JSON
  // ([[name, value], …]), and one name or value serialised (percent-encoded, spaces "+").
  DOMString formParse(DOMString input);
  DOMString formEncode(DOMString input);

  // fetch() and asynchronous XMLHttpRequests: request `id`, answered by a task that calls
  // the prelude's hooks.fetchDone(id, meta, body) with the filtered response.
  undefined fetchStart(unsigned long id, JsprofFetchRequest request);
  // A synchronous XMLHttpRequest, the caller blocked until the response is in: the filtered
  // response as JSON ({type, status, statusText, url, redirected, headers, body} with the
  // body a byte string), or {"error": message}.
  DOMString fetchSync(JsprofFetchRequest request);
  // The Fetch standard's rules for a header (name, value), as bits: 1 a header name, 2 a
  // header value, 4 a forbidden request-header, 8 a forbidden response-header name, 16 a
  // no-CORS-safelisted request-header, 32 a privileged no-CORS request-header name.
  unsigned long headerInfo(ByteString name, ByteString value);
  // UTF-8 encode (https://encoding.spec.whatwg.org/#utf-8-encode; lone surrogates are
  // U+FFFD) and UTF-8 decode (a leading BOM removed, bad bytes U+FFFD).
  ByteString utf8Encode(DOMString text);
  DOMString utf8Decode(ByteString bytes);
  // The MIME type extracted from a Content-Type value, serialised, or "" on failure
  // (https://fetch.spec.whatwg.org/#concept-header-extract-mime-type).
  DOMString extractMimeType(ByteString contentType);
  // An XMLHttpRequest author's Content-Type for a string body: the MIME type with its
  // charset parameters set to UTF-8, serialised, or "" when it has none to change (or does
  // not parse) (https://xhr.spec.whatwg.org/#the-send()-method, step 4.5).
  DOMString charsetToUTF8(ByteString contentType);

  // Frames: the iframe element `index` of the current document navigates to `url`
  // (`sandboxed`: an opaque origin), or is removed.
  undefined loadFrame(unsigned long index, DOMString url, boolean sandboxed);
  undefined discardFrame(unsigned long index);

  // Whether `url` is same-origin with the current document.
  boolean sameOrigin(DOMString url);
  // The window tree around window `target`: its parent (what = -1), top (-2), number of child
  // frames (-3), or its child frame number `what`; -1 for none. `what` is a property key
  // turned into a number, so it may be anything: a non-integer names no frame.
  long long frameTree(unsigned long target, unrestricted double what);
  // The serialised origin of window `target`'s document.
  DOMString windowOrigin(unsigned long target);
  // postMessage from window `from` to window `to` (serialised data); negative indexes name
  // no window and post nothing.
  undefined windowPost(long long to, DOMString data, DOMString targetOrigin, long long from);

  // A script element inserted by script: element `index`, fetched from `url`, or an inline
  // module given its `text`; `crossorigin` is the attribute's value, null without one.
  undefined loadScript(unsigned long index, DOMString url, boolean module,
                       DOMString? crossorigin, optional DOMString? text);

  // Dedicated workers: start worker `id` from `url` (or from `source`, a blob's text),
  // post to it (id -1: from a worker to its parent), terminate it, report its error.
  undefined workerStart(unsigned long id, DOMString url, DOMString? source);
  undefined workerPost(long long id, DOMString data);
  undefined workerTerminate(long long id);
  undefined workerError(DOMString message, DOMString filename, unsigned long line,
                        unsigned long column);

  // MessagePorts: a new pair, an end attached to the current agent, a message sent.
  unsigned long long portOpen();
  undefined portAttach(unsigned long long pid, octet end);
  undefined portSend(unsigned long long pid, octet end, DOMString data);

  // WebDriver: the answer to command `id` the engine handed this window
  // (hooks.webdriver): `error` is "" and `value` the result as JSON, or `error` is the
  // spec's error code and `value` a message.
  undefined webdriverReply(unsigned long id, DOMString error, DOMString value);
};

// A request of fetch() or XMLHttpRequest, as the prelude made it: the method normalised and
// allowed, the URL parsed, the header list through its Headers' guard, the body's bytes.
dictionary JsprofFetchRequest {
  required ByteString method;
  required DOMString url;
  // The header list, one "name:value" line per header ("\n" after each).
  required ByteString headers;
  ByteString body;
  required RequestMode mode;
  required RequestCredentials credentials;
  required RequestRedirect redirect;
  // The use-CORS-preflight flag (an XMLHttpRequest with upload listeners).
  required boolean useCorsPreflight;
  // A synchronous request's timeout in ms (0: none).
  unsigned long timeout;
};

// https://fetch.spec.whatwg.org/#requestmode and the two after it.
enum RequestMode { "navigate", "same-origin", "no-cors", "cors" };
enum RequestCredentials { "omit", "same-origin", "include" };
enum RequestRedirect { "follow", "error", "manual" };
