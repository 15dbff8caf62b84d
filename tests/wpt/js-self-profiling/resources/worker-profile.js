// Profiles itself in a dedicated worker and posts the outcome: the trace's frame names, or the
// exception's name.
function workerSpin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}
self.onmessage = async () => {
  try {
    const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
    workerSpin(300);
    const trace = await profiler.stop();
    postMessage({ names: trace.frames.map((f) => f.name) });
  } catch (e) {
    postMessage({ error: e.name });
  }
};
