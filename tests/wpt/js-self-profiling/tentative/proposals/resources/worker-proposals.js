// The proposals in a dedicated worker (its script response allows js-profiling): posts what
// the test asks for.
function workerWork(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}
self.onmessage = async (e) => {
  try {
    if (e.data === "gzip") {
      const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000, format: "json-gzip" });
      workerWork(300);
      const buffer = await profiler.stop();
      postMessage({ buffer, isBuffer: buffer instanceof ArrayBuffer });
    } else if (e.data === "restart") {
      const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
      const traces = [];
      for (let i = 0; i < 40; i++) {
        workerWork(35 + (i * 13) % 41);
        traces.push(await profiler.restart());
      }
      traces.push(await profiler.stop());
      postMessage({ traces, interval: profiler.sampleInterval });
    } else if (e.data === "ring") {
      let fired = 0;
      const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 5, bufferPolicy: "ring" });
      profiler.addEventListener("samplebufferfull", () => fired++);
      workerWork(300);
      const trace = await profiler.stop();
      postMessage({ trace, fired });
    }
  } catch (err) {
    postMessage({ error: `${err.name}: ${err.message}` });
  }
};
