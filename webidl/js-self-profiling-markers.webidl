// The markers extension of the JS Self-Profiling API (markers.md in the spec repository,
// https://github.com/WICG/js-self-profiling/blob/main/markers.md): what the agent was doing
// when a sample was taken. Which markers a context sees follows Microsoft Edge's
// "Conditional Marker Exposure" explainer (see ARCHITECTURE.md, "Markers").

enum ProfilerMarker { "script", "gc", "style", "layout", "paint", "other" };

partial dictionary ProfilerSample {
  ProfilerMarker marker;
};
