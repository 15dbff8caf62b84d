// Helpers for jsprof's own js-self-profiling tests (written for this repository).
(function (global) {
  // Spins for `ms` milliseconds of wall time so that samples land while script runs.
  function spin(ms) {
    const end = performance.now() + ms;
    let x = 0;
    while (performance.now() < end) x++;
    return x;
  }

  // Runs `fn` under a new profiler and resolves with the trace.
  async function profile(fn, options = { sampleInterval: 10, maxBufferSize: 10000 }) {
    const profiler = new Profiler(options);
    fn();
    return profiler.stop();
  }

  // The frames of `sample`, outermost first, as plain objects with the resource's URL.
  function framesOf(trace, sample) {
    const out = [];
    for (let id = sample.stackId; id !== undefined; id = trace.stacks[id].parentId) {
      const frame = trace.frames[trace.stacks[id].frameId];
      out.unshift(Object.assign({}, frame, {
        url: frame.resourceId === undefined ? undefined : trace.resources[frame.resourceId],
      }));
    }
    return out;
  }

  // What `sample`'s frames say (name, line, column, url), outermost first, as a string that
  // compares across traces: each trace numbers its own frames and resources.
  function frameText(trace, sample) {
    return JSON.stringify(framesOf(trace, sample).map(({ name, line, column, url }) => ({ name, line, column, url })));
  }

  // Whether some frame matches every property of `want` (name, line, column, url).
  function containsFrame(trace, want) {
    return trace.frames.some((f) => {
      const url = f.resourceId === undefined ? undefined : trace.resources[f.resourceId];
      return Object.entries(want).every(([k, v]) => (k === "url" ? url : f[k]) === v);
    });
  }

  // Whether some sample's stack is exactly `names`, outermost first.
  function containsStack(trace, names) {
    return trace.samples.some((s) => {
      const frames = framesOf(trace, s).map((f) => f.name);
      return frames.length === names.length && frames.every((n, i) => n === names[i]);
    });
  }

  global.ProfilingUtils = { spin, profile, framesOf, frameText, containsFrame, containsStack };
})(self);
