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
  assert_greater_than(trace.samples.length, 0, "samples were taken while the iframe spun");
  assert_false(trace.frames.some((f) => f.name === "iframeSpin"), "no frame of the iframe's realm");
  assert_false(trace.resources.some((r) => r.includes("iframe-spin.html")), "no resource of the iframe");
}, "a same-origin iframe's frames do not appear in its parent's trace");

promise_test(async () => {
  const iframe = document.createElement("iframe");
  const loaded = new Promise((resolve) => iframe.addEventListener("load", resolve));
  iframe.src = "resources/iframe-spin.html";
  document.body.appendChild(iframe);
  await loaded;
  // Same origin, same agent: the parent calls the iframe's function synchronously, so the
  // iframe's frame is on the very stacks the parent's profiler samples.
  const iframeSpin = iframe.contentWindow.iframeSpin;
  function callsIntoIframe() { iframeSpin(300); }

  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  callsIntoIframe();
  const trace = await profiler.stop();
  assert_true(trace.frames.some((f) => f.name === "callsIntoIframe"),
              "the parent's frame is kept: " + trace.frames.map((f) => f.name).join());
  assert_false(trace.frames.some((f) => f.name === "iframeSpin"), "the iframe's frame is skipped");
  assert_false(trace.resources.some((r) => r.includes("iframe-spin.html")), "no resource of the iframe");
  // Filtering is per frame: samples taken inside iframeSpin end at the parent's frame.
  const leaves = trace.samples.filter((s) => s.stackId !== undefined)
    .map((s) => trace.frames[trace.stacks[s.stackId].frameId].name);
  assert_true(leaves.includes("callsIntoIframe"), "some sample's leaf is the parent's caller");
}, "an iframe's function called by its parent: the parent's frames stay, the iframe's realm's are skipped");
