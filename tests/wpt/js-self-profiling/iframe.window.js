// META: title=Frames of a same-origin iframe's realm stay out of the parent's trace
"use strict";

promise_test(async () => {
  assert_implements(window.MessageChannel, "MessageChannel");
  const iframe = document.createElement("iframe");
  const loaded = new Promise((resolve) => iframe.addEventListener("load", resolve));
  iframe.src = "resources/iframe-spin.html";
  document.body.appendChild(iframe);
  await loaded;
  assert_equals(frames[0], iframe.contentWindow);

  const channel = new MessageChannel();
  const next = () => new Promise((resolve) => { channel.port1.onmessage = (e) => resolve(e.data); });
  let message = next();
  frames[0].postMessage("start", "*", [channel.port2]);
  assert_equals(await message, "ready");

  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  message = next();
  channel.port1.postMessage("spin");
  assert_equals(await message, "done");
  const trace = await profiler.stop();
  assert_false(trace.frames.some((f) => f.name === "iframeSpin"), "no frame of the iframe's realm");
  assert_false(trace.resources.some((r) => r.includes("iframe-spin.html")), "no resource of the iframe");
}, "a same-origin iframe's frames do not appear in its parent's trace");
