// META: global=window,dedicatedworker
// META: title=XMLHttpRequest: every method and body, synchronous and asynchronous, with CORS and its preflight
// META: script=resources/helpers.sub.js
"use strict";

// Sends `body` asynchronously; resolves with the request and the events it fired, once done.
function send(method, url, body, { headers = [], responseType = "arraybuffer", withCredentials = false, upload = false } = {}) {
  return new Promise((resolve) => {
    const x = new XMLHttpRequest();
    const events = [];
    for (const type of ["loadstart", "progress", "load", "error", "abort", "timeout", "loadend"]) {
      x.addEventListener(type, (e) => events.push(type));
    }
    x.onreadystatechange = () => events.push(`rs${x.readyState}`);
    if (upload) for (const type of ["loadstart", "progress", "load", "loadend"]) x.upload.addEventListener(type, () => events.push(`upload.${type}`));
    x.open(method, url);
    for (const [n, v] of headers) x.setRequestHeader(n, v);
    x.responseType = responseType;
    x.withCredentials = withCredentials;
    x.onloadend = () => resolve({ x, events });
    x.send(body);
  });
}

for (const { name, body, bytes, type } of bodyCases()) {
  for (const [where, url] of destinations()) {
    const preflighted = where !== "same-origin" && !safelistedType(type);
    promise_test(async () => {
      const { x, events } = await send("POST", url(), body);
      assert_equals(x.status, 200);
      assert_equals(x.getResponseHeader("X-Method"), "POST");
      assert_equals(x.getResponseHeader("X-Content-Type"), type);
      assert_equals(x.getResponseHeader("X-Preflights"), preflighted ? "1" : "0");
      sameBytes(x.response, bytes);
      assert_equals(events.join(), "rs1,loadstart,rs2,rs3,progress,progress,rs4,load,loadend");
    }, `asynchronous POST with ${name}, ${where}`);
    test(() => {
      const x = new XMLHttpRequest();
      x.open("POST", url(), false);
      x.send(body);
      assert_equals(x.status, 200);
      assert_equals(x.getResponseHeader("X-Content-Type"), type);
      // A synchronous request in a window cannot ask for an ArrayBuffer: the server says in
      // hex what it got.
      assert_equals(x.getResponseHeader("X-Body-Hex"), hex(bytes));
      assert_equals(x.getResponseHeader("X-Preflights"), preflighted ? "1" : "0");
    }, `synchronous POST with ${name}, ${where}`);
  }
}

promise_test(async () => {
  for (const method of ["PUT", "PATCH", "DELETE", "Custom"]) {
    const { x } = await send(method, ECHO, "payload", { responseType: "text" });
    assert_equals(x.getResponseHeader("X-Method"), method);
    assert_equals(x.responseText, "payload");
  }
  const { x } = await send("GET", ECHO, "dropped", { responseType: "text" });
  assert_equals(x.responseText, "", "GET sends no body");
}, "any method, and GET without its body");

promise_test(async () => {
  const { x } = await send("POST", ECHO, "x", { headers: [["Content-Type", "text/plain; charset=latin1"]] });
  assert_equals(x.getResponseHeader("X-Content-Type"), "text/plain;charset=UTF-8", "a string body's charset is UTF-8");
  const keep = await send("POST", ECHO, new Blob(["x"]), { headers: [["Content-Type", "text/plain; charset=latin1"]] });
  assert_equals(keep.x.getResponseHeader("X-Content-Type"), "text/plain; charset=latin1", "other bodies keep it");
  const combined = await send("POST", ECHO, null, { headers: [["X-A", "1"], ["x-a", "2"], ["Accept", "a"], ["Content-Length", "5"], ["Origin", "x"], ["Sec-Foo", "1"]] });
  assert_equals(combined.x.getResponseHeader("X-Accept"), "a");
  assert_equals(combined.x.getResponseHeader("X-Origin"), location.origin, "forbidden headers are ignored");
}, "request headers: Content-Type and charset, combined values, forbidden names ignored");

promise_test(async () => {
  const { x } = await send("POST", ECHO, '{"a": "\u00e9"}', { responseType: "json" });
  assert_equals(x.response.a, "\u00e9");
  const blob = await send("POST", ECHO, "b", { responseType: "blob" });
  assert_true(blob.x.response instanceof Blob);
  assert_equals(blob.x.response.type, "application/octet-stream");
  assert_equals(await blob.x.response.text(), "b");
  const text = await send("POST", ECHO, "\u2603", { responseType: "" });
  assert_equals(text.x.response, "\u2603");
  assert_equals(text.x.getAllResponseHeaders().split("\r\n").filter((l) => l.startsWith("x-method: ")).join(), "x-method: POST");
}, "response types and headers");

promise_test(async () => {
  const { x, events } = await send("PUT", echo(OTHER_ECHO, { token: newToken(), acao: "*", methods: "PUT", headers: "x-a" }), "x", { headers: [["X-A", "1"]], responseType: "text" });
  assert_equals(x.status, 200);
  assert_equals(x.getResponseHeader("X-Preflights"), "1");
  assert_equals(x.getResponseHeader("X-ACRH"), "x-a");
  assert_equals(x.responseText, "x");
  assert_equals(events[events.length - 1], "loadend");
}, "a cross-origin PUT with a custom header, allowed by its preflight");

promise_test(async () => {
  const token = newToken();
  const { x, events } = await send("POST", echo(OTHER_ECHO, { token, acao: "*" }), "up", { upload: true, responseType: "text" });
  assert_equals(x.getResponseHeader("X-Preflights"), "1", "upload listeners make even a simple request preflight");
  assert_equals(x.getResponseHeader("X-ACRM"), "POST");
  assert_equals(events.filter((e) => e.startsWith("upload.")).join(), "upload.loadstart,upload.progress,upload.load,upload.loadend");
}, "upload listeners: the use-CORS-preflight flag and upload events");

const failing = [
  ["the preflight answers 300", { acao: "*", methods: "PUT", preflight_status: 300 }],
  ["the preflight is redirected", { acao: "*", methods: "PUT", preflight_redirect: "" }],
  ["the method is not allowed", { acao: "*", methods: "DELETE" }],
  ["no Access-Control-Allow-Origin", { methods: "PUT" }],
  ["`*` origin with credentials", { acao: "*", acac: "", methods: "PUT" }, true],
  ["`*` methods with credentials", { acao: "origin", acac: "", methods: "*" }, true],
  ["no Access-Control-Allow-Credentials with credentials", { acao: "origin", methods: "PUT" }, true],
];
for (const [what, params, withCredentials] of failing) {
  promise_test(async () => {
    const { x, events } = await send("PUT", echo(OTHER_ECHO, params), "never sent", { withCredentials: !!withCredentials });
    assert_equals(x.status, 0);
    assert_equals(x.readyState, 4);
    assert_equals(events.join(), "rs1,loadstart,rs4,error,loadend");
  }, `asynchronous: fails when ${what}`);
  test(() => {
    const x = new XMLHttpRequest();
    x.open("PUT", echo(OTHER_ECHO, params), false);
    x.withCredentials = !!withCredentials;
    assert_throws_dom("NetworkError", () => x.send("never sent"));
    assert_equals(x.status, 0);
  }, `synchronous: fails when ${what}`);
}
for (const [what, params, headers] of [
  ["a header is not allowed", { acao: "*", headers: "x-a" }, [["X-B", "1"]]],
  ["Authorization under `*`", { acao: "*", headers: "*" }, [["Authorization", "x"]]],
]) {
  promise_test(async () => {
    const { x, events } = await send("GET", echo(OTHER_ECHO, params), null, { headers });
    assert_equals(events.join(), "rs1,loadstart,rs4,error,loadend", what);
    assert_equals(x.status, 0);
  }, `asynchronous: fails when ${what}`);
}

test(() => {
  const x = new XMLHttpRequest();
  assert_throws_dom("InvalidStateError", () => x.setRequestHeader("X-A", "1"));
  x.open("GET", ECHO);
  assert_throws_dom("SyntaxError", () => x.setRequestHeader("a b", "1"));
  assert_throws_dom("SyntaxError", () => x.setRequestHeader("X-A", "a\nb"));
  assert_throws_js(TypeError, () => x.setRequestHeader("X-A", "\u0100"));
  assert_throws_dom("SecurityError", () => x.open("CONNECT", ECHO));
  assert_throws_dom("SyntaxError", () => x.open("", ECHO));
  assert_throws_dom("SyntaxError", () => x.open("GET", "http://[bad"));
}, "open() and setRequestHeader() refuse what the standards refuse");

promise_test(async () => {
  const x = new XMLHttpRequest();
  x.open("POST", ECHO);
  const events = [];
  x.onreadystatechange = () => events.push(`rs${x.readyState}`);
  x.onabort = () => events.push("abort");
  x.onloadend = () => events.push("loadend");
  x.onload = () => events.push("load");
  x.send("x");
  x.abort();
  assert_equals(x.readyState, 0, "done, then unsent");
  assert_equals(events.join(), "rs4,abort,loadend");
  // The response, had it come, is ignored (a wait that can only hide a failure, not make one).
  await fetch(ECHO);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert_equals(events.join(), "rs4,abort,loadend");
}, "abort() ends a request at once");

promise_test(async () => {
  // The server answers after 5 s; the request gives up after 100 ms.
  const x = new XMLHttpRequest();
  const events = [];
  for (const type of ["load", "error", "timeout", "loadend"]) x.addEventListener(type, () => events.push(type));
  x.open("POST", echo(ECHO, { delay: 5000 }));
  x.timeout = 100;
  const done = new Promise((resolve) => { x.onloadend = resolve; });
  x.send("late");
  await done;
  assert_equals(events.join(), "timeout,loadend");
  assert_equals(x.status, 0);
  assert_equals(x.readyState, 4);
}, "an asynchronous request times out");

test(() => {
  const x = new XMLHttpRequest();
  x.open("GET", echo(ECHO, { delay: 5000 }), false);
  if (self.document) {
    // A window's synchronous requests take no timeout.
    assert_throws_dom("InvalidAccessError", () => { x.timeout = 100; });
    return;
  }
  x.timeout = 100;
  assert_throws_dom("TimeoutError", () => x.send());
  assert_equals(x.readyState, 4);
}, "a synchronous request times out in a worker, and cannot have a timeout in a window");
