// META: title=fetch() through the engine's loader (GET, text(), json(), CORS)
"use strict";

const base = "/js-self-profiling/resources/";
const alt = "http://{{hosts[alt][]}}:{{ports[http][0]}}" + base;

promise_test(async () => {
  const r = await fetch(base + "data.json");
  assert_true(r.ok);
  assert_equals(r.status, 200);
  assert_equals(r.url, new URL(base + "data.json", location.href).href);
  assert_equals((await r.json()).answer, 42);
}, "a same-origin GET gives a Response whose json() parses");

promise_test(async () => {
  const r = await fetch(base + "data.json");
  const text = await r.text();
  assert_true(text.includes('"answer"'));
  assert_true(r.bodyUsed);
}, "text() gives the body");

promise_test(async (t) => {
  await promise_rejects_js(t, TypeError, fetch(alt + "data.json"));
}, "a cross-origin response without Access-Control-Allow-Origin is a network error");

promise_test(async () => {
  const r = await fetch(alt + "data-cors.json");
  assert_equals((await r.json()).list.length, 3);
}, "a cross-origin response with Access-Control-Allow-Origin is readable");

promise_test(async () => {
  const r = await fetch("/common/redirect.py?location=" + encodeURIComponent(base + "data.json"));
  assert_equals(r.url, new URL(base + "data.json", location.href).href, "the final URL");
  assert_equals((await r.json()).answer, 42);
}, "redirects are followed (/common/redirect.py)");
