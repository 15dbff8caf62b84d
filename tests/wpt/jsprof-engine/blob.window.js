// META: title=Blob and blob: URLs
"use strict";

promise_test(async () => {
  const b = new Blob(["héllo ", new Blob(["world"])], { type: "Text/Plain" });
  assert_equals(b.type, "text/plain");
  assert_equals(b.size, 12, "UTF-8 bytes");
  assert_equals(await b.text(), "héllo world");
}, "a Blob holds its parts' text");

promise_test(async (t) => {
  const url = URL.createObjectURL(new Blob(['{"x": 1}'], { type: "application/json" }));
  assert_true(url.startsWith("blob:" + location.origin + "/"));
  const r = await fetch(url);
  assert_equals((await r.json()).x, 1);
  URL.revokeObjectURL(url);
  await promise_rejects_js(t, TypeError, fetch(url));
}, "a blob: URL can be fetched until it is revoked");
