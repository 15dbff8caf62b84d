// META: global=window,dedicatedworker
// META: title=fetch(): every method and body, same-origin and cross-origin with CORS
// META: script=resources/helpers.sub.js
"use strict";

for (const { name, body, bytes, type } of bodyCases()) {
  for (const [where, url] of destinations()) {
    promise_test(async () => {
      const r = await fetch(url(), { method: "POST", body });
      assert_equals(r.status, 200);
      assert_equals(r.headers.get("X-Method"), "POST");
      assert_equals(r.headers.get("X-Content-Type"), type, "the Content-Type extracting the body gave");
      const preflighted = where !== "same-origin" && !safelistedType(type);
      assert_equals(r.headers.get("X-Preflights"), preflighted ? "1" : "0", "preflighted only for another Content-Type");
      sameBytes(await r.arrayBuffer(), bytes, "the bytes the server got, and sent back");
    }, `POST with ${name}, ${where}`);
  }
}

promise_test(async () => {
  const bytes = allBytes();
  for (const method of ["PUT", "PATCH", "DELETE", "OPTIONS", "put", "Custom"]) {
    const r = await fetch(ECHO, { method, body: bytes });
    const normalised = ["put"].includes(method) ? method.toUpperCase() : method;
    assert_equals(r.headers.get("X-Method"), normalised, method);
    sameBytes(await r.arrayBuffer(), bytes, method);
  }
}, "other methods carry their bodies (same-origin), names normalised as the standard says");

promise_test(async () => {
  const r = await fetch(ECHO, { method: "POST", body: "x", headers: { "Content-Type": "application/json" } });
  assert_equals(r.headers.get("X-Content-Type"), "application/json");
  const blob = await fetch(ECHO, { method: "POST", body: new Blob(["x"], { type: "text/html" }), headers: [["content-type", "text/csv"]] });
  assert_equals(blob.headers.get("X-Content-Type"), "text/csv");
}, "an author's Content-Type wins over the body's");

promise_test(async (t) => {
  for (const method of ["GET", "HEAD", "get"]) {
    await promise_rejects_js(t, TypeError, fetch(ECHO, { method, body: "x" }), method);
  }
  const r = await fetch(ECHO, { method: "GET", body: null });
  assert_equals(r.headers.get("X-Method"), "GET");
}, "GET and HEAD with a body are TypeErrors");

promise_test(async (t) => {
  for (const method of ["CONNECT", "trace", "Track"]) {
    await promise_rejects_js(t, TypeError, fetch(ECHO, { method }), method);
  }
  await promise_rejects_js(t, TypeError, fetch(ECHO, { method: "a b" }));
  await promise_rejects_js(t, TypeError, fetch(ECHO, { method: "\u0100" }));
}, "forbidden methods, and methods that are not tokens, are TypeErrors");

promise_test(async () => {
  const r = await fetch(ECHO, { method: "HEAD" });
  assert_equals(r.status, 200);
  assert_equals(await r.text(), "");
}, "HEAD has no response body");

promise_test(async () => {
  const bytes = allBytes();
  const r = await fetch(ECHO, { method: "POST", body: bytes });
  const copy = r.clone();
  sameBytes(await (await r.blob()).arrayBuffer(), bytes, "blob()");
  assert_true(r.bodyUsed);
  const view = await copy.bytes();
  assert_true(view instanceof Uint8Array);
  sameBytes(view.buffer, bytes, "bytes() of the clone");
  const text = await (await fetch(ECHO, { method: "POST", body: "\ufeff\u00e9\u2603" })).text();
  assert_equals(text, "\u00e9\u2603", "UTF-8 decode drops the BOM");
  const json = await (await fetch(ECHO, { method: "POST", body: '{"a":[1,"\u00e9"]}' })).json();
  assert_equals(json.a[1], "\u00e9");
  const blob = await (await fetch(ECHO, { method: "POST", body: new Blob(["x"], { type: "text/plain" }) })).blob();
  assert_equals(blob.type, "application/octet-stream", "the response's Content-Type");
}, "response bodies as bytes, a Blob, text and JSON");

promise_test(async (t) => {
  const r = await fetch(ECHO, { method: "POST", body: "once" });
  await r.text();
  await promise_rejects_js(t, TypeError, r.text());
  assert_throws_js(TypeError, () => r.clone());
}, "a body is read once");

promise_test(async () => {
  const request = new Request(ECHO, { method: "POST", body: "from a Request", headers: { "X-A": "1" } });
  assert_equals(request.method, "POST");
  assert_equals(request.headers.get("content-type"), "text/plain;charset=UTF-8");
  const r = await fetch(request);
  assert_true(request.bodyUsed, "fetch() used the Request's body");
  assert_equals(await r.text(), "from a Request");
}, "fetch() of a Request with a body");

promise_test(async () => {
  const to = echo(ECHO, {});
  for (const [status, method, sent] of [[307, "POST", "POST"], [308, "PUT", "PUT"], [301, "POST", "GET"], [302, "POST", "GET"], [303, "PUT", "GET"], [301, "PUT", "PUT"]]) {
    const r = await fetch(echo(ECHO, { redirect: status, to }), { method, body: "payload" });
    assert_true(r.redirected, `${status}`);
    assert_equals(r.headers.get("X-Method"), sent, `${status} ${method}`);
    assert_equals(await r.text(), sent === "GET" ? "" : "payload", `${status} ${method}`);
    assert_equals(r.headers.get("X-Content-Type"), sent === "GET" ? "" : "text/plain;charset=UTF-8");
  }
}, "307 and 308 send the body again; 301 and 302 of a POST, and 303, become a GET without it");

promise_test(async () => {
  const r = await fetch(echo(OTHER_ECHO, { acao: "*" }), { method: "POST", body: "x" });
  assert_equals(r.headers.get("X-Origin"), location.origin);
  const same = await fetch(ECHO);
  assert_equals(same.headers.get("X-Origin"), "", "no Origin on a same-origin GET");
  const post = await fetch(ECHO, { method: "POST" });
  assert_equals(post.headers.get("X-Origin"), location.origin, "Origin on a same-origin POST");
  assert_equals(post.headers.get("X-Accept"), "*/*");
}, "the Origin and Accept headers the engine adds");
