// META: title=iframes: a child browsing context per <iframe src>
"use strict";

promise_test(async () => {
  const iframe = document.createElement("iframe");
  const loaded = new Promise((resolve) => iframe.addEventListener("load", resolve));
  iframe.src = "/js-self-profiling/resources/iframe-spin.html";
  document.body.appendChild(iframe);
  await loaded;
  assert_equals(frames.length, 1);
  assert_equals(frames[0], iframe.contentWindow);
  assert_equals(iframe.contentWindow.parent, window);
  assert_equals(iframe.contentWindow.top, window);
  assert_not_equals(iframe.contentWindow.Array, Array, "its own realm");
  assert_equals(typeof iframe.contentWindow.iframeSpin, "function");
  assert_equals(iframe.contentDocument, iframe.contentWindow.document);
  assert_equals(top, window, "the top window is its own top");
  // Its navigation started after ours: its own time origin.
  assert_greater_than(iframe.contentWindow.performance.timeOrigin, performance.timeOrigin);
  assert_less_than(iframe.contentWindow.performance.now(), performance.now());
}, "an iframe gets its own document and realm, on the parent's event loop");

promise_test(async () => {
  const iframe = document.createElement("iframe");
  const first = new Promise((resolve) => window.addEventListener("message", resolve, { once: true }));
  iframe.src = "resources/post-to-parent.html";
  document.body.appendChild(iframe);
  const e = await first;
  assert_equals(e.data, "hello from the iframe");
  assert_equals(e.source, iframe.contentWindow, "source: the window whose script posted");
  assert_equals(e.origin, location.origin);
  const answer = new Promise((resolve) => window.addEventListener("message", resolve, { once: true }));
  iframe.contentWindow.postMessage("ping", "*");
  const r = (await answer).data;
  assert_true(r.sourceIsParent, "the iframe saw its parent as the source");
  assert_equals(r.data, "ping");
}, "postMessage between windows: source and origin are the sender's");
