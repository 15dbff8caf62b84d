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
}, "an iframe gets its own document and realm, on the parent's event loop");

promise_test(async () => {
  assert_implements(window.MessageChannel, "MessageChannel");
  const { port1, port2 } = new MessageChannel();
  const got = new Promise((resolve) => { port2.onmessage = (e) => resolve(e.data); });
  port1.postMessage({ a: 1 });
  assert_equals((await got).a, 1);
}, "MessageChannel ports carry messages");
