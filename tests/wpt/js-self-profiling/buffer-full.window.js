// META: title=A full buffer fires samplebufferfull once; stop() still resolves
// META: script=resources/profiling-utils.js
"use strict";

for (const maxBufferSize of [1, 2]) {
  promise_test(async () => {
    const profiler = new Profiler({ sampleInterval: 10, maxBufferSize });
    let events = 0;
    const full = new Promise((resolve) => {
      profiler.addEventListener("samplebufferfull", (e) => {
        events++;
        assert_equals(e.type, "samplebufferfull");
        assert_true(e instanceof Event);
        resolve(profiler.stop());
      });
    });
    ProfilingUtils.spin(510);
    const trace = await full;
    assert_equals(trace.samples.length, maxBufferSize);
    await new Promise((r) => setTimeout(r, 50));
    assert_equals(events, 1, "fired once");
  }, `maxBufferSize ${maxBufferSize}`);
}

test(() => {
  assert_false("onsamplebufferfull" in Profiler.prototype);
}, "there is no onsamplebufferfull attribute");
