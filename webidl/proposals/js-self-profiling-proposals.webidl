// Proposals beyond the JS Self-Profiling API that sites using it ask for (issue 28), all
// behind the pref `dom.profiler.proposals.enabled` (off by default: without it, pages see
// exactly the spec's API, and these dictionary members are not even read).
//
// - `format`: the trace format of the engine design (seed 004, "json-gzip": the serialised
//   trace, gzipped, in an ArrayBuffer). With "json-gzip", `stop()` and `restart()` resolve
//   with an ArrayBuffer, not a ProfilerTrace (the promise types stay as the spec's: a union
//   with ArrayBuffer is what they would be).
// - `bufferPolicy`: a circular sample buffer (https://github.com/WICG/js-self-profiling/issues/81).
// - `restart()`: the trace so far, sampling going on into a fresh buffer
//   (https://github.com/WICG/js-self-profiling/issues/90).

enum ProfilerTraceFormat { "json", "json-gzip" };

enum ProfilerBufferPolicy { "stop", "ring" };

partial dictionary ProfilerInitOptions {
  [Pref="dom.profiler.proposals.enabled"] ProfilerTraceFormat format;
  [Pref="dom.profiler.proposals.enabled"] ProfilerBufferPolicy bufferPolicy;
};

partial interface Profiler {
  [Pref="dom.profiler.proposals.enabled"] Promise<ProfilerTrace> restart();
};
