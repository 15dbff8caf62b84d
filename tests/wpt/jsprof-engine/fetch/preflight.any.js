// META: global=window,dedicatedworker
// META: title=fetch(): the CORS-preflight fetch, every way it fails, and its cache
// META: script=resources/helpers.sub.js
"use strict";

// A cross-origin request through the echo server with `params`; the token counts preflights.
function cross(params, init = {}) {
  const token = newToken();
  return { token, promise: fetch(echo(OTHER_ECHO, { token, ...params }), init) };
}
// How many preflights the server saw for `token` (a same-origin look at the stash).
async function preflights(token) {
  const r = await fetch(echo(OTHER_ECHO, { token, acao: "*" }));
  return r.headers.get("X-Preflights");
}

promise_test(async () => {
  for (const init of [
    {},
    { method: "HEAD" },
    { method: "POST", body: "x" },
    { method: "POST", body: new URLSearchParams("a=1") },
    { headers: { Accept: "text/html", "Accept-Language": "fr", "Content-Language": "de" } },
    { method: "POST", body: "x", headers: { "Content-Type": "multipart/form-data; boundary=x" } },
    { headers: { Range: "bytes=0-" } },
  ]) {
    const { token, promise } = cross({ acao: "*" }, init);
    const r = await promise;
    assert_equals(r.status, 200, JSON.stringify(init));
    assert_equals(await preflights(token), "0", JSON.stringify(init));
  }
}, "safelisted methods, headers and values go without a preflight");

promise_test(async () => {
  const { token, promise } = cross({ acao: "*", methods: "PUT", headers: "x-b,X-A,content-type" },
    { method: "PUT", body: new Blob(["{}"], { type: "application/json" }), headers: [["X-B", "2"], ["x-a", "1"]] });
  const r = await promise;
  assert_equals(r.headers.get("X-Method"), "PUT");
  assert_equals(r.headers.get("X-Preflights"), "1");
  assert_equals(r.headers.get("X-ACRM"), "PUT");
  assert_equals(r.headers.get("X-ACRH"), "content-type,x-a,x-b", "sorted, lowercase, no spaces");
  assert_equals(await r.text(), "{}");
}, "a method and headers beyond the safelists are preflighted, and the request follows");

promise_test(async () => {
  for (const [header, value] of [["X-Custom", "1"], ["Content-Type", "application/json"], ["Accept", "\"quoted\""], ["Range", "bytes=-5"], ["Content-Language", "@"]]) {
    const { promise } = cross({ acao: "*", headers: header }, { headers: [[header, value]] });
    const r = await promise;
    assert_equals(r.headers.get("X-Preflights"), "1", header);
    assert_equals(r.headers.get("X-ACRH"), header.toLowerCase(), header);
  }
}, "an unsafe header or value is preflighted, even with GET");

// Each must fail: the preflight's answer does not allow the request.
const failing = [
  ["the preflight answers 300", { acao: "*", methods: "PUT", preflight_status: 300 }, { method: "PUT" }],
  ["the preflight answers 404", { acao: "*", methods: "PUT", preflight_status: 404 }, { method: "PUT" }],
  ["the preflight answers 500", { acao: "*", methods: "PUT", preflight_status: 500 }, { method: "PUT" }],
  ["the preflight is redirected", { acao: "*", methods: "PUT", preflight_redirect: "" }, { method: "PUT" }],
  ["the method is not allowed", { acao: "*", methods: "DELETE" }, { method: "PUT" }],
  ["the method is allowed in another case", { acao: "*", methods: "put" }, { method: "PUT" }],
  ["a header is not allowed", { acao: "*", headers: "x-a" }, { headers: { "X-B": "1" } }],
  ["no Access-Control-Allow-Origin", { methods: "PUT" }, { method: "PUT" }],
  ["another origin is allowed", { acao: "http://example.test", methods: "PUT" }, { method: "PUT" }],
  ["`*` origin with credentials", { acao: "*", acac: "", methods: "PUT" }, { method: "PUT", credentials: "include" }],
  ["no Access-Control-Allow-Credentials with credentials", { acao: "origin", methods: "PUT" }, { method: "PUT", credentials: "include" }],
  ["`*` methods with credentials", { acao: "origin", acac: "", methods: "*" }, { method: "PUT", credentials: "include" }],
  ["`*` headers with credentials", { acao: "origin", acac: "", headers: "*" }, { headers: { "X-A": "1" }, credentials: "include" }],
  ["Authorization under `*`", { acao: "*", headers: "*" }, { headers: { Authorization: "Basic x" } }],
  ["a method list with a bad token", { acao: "*", methods: "PUT, bad method" }, { method: "PUT" }],
  ["a header list with a bad token", { acao: "*", headers: "x-a, bad header" }, { headers: { "X-A": "1" } }],
];
for (const [what, params, init] of failing) {
  promise_test(async (t) => {
    const { token, promise } = cross(params, { ...init, body: init.method === "PUT" ? "never sent" : undefined });
    await promise_rejects_js(t, TypeError, promise);
    assert_equals(await preflights(token), "1", "one preflight, and the request was not sent after it");
  }, `fails when ${what}`);
}

promise_test(async () => {
  // The same requests, allowed.
  for (const [params, init] of [
    [{ acao: "*", methods: "PUT", preflight_status: 204 }, { method: "PUT" }],
    [{ acao: "*", methods: "*" }, { method: "PUT" }],
    [{ acao: "*", headers: "*" }, { headers: { "X-B": "1" } }],
    [{ acao: "*", headers: "*, Authorization" }, { headers: { Authorization: "Basic x" } }],
    [{ acao: "origin", acac: "", methods: "PUT" }, { method: "PUT", credentials: "include" }],
    [{ acao: "origin", acac: "", headers: "X-A" }, { headers: { "X-A": "1" }, credentials: "include" }],
    [{ acao: "*", methods: "get" }, { method: "GET", headers: { "X-A": "1" } }],
  ]) {
    const { promise } = cross({ ...params, headers: params.headers ?? "x-a" }, init);
    const r = await promise;
    assert_equals(r.headers.get("X-Preflights"), "1", JSON.stringify(params));
  }
}, "what the failing cases become when the server allows them");

promise_test(async () => {
  const token = newToken();
  const url = (extra = {}) => echo(OTHER_ECHO, { token, acao: "*", methods: "PUT", headers: "x-a,x-b", max_age: 60, ...extra });
  let r = await fetch(url(), { method: "PUT", headers: { "X-A": "1" } });
  assert_equals(r.headers.get("X-Preflights"), "1");
  r = await fetch(url(), { method: "PUT", headers: { "X-B": "1" } });
  assert_equals(r.headers.get("X-Preflights"), "1", "cached: X-B was allowed too");
  r = await fetch(url({ other: 1 }), { method: "PUT" });
  assert_equals(r.headers.get("X-Preflights"), "2", "another URL is preflighted");
  const zero = newToken();
  for (let i = 1; i <= 2; i++) {
    r = await fetch(echo(OTHER_ECHO, { token: zero, acao: "*", methods: "PUT", max_age: 0 }), { method: "PUT" });
    assert_equals(r.headers.get("X-Preflights"), `${i}`, "max-age 0 caches nothing");
  }
}, "the preflight cache");

promise_test(async (t) => {
  // Same-origin, then to the other origin: the redirected request is preflighted there.
  const token = newToken();
  const to = echo(OTHER_ECHO, { token, acao: "*", headers: "x-a" });
  const r = await fetch(echo(ECHO, { redirect: 307, to }), { headers: { "X-A": "1" } });
  assert_true(r.redirected);
  assert_equals(r.headers.get("X-Preflights"), "1");
  assert_equals(r.headers.get("X-Origin"), location.origin);
  // Refused there: the whole fetch fails.
  const refused = echo(OTHER_ECHO, { token: newToken(), acao: "*" });
  await promise_rejects_js(t, TypeError, fetch(echo(ECHO, { redirect: 307, to: refused }), { headers: { "X-A": "1" } }));
}, "a redirect to another origin is preflighted at its new URL");

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, fetch(echo(OTHER_ECHO, { acao: "*" }), { mode: "no-cors", method: "PUT" }));
  const r = await fetch(echo(OTHER_ECHO, {}), { mode: "no-cors", method: "POST", body: "x", headers: { "X-A": "1", "Content-Type": "text/plain" } });
  assert_equals(r.type, "opaque");
  assert_equals(r.status, 0);
  assert_equals(await r.text(), "");
  await promise_rejects_js(t, TypeError, fetch(echo(OTHER_ECHO, {}), { mode: "no-cors", redirect: "manual" }));
}, "no-cors: safelisted methods only, never a preflight, an opaque response");
