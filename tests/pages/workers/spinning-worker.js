// One of spinning.html's workers: profiles itself at 1 ms while it spins for 200 ms.
const profiler = new Profiler({ sampleInterval: 1, maxBufferSize: 10000 });
const start = performance.now();
let x = 0;
while (performance.now() - start < 200) x++;
const spun = performance.now() - start;
profiler.stop().then((trace) => {
  const withStack = trace.samples.filter((s) => s.stackId !== undefined).length;
  postMessage({ samples: trace.samples.length, withStack, spunMs: Math.round(spun) });
});
